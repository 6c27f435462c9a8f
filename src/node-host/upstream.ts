// `--upstream URL`: an OpenAI-compatible server (sglang, vLLM, …) that answers for every model this host cannot
// serve locally. A request naming such a model is forwarded as it came (`POST {upstream}/v1/responses`, the same
// body bytes) and the answer streamed back unchanged, byte for byte. On the way through, a stored response
// (`store` not false) is also written to this host's store, so that GET /v1/responses/{id} and input_items answer
// it here and `previous_response_id` chains can continue from it; the upstream keeps its own copy too.
import type { JsonValue, ResponseStore } from '../store/types.ts';

export interface UpstreamOptions {
  /** The upstream's base URL, with or without a trailing `/v1`. */
  url: string;
  /** Sent as `Authorization: Bearer …`; without it the client's own Authorization goes through (when passThroughAuth). */
  apiKey?: string;
  /** Whether the client's Authorization header is forwarded when there is no apiKey (false when this host checks its own key). */
  passThroughAuth?: boolean;
  store?: ResponseStore;
  fetch?: typeof fetch;
  /** Diagnostic lines (an unreachable upstream, a record that could not be stored). */
  log?: (line: string) => void;
}

export interface UpstreamModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

export interface Upstream {
  readonly base: string;
  /** The upstream's GET /v1/models data ([] with a logged line when it cannot be read). */
  models(signal?: AbortSignal): Promise<UpstreamModel[]>;
  /**
   * Forwards `request` (its body already read as `body`) to the same path upstream and returns the answer as it
   * streams in. `parsed` is the body as JSON, for storing what comes back.
   */
  forward(request: Request, body: Uint8Array | null, parsed: { [key: string]: unknown } | null, signal: AbortSignal): Promise<Response>;
}

/** Request headers never forwarded: hop-by-hop, this host's own, and the browser's. */
const DROP_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'accept-encoding',
  'authorization',
  'cookie',
  'origin',
  'referer',
  'proxy-authorization',
  'te',
  'trailer',
]);
/** Response headers not copied back: what fetch already undid (encoding, length) and hop-by-hop ones. */
const DROP_RESPONSE_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

export function createUpstream(options: UpstreamOptions): Upstream {
  const base = options.url.replace(/\/+$/, '').replace(/\/v1$/, '');
  const doFetch = options.fetch ?? fetch;
  const log = options.log ?? (() => undefined);

  function headersFor(request: Request | null): Headers {
    const headers = new Headers();
    if (request) {
      request.headers.forEach((value, name) => {
        if (!DROP_REQUEST_HEADERS.has(name) && !name.startsWith('sec-')) headers.set(name, value);
      });
      const auth = request.headers.get('authorization');
      if (!options.apiKey && options.passThroughAuth && auth) headers.set('authorization', auth);
    }
    if (options.apiKey) headers.set('authorization', `Bearer ${options.apiKey}`);
    headers.set('accept-encoding', 'identity');
    return headers;
  }

  return {
    base,

    async models(signal) {
      try {
        const response = await doFetch(`${base}/v1/models`, { headers: headersFor(null), signal: signal ?? AbortSignal.timeout(10_000) });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const body = (await response.json()) as { data?: unknown };
        if (!Array.isArray(body.data)) throw new Error('no data list');
        return body.data
          .filter((m): m is { id: string } & Record<string, unknown> => typeof m === 'object' && m !== null && typeof (m as { id?: unknown }).id === 'string')
          .map((m) => ({
            id: m.id,
            object: 'model' as const,
            created: typeof m.created === 'number' ? m.created : 0,
            owned_by: typeof m.owned_by === 'string' ? m.owned_by : 'upstream',
          }));
      } catch (error) {
        log(`upstream ${base}: GET /v1/models failed (${error instanceof Error ? error.message : String(error)}); listing local models only`);
        return [];
      }
    },

    async forward(request, body, parsed, signal) {
      const url = new URL(request.url);
      const answer = await doFetch(`${base}${url.pathname}${url.search}`, {
        method: request.method,
        headers: headersFor(request),
        body: body === null ? undefined : (body as Uint8Array<ArrayBuffer>),
        signal,
        redirect: 'manual',
      });
      const headers = new Headers();
      answer.headers.forEach((value, name) => {
        if (!DROP_RESPONSE_HEADERS.has(name)) headers.set(name, value);
      });
      const storing =
        options.store !== undefined &&
        request.method === 'POST' &&
        /\/v1\/responses\/?$/.test(url.pathname) &&
        answer.ok &&
        answer.body !== null &&
        parsed !== null &&
        parsed.store !== false;
      if (!storing || answer.body === null) return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers });
      const [toClient, toStore] = answer.body.tee();
      const isStream = (answer.headers.get('content-type') ?? '').includes('text/event-stream');
      void finalResponseOf(toStore, isStream)
        .then((final) => (final ? record(options.store!, parsed!, final) : undefined))
        .catch((error: unknown) => log(`upstream response not stored: ${error instanceof Error ? error.message : String(error)}`));
      return new Response(toClient, { status: answer.status, statusText: answer.statusText, headers });
    },
  };
}

type JsonObject = { [key: string]: JsonValue };

/** The final Response object in an upstream answer: the JSON body, or the last terminal event of an SSE stream. */
async function finalResponseOf(body: ReadableStream<Uint8Array>, isStream: boolean): Promise<JsonObject | null> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let text = '';
  let final: JsonObject | null = null;
  const frames = (flush: boolean): void => {
    const parts = text.split(/\r?\n\r?\n/);
    text = flush ? '' : parts.pop()!;
    for (const frame of parts) {
      const data = frame
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data === '' || data === '[DONE]') continue;
      try {
        const event = JSON.parse(data) as { type?: unknown; response?: unknown };
        if ((event.type === 'response.completed' || event.type === 'response.incomplete' || event.type === 'response.failed') && isObject(event.response)) {
          final = event.response as JsonObject;
        }
      } catch {
        // not JSON: not a terminal event
      }
    }
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (isStream) frames(false);
  }
  text += decoder.decode();
  if (isStream) {
    frames(true);
    return final;
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    return isObject(parsed) && parsed.object === 'response' ? (parsed as JsonObject) : null;
  } catch {
    return null;
  }
}

async function record(store: ResponseStore, body: { [key: string]: unknown }, response: JsonObject): Promise<void> {
  if (typeof response.id !== 'string') return;
  const inputItems = listedInput(body.input);
  let earlier: JsonValue[] = [];
  if (typeof body.previous_response_id === 'string') earlier = (await store.get(body.previous_response_id))?.history ?? [];
  const output = Array.isArray(response.output) ? response.output : [];
  await store.put({
    id: response.id,
    response,
    history: [...earlier, ...inputItems, ...output],
    inputItems,
    createdAt: typeof response.created_at === 'number' ? response.created_at : Math.floor(Date.now() / 1000),
  });
}

/** A request's `input` as input_items lists it: a list of items, each with an id, message text as parts. */
function listedInput(input: unknown): JsonValue[] {
  const items: unknown[] = typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : Array.isArray(input) ? input : [];
  return items.filter(isObject).map((raw) => {
    const item = JSON.parse(JSON.stringify(raw)) as JsonObject;
    if ((item.type === undefined || item.type === 'message') && typeof item.role === 'string') {
      item.type = 'message';
      if (typeof item.content === 'string') item.content = [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }];
    }
    if (typeof item.id !== 'string') item.id = randomId(item.type === 'message' ? 'msg' : item.type === 'function_call' ? 'fc' : 'item');
    return item;
  });
}

function randomId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `${prefix}_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
