// An error with an HTTP meaning raised below the Responses layer (prompt too long, model not found, bad
// constraint, ...); the host's one error edge turns it into an OpenAI-shaped body.

export class EngineError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}
