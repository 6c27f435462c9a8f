// The `/v1` handler: `(request: Request) => Promise<Response>` over an Engine and a ResponseStore. It routes,
// runs every request check before generating, runs the event pipeline (streamed as SSE or collected into one
// JSON response), and keeps state: store:true writes the response with its history in one put; background
// responses run detached and are polled and cancelled by id. Hosts mount it as is (the service worker, a Node
// server); it knows nothing of either.
import { EngineError, type Engine, type GenerateRequest } from '../engine/types.ts';
import type { JsonValue, ResponseStore } from '../store/types.ts';
import { compactHistory, COMPACTION_MAX_BYTES } from './compaction.ts';
import { ApiError, badRequest, errorResponse, notFound, quote, toApiError } from './errors.ts';
import { OutputParser } from './output-parser.ts';
import { createAesGcmSealer } from './reasoning-seal.ts';
import { guardRequest } from './request-guard.ts';
import { checkResponseId, parseWith, preparePrompt, readJsonBody, type PreparedPrompt } from './request-checks.ts';
import {
  CompactBody,
  CreateResponseBody,
  InputItemsQuery,
  InputTokensBody,
  type InputItem,
  type ModelObject,
  type ResponseObject,
} from './schema.ts';
import { runPipeline, sseFrame, SSE_KEEPALIVE, type IdSource, type PipelineOutcome, type PipelineOutput, type ReasoningEventNames } from './stream-events.ts';
import { compactionPayload, type Sealers } from './translate.ts';
import { withTruncationMetadata } from './truncation.ts';
import { echoedSettings, upgradeStoredResponse } from './response-object.ts';
import { checkPromptFits } from './context-check.ts';
import { createItemResolver, responseItemIds } from './item-references.ts';

export interface ResponsesHandlerOptions {
  engine: Engine;
  store: ResponseStore;
  /** Unix time in seconds (for `created_at`). */
  now?: () => number;
  ids?: IdSource;
  /** Interval of SSE keep-alive comments while a stream is open. */
  keepAliveMs?: number;
  /** Names of the reasoning text stream events: the openai SDK's (default) or Open Responses' (stream-events.ts). */
  reasoningEvents?: ReasoningEventNames;
  /** The origin pages call this API from; default: each request URL's own origin (see request-guard.ts). */
  origin?: string;
  /** Other origins whose pages may call it (a Node host serving a page elsewhere). */
  allowedOrigins?: readonly string[];
}

export type ResponsesHandler = (request: Request) => Promise<Response>;

export function randomIds(): IdSource {
  return (prefix) => {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return `${prefix}_${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
  };
}

interface BackgroundRun {
  controller: AbortController;
  finished: Promise<void>;
}

export function createResponsesHandler(options: ResponsesHandlerOptions): ResponsesHandler {
  const { engine, store } = options;
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const ids = options.ids ?? randomIds();
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const sealers: Sealers = {
    reasoning: createAesGcmSealer(() => store.reasoningKey(), { purpose: 'reasoning' }),
    compaction: createAesGcmSealer(() => store.reasoningKey(), { purpose: 'compaction', maxPlaintextBytes: COMPACTION_MAX_BYTES }),
    items: createItemResolver(store),
  };
  const background = new Map<string, BackgroundRun>();
  // Requests whose generation is running, held until it ends: on Node (undici) a Request's signal follows the
  // host's signal only while the Request object lives, so an abort would be lost once it was garbage-collected.
  const running = new Set<Request>();

  // ------------------------------------------------------------ POST /v1/responses

  async function create(request: Request): Promise<Response> {
    const body = parseWith(CreateResponseBody, await readJsonBody(request));
    const keepRecord = body.store ?? true;
    if (body.background && !keepRecord) throw badRequest('Background responses must be stored: set store to true.', 'background');
    if (body.background && body.stream) throw badRequest('Streaming a background response is not supported by this runtime.', 'stream');
    const prepared = await preparePrompt(engine, store, sealers, body);
    await checkPromptFits(engine, prepared);

    const id = ids('resp');
    const createdAt = now();
    const base = baseResponse(body, prepared, id, createdAt, body.background ? 'queued' : 'in_progress');
    const inputItems = listedInputItems(prepared.input.map((s) => s.item), responseItemIds(id, keepRecord, 'input'));
    const inputHistory = [...prepared.chain, ...prepared.input].map((s) => s.item);
    let recorded = false;
    const persist = async (final: ResponseObject, fault: unknown): Promise<void> => {
      if (!keepRecord) return;
      // A prompt the engine refused before any output (too long, …) answers a non-streamed request with a 4xx
      // and no response id: like a request check, it leaves nothing stored.
      const refused = fault instanceof EngineError && fault.status < 500 && final.output.length === 0;
      if (refused && !body.stream && !body.background) return;
      await store.put({ id, response: toJson(final), history: toJson([...inputHistory, ...final.output]), inputItems: toJson(inputItems), createdAt });
      recorded = true;
    };

    const controller = new AbortController();
    const generation = (signal: AbortSignal): AsyncGenerator<PipelineOutput, PipelineOutcome> => {
      const parser = new OutputParser({
        markers: prepared.model.markers,
        toolCalls: prepared.served.chatTools.length > 0,
        customNames: prepared.served.customNames,
        declaredNames: new Set(prepared.served.chatTools.map((t) => t.function.name)),
        namespaced: prepared.served.namespaced,
        startsInReasoning: prepared.enableThinking && prepared.model.markers.promptOpensThink === true,
      });
      const generateRequest: GenerateRequest = {
        model: prepared.model.id,
        messages: prepared.messages,
        tools: prepared.served.chatTools,
        enableThinking: prepared.enableThinking,
        maxTokens: body.max_output_tokens ?? prepared.model.contextLength,
        sampling: {
          temperature: body.temperature ?? 1,
          top_p: body.top_p ?? 1,
          ...(body.seed !== null && body.seed !== undefined ? { seed: body.seed } : {}),
          top_logprobs: body.top_logprobs ?? 0,
        },
        constraint: prepared.constraint,
        signal,
      };
      return runPipeline(
        {
          response: base,
          ids,
          parser,
          holdTextForPhase: prepared.served.chatTools.length > 0,
          maxToolCalls: prepared.maxToolCalls,
          sealReasoning: body.include?.includes('reasoning.encrypted_content') ? sealers.reasoning : null,
          reasoningEvents: options.reasoningEvents ?? 'openai',
          now,
          persist,
          signal,
        },
        () => engine.generate(generateRequest),
      );
    };

    if (body.background) {
      await store.put({ id, response: toJson(base), history: toJson(inputHistory), inputItems: toJson(inputItems), createdAt });
      const finished = (async () => {
        await store.updateResponse(id, toJson({ ...base, status: 'in_progress' }));
        await drain(generation(controller.signal));
      })()
        .catch(async (error: unknown) => {
          // The pipeline records engine faults itself; this is a store that failed mid-run. Say so if it can.
          const message = `The background response failed: ${error instanceof Error ? error.message : String(error)}`;
          await store
            .updateResponse(id, toJson({ ...base, status: 'failed', error: { code: 'server_error', message } }))
            .catch(() => undefined);
        })
        .finally(() => background.delete(id));
      background.set(id, { controller, finished });
      return Response.json(base);
    }

    request.signal.addEventListener('abort', () => controller.abort(), { once: true });
    if (request.signal.aborted) controller.abort();
    running.add(request);
    const pipeline = holding(generation(controller.signal), () => running.delete(request));
    if (body.stream) return sseResponse(pipeline, controller, keepAliveMs);

    const outcome = await drain(pipeline);
    if (outcome.response.status === 'failed') {
      const error = toApiError(outcome.cause);
      // An engine fault is a 5xx that names the response, stored as failed (GET it by that id); a prompt the
      // engine refused (too long, …) keeps its 4xx and leaves nothing stored, like a request check.
      let message = outcome.response.error?.message ?? error.message;
      if (recorded) message += ` The response '${id}' is stored with status 'failed'.`;
      else if (error.status >= 500 && !keepRecord) message += ` (response '${id}', not stored: store is false)`;
      return Response.json(new ApiError(error.status, message, error.param, error.type, error.code).body(), { status: error.status });
    }
    return Response.json(outcome.response);
  }

  // ------------------------------------------------------------ other endpoints

  async function inputTokens(request: Request): Promise<Response> {
    const body = parseWith(InputTokensBody, await readJsonBody(request));
    const prepared = await preparePrompt(engine, store, sealers, body);
    const tokens = await engine.tokenizePrompt({
      model: prepared.model.id,
      messages: prepared.messages,
      tools: prepared.served.chatTools,
      enableThinking: prepared.enableThinking,
    });
    return Response.json({ object: 'response.input_tokens', input_tokens: tokens.length });
  }

  async function compact(request: Request): Promise<Response> {
    const body = parseWith(CompactBody, await readJsonBody(request));
    const prepared = await preparePrompt(engine, store, sealers, body);
    const before = await engine.tokenizePrompt({ model: prepared.model.id, messages: prepared.messages, tools: [], enableThinking: prepared.enableThinking });
    const items = compactHistory([...prepared.chain, ...prepared.input]);
    let sealed: string;
    try {
      sealed = await sealers.compaction.seal(compactionPayload(items));
    } catch {
      throw badRequest(`The conversation is too long to compact into one item (over ${COMPACTION_MAX_BYTES} bytes).`, 'input', 'input_too_large');
    }
    return Response.json({
      id: ids('resp'),
      object: 'response.compaction',
      created_at: now(),
      output: [{ id: ids('cmp'), type: 'compaction', encrypted_content: sealed }],
      usage: {
        input_tokens: before.length,
        input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        output_tokens: 0,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: before.length,
      },
    });
  }

  async function models(): Promise<Response> {
    const list = await engine.listModels();
    const data: ModelObject[] = list.flatMap((m) =>
      [m.id, ...m.aliases].map((id) => ({ id, object: 'model' as const, created: m.created, owned_by: m.ownedBy })),
    );
    return Response.json({ object: 'list', data });
  }

  async function stored(id: string): Promise<{ response: ResponseObject; inputItems: JsonValue[] }> {
    checkResponseId(id, 'response_id');
    const record = await store.get(id);
    if (record === undefined) throw notFound(`Response with id '${id}' not found.`, 'response_id');
    return { response: upgradeStoredResponse(record.response), inputItems: record.inputItems };
  }

  async function cancel(id: string): Promise<Response> {
    const { response } = await stored(id);
    if (!response.background) throw badRequest('Only background responses can be cancelled.', 'response_id');
    if (response.status !== 'queued' && response.status !== 'in_progress') {
      throw badRequest(`Cannot cancel a response with status '${response.status}'.`, 'response_id');
    }
    const run = background.get(id);
    if (run) {
      run.controller.abort();
      await run.finished;
    } else {
      // Its run is gone (the host restarted): nothing generates any more, so the record is what is left.
      await store.updateResponse(id, toJson({ ...response, status: 'cancelled' }));
    }
    return Response.json((await stored(id)).response);
  }

  async function remove(id: string): Promise<Response> {
    checkResponseId(id, 'response_id');
    const run = background.get(id);
    if (run) {
      run.controller.abort();
      await run.finished;
    }
    if (!(await store.delete(id))) throw notFound(`Response with id '${id}' not found.`, 'response_id');
    return Response.json({ id, object: 'response', deleted: true });
  }

  async function listInputItems(id: string, url: URL): Promise<Response> {
    const query = parseWith(InputItemsQuery, Object.fromEntries(url.searchParams));
    const { inputItems } = await stored(id);
    const ordered = query.order === 'asc' ? inputItems : [...inputItems].reverse();
    let start = 0;
    if (query.after !== undefined) {
      const at = ordered.findIndex((item) => itemId(item) === query.after);
      if (at < 0) throw badRequest(`No input item with id '${quote(query.after)}' in this response.`, 'after');
      start = at + 1;
    }
    const data = ordered.slice(start, start + query.limit);
    return Response.json({
      object: 'list',
      data,
      first_id: data.length > 0 ? itemId(data[0]!) : null,
      last_id: data.length > 0 ? itemId(data[data.length - 1]!) : null,
      has_more: start + query.limit < ordered.length,
    });
  }

  // ------------------------------------------------------------ items and records

  /** This request's input items as `input_items` lists them: each with an id, message content as parts. */
  function listedInputItems(items: InputItem[], itemIds: (prefix: 'msg' | 'fc' | 'ctc' | 'rs' | 'item') => string = ids): InputItem[] {
    return items.map((item) => {
      if (item.type === 'message') {
        const partType = item.role === 'assistant' ? 'output_text' : 'input_text';
        const content = typeof item.content === 'string' ? [{ type: partType, text: item.content }] : item.content;
        return { ...item, id: itemIds('msg'), content } as InputItem;
      }
      const prefix = item.type === 'function_call' ? 'fc' : item.type === 'custom_tool_call' ? 'ctc' : item.type === 'reasoning' ? 'rs' : 'item';
      return { ...item, id: itemIds(prefix) };
    });
  }

  // ------------------------------------------------------------ routing

  return async function handle(request: Request): Promise<Response> {
    try {
      const refused = guardRequest(request, { origin: options.origin, allowedOrigins: options.allowedOrigins });
      if (refused) return errorResponse(refused);
      const url = new URL(request.url);
      const match = /\/v1\/(.*)$/.exec(url.pathname);
      const path = match ? match[1]!.replace(/\/+$/, '') : null;
      const method = request.method.toUpperCase();
      const route = (allowed: string[], run: () => Promise<Response>): Promise<Response> =>
        allowed.includes(method) ? run() : Promise.resolve(methodNotAllowed(method, allowed));

      if (path === 'models') return await route(['GET'], models);
      if (path === 'responses') return await route(['POST'], () => create(request));
      if (path === 'responses/input_tokens') return await route(['POST'], () => inputTokens(request));
      if (path === 'responses/compact') return await route(['POST'], () => compact(request));
      const byId = path === null ? null : /^responses\/([^/]+)(?:\/(cancel|input_items))?$/.exec(path);
      if (byId) {
        const id = decodePathId(byId[1]!);
        if (byId[2] === 'cancel') return await route(['POST'], () => cancel(id));
        if (byId[2] === 'input_items') return await route(['GET'], () => listInputItems(id, url));
        if (method === 'DELETE') return await remove(id);
        return await route(['GET', 'DELETE'], async () => Response.json((await stored(id)).response));
      }
      return Response.json(
        new ApiError(404, `Unknown route: ${quote(method, 20)} ${quote(url.pathname)}`, null, 'invalid_request_error', 'unknown_route').body(),
        { status: 404 },
      );
    } catch (error) {
      return errorResponse(error);
    }
  };
}

/** A percent-encoded id from the path; malformed encoding (`resp_%ZZ`) is the client's error, 400 naming the id. */
function decodePathId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest(`Invalid 'response_id': '${quote(raw)}' is not valid percent-encoding.`, 'response_id');
  }
}

/** A generator that calls `release` once the one it wraps has ended, however it ends. */
async function* holding<T, R>(inner: AsyncGenerator<T, R>, release: () => void): AsyncGenerator<T, R> {
  try {
    return yield* inner;
  } finally {
    release();
  }
}

function methodNotAllowed(method: string, allowed: string[]): Response {
  return Response.json(
    new ApiError(405, `Method ${quote(method, 20)} is not allowed here; use ${allowed.join(' or ')}.`, null, 'invalid_request_error', 'method_not_allowed').body(),
    { status: 405, headers: { allow: allowed.join(', ') } },
  );
}

function itemId(item: JsonValue): string | null {
  return typeof item === 'object' && item !== null && !Array.isArray(item) && typeof item.id === 'string' ? item.id : null;
}

/** The Response object as created, with every field the SDK types and honest values. */
function baseResponse(
  body: CreateResponseBody,
  prepared: PreparedPrompt,
  id: string,
  createdAt: number,
  status: 'queued' | 'in_progress',
): ResponseObject {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    completed_at: null,
    status,
    background: body.background ?? false,
    model: prepared.model.id,
    output: [],
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    ...echoedSettings(body),
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    top_logprobs: body.top_logprobs ?? 0,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    metadata: withTruncationMetadata(body.metadata ?? {}, prepared.truncation),
    truncation: body.truncation ?? 'disabled',
    service_tier: 'default',
    prompt_cache_key: body.prompt_cache_key ?? null,
    safety_identifier: body.safety_identifier ?? null,
    ...(body.user !== undefined ? { user: body.user } : {}),
  };
}

/** Records are plain JSON: a value's JSON form (undefined fields dropped). */
function toJson<T>(value: T): T extends unknown[] ? JsonValue[] : { [key: string]: JsonValue } {
  return JSON.parse(JSON.stringify(value)) as T extends unknown[] ? JsonValue[] : { [key: string]: JsonValue };
}

async function drain(pipeline: AsyncGenerator<PipelineOutput, PipelineOutcome>): Promise<PipelineOutcome> {
  for (;;) {
    const step = await pipeline.next();
    if (step.done) return step.value;
  }
}

/** The pipeline as `text/event-stream`; a reader that goes away aborts generation. */
function sseResponse(pipeline: AsyncGenerator<PipelineOutput, PipelineOutcome>, controller: AbortController, keepAliveMs: number): Response {
  const encoder = new TextEncoder();
  let closed = false;
  const body = new ReadableStream<Uint8Array>({
    start(stream) {
      const send = (text: string): void => {
        if (closed) return;
        try {
          stream.enqueue(encoder.encode(text));
        } catch {
          closed = true;
        }
      };
      const timer = setInterval(() => send(SSE_KEEPALIVE), keepAliveMs);
      void (async () => {
        try {
          for (;;) {
            const step = await pipeline.next();
            if (step.done) break;
            send(step.value.kind === 'event' ? sseFrame(step.value.event) : SSE_KEEPALIVE);
          }
        } catch (error) {
          const apiError = toApiError(error);
          send(`event: error\ndata: ${JSON.stringify({ type: 'error', ...apiError.body() })}\n\n`);
        } finally {
          clearInterval(timer);
          if (!closed) {
            closed = true;
            try {
              stream.close();
            } catch {
              // already cancelled by the reader
            }
          }
        }
      })();
    },
    cancel() {
      closed = true;
      controller.abort();
    },
  });
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  });
}
