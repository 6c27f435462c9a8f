// The `/v1` handler: `(request: Request) => Promise<Response>` over an Engine and a ResponseStore. It guards the
// request (who may call: request-guard.ts), finds its route in ROUTES and runs it over the handler's context
// (handler-context.ts); every error becomes one OpenAI-shaped answer (errors.ts). The routes themselves are plain
// functions: create-response.ts (POST /v1/responses) and stored-routes.ts (the rest). Hosts mount the handler as
// is (the service worker, the engine worker, the Node server); it knows nothing of any of them.
import type { Engine } from '../engine/types.ts';
import type { ResponseStore } from '../store/types.ts';
import { COMPACTION_MAX_BYTES } from './compaction.ts';
import { createResponse } from './create-response.ts';
import { DomainError, badRequest, errorResponse, quote } from './errors.ts';
import type { HandlerContext } from './handler-context.ts';
import { createItemResolver } from './item-references.ts';
import { createAesGcmSealer } from './reasoning-seal.ts';
import { guardRequest } from './request-guard.ts';
import { decodeModelId, engineDirectory, getModel, listModels, management, type ModelDirectory } from './model-routes.ts';
import { cancelResponse, compactConversation, countInputTokens, deleteResponse, getResponse, listInputItems } from './stored-routes.ts';
import type { IdSource, ReasoningEventNames } from './stream-events.ts';

export interface ResponsesHandlerOptions {
  engine: Engine;
  store: ResponseStore;
  /** The models /v1/models shows, with the host's management routes (the service worker's); default: the engine's. */
  models?: ModelDirectory;
  /** Unix time in seconds (for `created_at`). */
  now?: () => number;
  ids?: IdSource;
  /** Interval of SSE keep-alive comments while a stream is open. */
  keepAliveMs?: number;
  /** Names of the reasoning text stream events: the openai SDK's (default) or Open Responses' (stream-events.ts). */
  reasoningEvents?: ReasoningEventNames;
  /** During a long prefill, a `response.in_progress` event at most this often (ms; default 5,000: see stream-events.ts). */
  prefillProgressMs?: number;
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

/** What a route is called with: the context, the request, its URL and the decoded id its path captured. */
interface RouteCall {
  ctx: HandlerContext;
  request: Request;
  url: URL;
  id: string;
}

interface Route {
  /** The path under /v1/ (trailing slashes dropped); a group captures an id, decoded by `id`. */
  path: RegExp;
  /** How the captured id is decoded and checked (a malformed one is a 400 whatever the method). */
  id?: (raw: string) => string;
  methods: Readonly<Record<string, (call: RouteCall) => Promise<Response>>>;
}

/** The one /v1 route table: the models (with the host's management routes) and the Responses API. */
const ROUTES: readonly Route[] = [
  { path: /^models$/, methods: { GET: ({ ctx }) => listModels(ctx.models) } },
  { path: /^models\/catalog$/, methods: { GET: ({ ctx, request, url }) => management(ctx.models, request, url).catalog() } },
  { path: /^models\/import$/, methods: { POST: ({ ctx, request, url }) => management(ctx.models, request, url).importFile(request, url) } },
  { path: /^models\/([^/]+)\/download$/, id: decodeModelId, methods: { POST: ({ ctx, request, url, id }) => management(ctx.models, request, url).download(id, request) } },
  {
    path: /^models\/([^/]+)$/,
    id: decodeModelId,
    methods: { GET: ({ ctx, id }) => getModel(ctx.models, id), DELETE: ({ ctx, request, url, id }) => management(ctx.models, request, url).remove(id) },
  },
  { path: /^responses$/, methods: { POST: ({ ctx, request }) => createResponse(ctx, request) } },
  { path: /^responses\/input_tokens$/, methods: { POST: ({ ctx, request }) => countInputTokens(ctx, request) } },
  { path: /^responses\/compact$/, methods: { POST: ({ ctx, request }) => compactConversation(ctx, request) } },
  { path: /^responses\/([^/]+)\/cancel$/, id: decodePathId, methods: { POST: ({ ctx, id }) => cancelResponse(ctx, id) } },
  { path: /^responses\/([^/]+)\/input_items$/, id: decodePathId, methods: { GET: ({ ctx, id, url }) => listInputItems(ctx, id, url) } },
  { path: /^responses\/([^/]+)$/, id: decodePathId, methods: { GET: ({ ctx, id }) => getResponse(ctx, id), DELETE: ({ ctx, id }) => deleteResponse(ctx, id) } },
];

export function createResponsesHandler(options: ResponsesHandlerOptions): ResponsesHandler {
  const { store } = options;
  const ctx: HandlerContext = {
    engine: options.engine,
    store,
    models: options.models ?? engineDirectory(options.engine),
    now: options.now ?? (() => Math.floor(Date.now() / 1000)),
    ids: options.ids ?? randomIds(),
    keepAliveMs: options.keepAliveMs ?? 15_000,
    reasoningEvents: options.reasoningEvents ?? 'openai',
    prefillProgressMs: options.prefillProgressMs ?? 5_000,
    sealers: {
      reasoning: createAesGcmSealer(() => store.reasoningKey(), { purpose: 'reasoning' }),
      compaction: createAesGcmSealer(() => store.reasoningKey(), { purpose: 'compaction', maxPlaintextBytes: COMPACTION_MAX_BYTES }),
      items: createItemResolver(store),
    },
    background: new Map(),
    running: new Set(),
  };
  return async function handle(request: Request): Promise<Response> {
    try {
      const refused = guardRequest(request, { origin: options.origin, allowedOrigins: options.allowedOrigins });
      if (refused) return errorResponse(refused);
      return await route(ctx, request);
    } catch (error) {
      return errorResponse(error);
    }
  };
}

async function route(ctx: HandlerContext, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const match = /\/v1\/(.*)$/.exec(url.pathname);
  const path = match ? match[1]!.replace(/\/+$/, '') : null;
  const method = request.method.toUpperCase();
  for (const r of path === null ? [] : ROUTES) {
    const found = r.path.exec(path!);
    if (!found) continue;
    // The id is checked first: a malformed one is a 400 whatever the method.
    const id = found[1] === undefined || !r.id ? '' : r.id(found[1]);
    const run = r.methods[method];
    if (!run) return methodNotAllowed(method, Object.keys(r.methods));
    return run({ ctx, request, url, id });
  }
  return errorResponse(new DomainError('not_found', `Unknown route: ${quote(method, 20)} ${quote(url.pathname)}`, { code: 'unknown_route' }));
}

/** A percent-encoded id from the path; malformed encoding (`resp_%ZZ`) is the client's error, 400 naming the id. */
function decodePathId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest(`Invalid 'response_id': '${quote(raw)}' is not valid percent-encoding.`, 'response_id');
  }
}

function methodNotAllowed(method: string, allowed: string[]): Response {
  return errorResponse(new DomainError('method_not_allowed', `Method ${quote(method, 20)} is not allowed here; use ${allowed.join(' or ')}.`), { allow: allowed.join(', ') });
}
