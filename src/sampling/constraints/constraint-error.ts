// The one error every constraint front end (JSON Schema, regex, Lark) and the token matcher raise: it names what
// is wrong (a keyword and its JSON path, or a position in a grammar) so hosts can answer it as a 400.

export interface ConstraintErrorDetails {
  /** The unsupported or invalid JSON Schema keyword, when that is the problem. */
  keyword?: string;
  /** JSON path of the offending schema node, e.g. `$.properties.items.items`. */
  jsonPath?: string;
  /** 0-based character offset in a regex or grammar text. */
  position?: number;
}

export class ConstraintError extends Error {
  override readonly name = 'ConstraintError';
  readonly keyword?: string;
  readonly jsonPath?: string;
  readonly position?: number;

  constructor(message: string, details: ConstraintErrorDetails = {}) {
    super(message);
    this.keyword = details.keyword;
    this.jsonPath = details.jsonPath;
    this.position = details.position;
  }
}
