// The one error edge: `toApiError` turns anything thrown into the OpenAI-shaped answer
// `{"error": {"message", "type", "param", "code"}}` with an HTTP status that is never 200, for every host (the
// Responses handler, the service worker's model routes and runtime, the Node host). A DomainError (src/common)
// keeps its message, param and code; its kind alone gives the status and type (KIND_ANSWERS, documented in
// CONTRACT.md "Errors"); anything else is a generic 500 that never leaks a message or a stack.
import type { z } from 'zod';
import { DomainError, type ErrorKind } from '../common/engine-error.ts';
import { HOSTED_ITEM_TYPES } from './schema.ts';

export type ApiErrorType = 'invalid_request_error' | 'server_error' | 'store_error';

/** What each kind answers: its HTTP status, its OpenAI `type`, and the code when the error names none. */
export const KIND_ANSWERS: Readonly<Record<ErrorKind, { status: number; type: ApiErrorType; code: string | null }>> = {
  invalid_request: { status: 400, type: 'invalid_request_error', code: null },
  unauthorized: { status: 401, type: 'invalid_request_error', code: null },
  forbidden: { status: 403, type: 'invalid_request_error', code: 'cross_site_request' },
  not_found: { status: 404, type: 'invalid_request_error', code: 'not_found' },
  method_not_allowed: { status: 405, type: 'invalid_request_error', code: 'method_not_allowed' },
  conflict: { status: 409, type: 'invalid_request_error', code: null },
  too_large: { status: 413, type: 'invalid_request_error', code: 'request_too_large' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', code: 'unsupported_media_type' },
  misdirected: { status: 421, type: 'invalid_request_error', code: 'misdirected_request' },
  client_closed: { status: 499, type: 'invalid_request_error', code: 'client_closed_request' },
  internal: { status: 500, type: 'server_error', code: 'server_error' },
  upstream: { status: 502, type: 'server_error', code: 'upstream_unreachable' },
  unavailable: { status: 503, type: 'server_error', code: null },
  insufficient_storage: { status: 507, type: 'server_error', code: 'insufficient_storage' },
  store_failed: { status: 503, type: 'store_error', code: 'store_failed' },
  store_full: { status: 507, type: 'store_error', code: 'store_quota' },
};

/** The most characters of one piece of client input an error message quotes. */
export const QUOTE_MAX_CHARS = 200;
/** A bound on a whole error message and on `param` (a message may quote a few pieces; a path may name client keys). */
export const MESSAGE_MAX_CHARS = 1000;
export const PARAM_MAX_CHARS = 300;

/**
 * Client input as an error message quotes it: at most `max` characters, the rest counted, not echoed (a 1 MiB
 * model name must not come back whole). Never cuts a surrogate pair in two. Every message that echoes a client
 * string goes through this; the edge bounds the whole message as a last resort.
 */
export function quote(value: unknown, max = QUOTE_MAX_CHARS): string {
  const text = typeof value === 'string' ? value : String(value);
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

export interface ApiErrorBody {
  error: { message: string; type: ApiErrorType; param: string | null; code: string | null };
}

/** The answer the edge gives for an error: its status and body (built only by toApiError). */
export interface ApiError {
  readonly status: number;
  readonly body: ApiErrorBody;
}

export { DomainError };

export const badRequest = (message: string, param: string | null = null, code: string | null = null): DomainError =>
  new DomainError('invalid_request', message, { param, code });

export const notFound = (message: string, param: string | null = null): DomainError => new DomainError('not_found', message, { param });

const GENERIC_500 = 'The server had an error while processing your request.';

/** Anything thrown as the OpenAI-shaped answer: a DomainError by its kind, the rest a generic 500. */
export function toApiError(error: unknown): ApiError {
  if (!(error instanceof DomainError)) {
    return { status: 500, body: { error: { message: GENERIC_500, type: 'server_error', param: null, code: 'server_error' } } };
  }
  const answer = KIND_ANSWERS[error.kind];
  const store = error.kind === 'store_failed' || error.kind === 'store_full';
  const message = store ? `Response storage failed: ${error.message}` : error.message;
  const param = error.param;
  return {
    status: answer.status,
    body: {
      error: {
        message: quote(message, MESSAGE_MAX_CHARS),
        type: answer.type,
        param: param === null ? null : quote(param, PARAM_MAX_CHARS),
        code: error.code ?? answer.code,
      },
    },
  };
}

/** Whether an error is the client's (a DomainError whose kind answers 4xx), not a fault of this server. */
export function isClientError(error: unknown): boolean {
  return error instanceof DomainError && KIND_ANSWERS[error.kind].status < 500;
}

/** The HTTP answer for an error (`headers`: e.g. the `allow` of a 405). */
export function errorResponse(error: unknown, headers?: HeadersInit): Response {
  const { status, body } = toApiError(error);
  return Response.json(body, { status, headers });
}

/** `['input', 3, 'content', 0, 'text']` -> `input[3].content[0].text` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

type Issue = z.core.$ZodIssue;

/** The most specific issue under a union: the branch whose issue reaches deepest into the value. */
function mostSpecific(issue: Issue, prefix: PropertyKey[]): { issue: Issue; path: PropertyKey[] } {
  const path = [...prefix, ...issue.path];
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return { issue, path };
  let best: { issue: Issue; path: PropertyKey[] } | null = null;
  for (const branch of issue.errors) {
    for (const sub of branch) {
      const candidate = mostSpecific(sub, path);
      if (best === null || candidate.path.length > best.path.length) best = candidate;
    }
  }
  return best ?? { issue, path };
}

/** A zod failure on `value` as a 400 naming the field. */
export function fromZodError(error: z.ZodError, value: unknown): DomainError {
  const first = error.issues[0];
  if (first === undefined) return badRequest('Invalid request body.');
  const { issue, path } = mostSpecific(first, []);
  // Object keys in the path are client input too.
  const param = quote(formatPath(path)) || null;
  if (issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator === 'type') {
    const seen = valueAt(value, path);
    if (typeof seen === 'string' && (HOSTED_ITEM_TYPES as readonly string[]).includes(seen)) {
      return badRequest(`Item type '${quote(seen)}' at '${param}' is not supported by this runtime (it serves no hosted tools).`, param);
    }
    return badRequest(
      `Invalid value${typeof seen === 'string' ? ` '${quote(seen)}'` : ''} for '${param}': expected one of ${((issue as { options?: unknown[] }).options ?? []).map((o) => `'${String(o)}'`).join(', ')}.`,
      param,
    );
  }
  if (issue.code === 'too_big' && issue.origin === 'string') {
    return badRequest(`'${param}' is too long: at most ${String(issue.maximum)} characters.`, param, 'input_too_large');
  }
  if (issue.code === 'too_big' && issue.origin === 'array') {
    return badRequest(`'${param}' has too many items: at most ${String(issue.maximum)}.`, param, 'input_too_large');
  }
  return badRequest(`Invalid '${param || 'body'}': ${issue.message}`, param);
}

/** The value at `path` inside `root` (to name the unknown type that was sent). */
function valueAt(root: unknown, path: PropertyKey[]): unknown {
  let value: unknown = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
