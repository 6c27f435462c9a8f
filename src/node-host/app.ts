// What the Node host answers, as one `(Request, signal) => Promise<Response>` (server.ts turns node:http into
// Requests and back): the API key check, the choice between the local handler and the upstream, and the merged
// model list. Everything else is the Responses handler itself, the same one the service worker mounts.
import { createHash, timingSafeEqual } from 'node:crypto';
import { DomainError, errorResponse } from '../responses/errors.ts';
import type { ResponsesHandler } from '../responses/handler.ts';
import { guardRequest, type RequestSource } from '../responses/request-guard.ts';
import { readBodyBytes } from '../responses/request-checks.ts';
import type { Upstream } from './upstream.ts';

export interface AppOptions {
  handler: ResponsesHandler;
  /** When set, every request needs `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
  upstream?: Upstream;
  /** Model ids and aliases served locally (the rest go upstream when there is one). */
  localModels: () => Promise<ReadonlySet<string>>;
  /** The origins the handler was made with (requests forwarded upstream pass the same guard). */
  guard?: RequestSource;
  /** Called with every request that passed the key check, its body read from a copy (`--log-requests FILE`). */
  logRequest?: (entry: { method: string; path: string; headers: Record<string, string>; body: string }) => void;
  /** The most bytes of a request body read here to route it (the handler's own limit is the same). */
  maxBodyBytes?: number;
}

export type App = (request: Request, signal: AbortSignal) => Promise<Response>;

const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
/** POST routes whose body names a model, and so may go upstream. */
const MODEL_ROUTES = /\/v1\/responses(?:\/input_tokens|\/compact)?\/?$/;
/** Routes about a stored response, answered upstream when this host does not know the id. */
const BY_ID_ROUTES = /\/v1\/responses\/(?!input_tokens\/?$|compact\/?$)[^/]+(?:\/(?:cancel|input_items))?\/?$/;

export function createApp(options: AppOptions): App {
  const { handler, upstream } = options;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const expectedKey = options.apiKey === undefined ? null : digest(`Bearer ${options.apiKey}`);

  function authorized(request: Request): DomainError | null {
    if (expectedKey === null) return null;
    const given = request.headers.get('authorization');
    if (given === null || given.trim() === '') {
      return new DomainError('unauthorized', "You didn't provide an API key. Provide it in an Authorization header: 'Authorization: Bearer YOUR_KEY'.");
    }
    if (!timingSafeEqual(digest(given.trim()), expectedKey)) {
      return new DomainError('unauthorized', 'Incorrect API key provided.', { code: 'invalid_api_key' });
    }
    return null;
  }

  return async function app(request: Request, signal: AbortSignal): Promise<Response> {
    const refused = authorized(request);
    if (refused) return errorResponse(refused);
    if (options.logRequest) logCopy(request, options.logRequest);
    if (!upstream) return handler(request);

    const path = new URL(request.url).pathname;
    const method = request.method.toUpperCase();
    try {
      if (method === 'GET' && /\/v1\/models\/?$/.test(path)) return await mergedModels(request, signal);
      if (method === 'POST' && MODEL_ROUTES.test(path)) {
        // The body has to be read to see its model; the handler then gets it from memory.
        const body = await readBounded(request, maxBodyBytes);
        const parsed = parseObject(body);
        const model = parsed && typeof parsed.model === 'string' ? parsed.model : null;
        if (model !== null && !(await options.localModels()).has(model)) {
          // The same guard as the handler's (origin, content type) first: a refused request never leaves this host.
          const guarded = guardRequest(request, options.guard);
          if (guarded) return errorResponse(guarded);
          return await upstream.forward(request, body, parsed, signal);
        }
        return await handler(new Request(request, { body: body as Uint8Array<ArrayBuffer>, signal }));
      }
      if (BY_ID_ROUTES.test(path)) {
        const local = await handler(request);
        if (local.status !== 404) return local;
        const remote = await upstream.forward(request, null, null, signal).catch(() => null);
        if (remote === null || remote.status === 404) {
          await remote?.body?.cancel();
          return local;
        }
        await local.body?.cancel();
        return remote;
      }
      return await handler(request);
    } catch (error) {
      if (error instanceof DomainError) return errorResponse(error);
      if (signal.aborted) return errorResponse(new DomainError('client_closed', 'The client closed the request.'));
      return errorResponse(new DomainError('upstream', `The upstream server could not be reached: ${error instanceof Error ? error.message : String(error)}`));
    }
  };

  async function mergedModels(request: Request, signal: AbortSignal): Promise<Response> {
    const local = await handler(request);
    if (!local.ok) return local;
    const body = (await local.json()) as { object: 'list'; data: { id: string }[] };
    const seen = new Set(body.data.map((m) => m.id));
    for (const m of await upstream!.models(signal)) {
      if (!seen.has(m.id)) {
        seen.add(m.id);
        body.data.push(m);
      }
    }
    return Response.json(body);
  }
}

/** Logs a copy of the request (the body read from a clone, so the original streams on untouched). */
function logCopy(request: Request, log: NonNullable<AppOptions['logRequest']>): void {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = name === 'authorization' ? '(set)' : value;
  });
  const path = new URL(request.url).pathname;
  const copy = request.body === null ? null : request.clone();
  void (copy ? copy.text() : Promise.resolve('')).then(
    (body) => log({ method: request.method, path, headers, body }),
    () => log({ method: request.method, path, headers, body: '(unreadable)' }),
  );
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The body's bytes, at most `max` of them (413 past that, counted while it streams in). */
function readBounded(request: Request, max: number): Promise<Uint8Array> {
  return readBodyBytes(request, max, () => new DomainError('too_large', `The request body is larger than ${max} bytes.`));
}

function parseObject(body: Uint8Array): { [key: string]: unknown } | null {
  try {
    const value = JSON.parse(new TextDecoder().decode(body)) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { [key: string]: unknown }) : null;
  } catch {
    return null;
  }
}
