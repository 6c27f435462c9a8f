// The error vocabulary every layer raises: a DomainError says what kind of failure it is (its `kind`), which
// request parameter it is about (`param`) and, where the wire names it more precisely, a `code`. It carries no HTTP
// status and no OpenAI `type`: the one error edge (`toApiError` in src/responses/errors.ts) turns a kind into
// both, for every host (the table is in src/responses/CONTRACT.md, "Errors"). Nothing classifies errors by message.

/** What went wrong, as a client should read it. Each kind has one HTTP status and one default wire code. */
export type ErrorKind =
  /** The request is wrong (a field, a schema, a grammar, a prompt too long): 400. */
  | 'invalid_request'
  /** No or a wrong API key: 401. */
  | 'unauthorized'
  /** A cross-site request: 403. */
  | 'forbidden'
  /** An unknown model, response, item or route: 404. */
  | 'not_found'
  /** The route exists, the method does not: 405. */
  | 'method_not_allowed'
  /** The thing exists already, or a download was stopped under it: 409. */
  | 'conflict'
  /** The request body is over the bound: 413. */
  | 'too_large'
  /** A body that is not JSON: 415. */
  | 'unsupported_media_type'
  /** A `Host` this server does not answer for: 421. */
  | 'misdirected'
  /** The client went away before the answer: 499. */
  | 'client_closed'
  /** A fault of this server (the GPU, corrupt history): 500. */
  | 'internal'
  /** An upstream server (the upstream API, a model file's host) failed or could not be reached: 502. */
  | 'upstream'
  /** Not available now (no model yet, the engine could not start): 503. */
  | 'unavailable'
  /** A model file does not fit the origin's storage: 507. */
  | 'insufficient_storage'
  /** The response store failed or is unavailable: 503, type `store_error`. */
  | 'store_failed'
  /** The response store is full: 507, type `store_error`. */
  | 'store_full';

/** Every kind, in the order of the table above (for tests and documentation). */
export const ERROR_KINDS: readonly ErrorKind[] = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'conflict',
  'too_large',
  'unsupported_media_type',
  'misdirected',
  'client_closed',
  'internal',
  'upstream',
  'unavailable',
  'insufficient_storage',
  'store_failed',
  'store_full',
];

export interface ErrorDetails {
  /** The request parameter the error is about (`model`, `tools`, `input[3].content`). */
  param?: string | null;
  /** The wire code, where it says more than the kind's default (`context_length_exceeded`, `invalid_grammar`). */
  code?: string | null;
}

/** An error with a meaning for the client; its message is safe to show (it quotes client input bounded). */
export class DomainError extends Error {
  readonly param: string | null;
  /** null: the kind's default code. */
  readonly code: string | null;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'DomainError';
    this.param = details.param ?? null;
    this.code = details.code ?? null;
  }
}

/** A DomainError raised by an engine (prompt too long, model not found, bad constraint, GPU failure). */
export class EngineError extends DomainError {
  constructor(kind: ErrorKind, message: string, details: ErrorDetails = {}) {
    super(kind, message, details);
    this.name = 'EngineError';
  }
}
