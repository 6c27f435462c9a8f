// The one error every constraint front end (JSON Schema, regex, Lark) and the token matcher raise: it names what
// is wrong (a keyword and its JSON path, or a position in a grammar) so hosts can answer it as a 400.
// ConstraintTooLargeError is the kind a cost bound raises (too many automaton states, or the compile time budget
// spent): the constraint may be well formed, but compiling or running it would cost more than a request may.

export interface ConstraintErrorDetails {
  /** The unsupported or invalid JSON Schema keyword, when that is the problem. */
  keyword?: string;
  /** JSON path of the offending schema node, e.g. `$.properties.items.items`. */
  jsonPath?: string;
  /** 0-based character offset in a regex or grammar text (the error is then about a grammar). */
  position?: number;
  /**
   * What the request got wrong, when it is not a JSON Schema: a grammar (a custom tool's, or the compiled
   * grammar's rules), or `tool_choice` (a tool it names that is not declared, a call it needs that cannot be made).
   */
  subject?: 'grammar' | 'tool_choice';
}

export class ConstraintError extends Error {
  override readonly name: string = 'ConstraintError';
  readonly keyword?: string;
  readonly jsonPath?: string;
  readonly position?: number;
  readonly subject?: 'grammar' | 'tool_choice';

  constructor(message: string, details: ConstraintErrorDetails = {}) {
    super(message);
    this.keyword = details.keyword;
    this.jsonPath = details.jsonPath;
    this.position = details.position;
    this.subject = details.subject ?? (details.position !== undefined ? 'grammar' : undefined);
  }

  /** The same error (same class and bound) with `prefix` before its message, e.g. the tool it belongs to. */
  withPrefix(prefix: string, subject = this.subject): ConstraintError {
    return new ConstraintError(prefix + this.message, { keyword: this.keyword, jsonPath: this.jsonPath, position: this.position, subject });
  }
}

/** Which cost bound a constraint exceeded: its (estimated) automaton size, or the compile time budget. */
export type ConstraintBound = 'states' | 'time';

export interface ConstraintTooLargeDetails extends ConstraintErrorDetails {
  bound: ConstraintBound;
  /** The bound's value (states, or milliseconds). */
  limit: number;
  /** The custom or function tool the constraint belongs to, when known. */
  toolName?: string;
}

export class ConstraintTooLargeError extends ConstraintError {
  override readonly name: string = 'ConstraintTooLargeError';
  readonly bound: ConstraintBound;
  readonly limit: number;
  readonly toolName?: string;

  constructor(message: string, details: ConstraintTooLargeDetails) {
    super(message, details);
    this.bound = details.bound;
    this.limit = details.limit;
    this.toolName = details.toolName;
  }

  override withPrefix(prefix: string, toolName = this.toolName): ConstraintTooLargeError {
    return new ConstraintTooLargeError(prefix + this.message, {
      keyword: this.keyword, jsonPath: this.jsonPath, position: this.position, subject: this.subject, bound: this.bound, limit: this.limit, toolName,
    });
  }
}
