// OpenAI-shaped errors: `{"error": {"message", "type", "param", "code"}}` with an HTTP status that is never 200.
// Every failure the handler answers goes through `errorResponse`, which never leaks a stack trace.
import type { z } from 'zod';
import { EngineError } from '../engine/types.ts';
import { StoreError } from '../store/types.ts';
import { HOSTED_ITEM_TYPES } from './schema.ts';

export type ApiErrorType = 'invalid_request_error' | 'server_error' | 'store_error';

/** The most characters of one piece of client input an error message quotes. */
export const QUOTE_MAX_CHARS = 200;
/** A bound on a whole error message and on `param` (a message may quote a few pieces; a path may name client keys). */
export const MESSAGE_MAX_CHARS = 1000;
export const PARAM_MAX_CHARS = 300;

/**
 * Client input as an error message quotes it: at most `max` characters, the rest counted, not echoed (a 1 MiB
 * model name must not come back whole). Never cuts a surrogate pair in two. Every message that echoes a client
 * string goes through this; ApiError bounds the whole message as a last resort.
 */
export function quote(value: unknown, max = QUOTE_MAX_CHARS): string {
  const text = typeof value === 'string' ? value : String(value);
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

export class ApiError extends Error {
  readonly param: string | null;

  constructor(
    readonly status: number,
    message: string,
    param: string | null = null,
    readonly type: ApiErrorType = status >= 500 ? 'server_error' : 'invalid_request_error',
    readonly code: string | null = null,
  ) {
    super(quote(message, MESSAGE_MAX_CHARS));
    this.name = 'ApiError';
    this.param = param === null ? null : quote(param, PARAM_MAX_CHARS);
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const badRequest = (message: string, param: string | null = null, code: string | null = null): ApiError =>
  new ApiError(400, message, param, 'invalid_request_error', code);

export const notFound = (message: string, param: string | null = null): ApiError =>
  new ApiError(404, message, param, 'invalid_request_error', 'not_found');

/** Map anything thrown to an ApiError: known kinds keep their meaning, the rest is a generic 500. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof EngineError) {
    const status = error.status >= 400 && error.status <= 599 ? error.status : 500;
    return new ApiError(status, error.message, error.param, status >= 500 ? 'server_error' : 'invalid_request_error', error.code);
  }
  if (error instanceof StoreError) {
    const status = error.reason === 'quota' ? 507 : 503;
    return new ApiError(status, `Response storage failed: ${error.message}`, 'store', 'store_error', `store_${error.reason}`);
  }
  return new ApiError(500, 'The server had an error while processing your request.', null, 'server_error', 'server_error');
}

export function errorResponse(error: unknown): Response {
  const apiError = toApiError(error);
  return Response.json(apiError.body(), { status: apiError.status });
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
export function fromZodError(error: z.ZodError, value: unknown): ApiError {
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
