// Streaming decoders for a tool call's arguments, shared by every chat format's output parser (moved here from
// output-parser.ts unchanged, so the format parsers can use them without an import cycle).

/**
 * Decodes the `arguments` value of a call as it streams.
 * - function: the value's JSON text as written (a JSON string value is decoded: some models quote arguments);
 * - custom: the shim's `{"input": "<payload>"}` -> the payload, decoded; another single key is taken the same
 *   way (the value of the first key is the input); a bare string value is the input; a non-string value is its
 *   JSON text.
 */
export class ArgumentsDecoder {
  private phase: 'start' | 'raw' | 'string' | 'obj-key-wait' | 'obj-key' | 'obj-colon' | 'obj-value' | 'obj-rest' | 'done' = 'start';
  private raw = new JsonValueScanner();
  private string = new JsonStringDecoder();
  private rest = new JsonValueScanner();
  /** The value being read is the first key's value inside the shim's object (the rest of the object follows). */
  private afterStringInObject = false;
  private afterRawInObject = false;

  constructor(private readonly mode: 'function' | 'custom') {}

  get done(): boolean {
    return this.phase === 'done';
  }

  /** Decode all of `text` (used for a whole value); returns the delta. */
  push(text: string): string {
    return this.pushUntilDone(text).delta;
  }

  /** Consume chars until the value ends; returns the delta and how many chars were consumed. */
  pushUntilDone(text: string): { delta: string; consumed: number } {
    let delta = '';
    let i = 0;
    for (; i < text.length && this.phase !== 'done'; i++) {
      const c = text[i]!;
      switch (this.phase) {
        case 'start':
          if (isSpace(c)) break;
          if (c === '"') this.phase = 'string';
          else if (c === '{' && this.mode === 'custom') this.phase = 'obj-key-wait';
          else {
            this.phase = 'raw';
            delta += this.raw.push(c);
            if (this.raw.done) this.phase = 'done';
          }
          break;
        case 'raw':
          if (this.raw.wouldEndBefore(c)) {
            this.phase = 'done';
            i--; // the char after the value belongs to the envelope
            break;
          }
          delta += this.raw.push(c);
          if (this.raw.done) this.phase = 'done';
          break;
        case 'string':
          delta += this.string.push(c);
          if (this.string.done) this.phase = 'done';
          break;
        case 'obj-key-wait':
          if (c === '"') this.phase = 'obj-key';
          else if (c === '}') this.phase = 'done';
          break;
        case 'obj-key':
          this.string.push(c);
          if (this.string.done) {
            this.string = new JsonStringDecoder();
            this.phase = 'obj-colon';
          }
          break;
        case 'obj-colon':
          if (c === ':') this.phase = 'obj-value';
          break;
        case 'obj-value':
          if (isSpace(c)) break;
          if (c === '"') {
            this.phase = 'string';
            this.afterStringInObject = true;
          } else {
            this.phase = 'raw';
            this.afterRawInObject = true;
            delta += this.raw.push(c);
          }
          break;
        case 'obj-rest':
          // Skip the rest of the object (other keys) up to its closing brace.
          this.rest.push(c);
          if (this.rest.done) this.phase = 'done';
          break;
      }
      if (this.phase === 'done' && (this.afterStringInObject || this.afterRawInObject)) {
        this.afterStringInObject = false;
        this.afterRawInObject = false;
        this.rest.enterObject();
        this.phase = 'obj-rest';
      }
    }
    return { delta: delta + this.string.flushPending(this.phase === 'done' || this.phase === 'obj-rest'), consumed: i };
  }
}

function isSpace(c: string): boolean {
  return c === ' ' || c === '\n' || c === '\r' || c === '\t';
}

/** Tracks one JSON value char by char (strings, nesting) to know where it ends. */
class JsonValueScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private started = false;
  private scalar = false;
  done = false;

  /** Start as if an object's `{` had been read (to skip the rest of an object). */
  enterObject(): void {
    this.started = true;
    this.depth = 1;
  }

  /** A scalar (number, true, false, null) ends at the first char that cannot continue it. */
  wouldEndBefore(c: string): boolean {
    return this.scalar && !/[0-9a-zA-Z+\-.]/.test(c);
  }

  push(c: string): string {
    if (!this.started) {
      this.started = true;
      if (c === '{' || c === '[') this.depth = 1;
      else if (c === '"') this.inString = true;
      else this.scalar = true;
      return c;
    }
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === '\\') this.escaped = true;
      else if (c === '"') {
        this.inString = false;
        if (this.depth === 0) this.done = true;
      }
      return c;
    }
    if (c === '"') this.inString = true;
    else if (c === '{' || c === '[') this.depth++;
    else if (c === '}' || c === ']') {
      this.depth--;
      if (this.depth === 0) this.done = true;
    }
    return c;
  }
}

/**
 * Decodes a JSON string body (after its opening quote) char by char. A high surrogate from `\uD83D` is held
 * until its low half arrives, so no delta ever carries half a character.
 */
export class JsonStringDecoder {
  private escape: string | null = null;
  private highSurrogate: string | null = null;
  done = false;

  push(c: string): string {
    if (this.done) return '';
    if (this.escape !== null) {
      this.escape += c;
      if (this.escape.length === 1) {
        if (c === 'u') return '';
        this.escape = null;
        return this.emit(SIMPLE_ESCAPES[c] ?? c);
      }
      if (this.escape.length < 5) return '';
      const code = Number.parseInt(this.escape.slice(1), 16);
      this.escape = null;
      return this.emit(Number.isNaN(code) ? '\uFFFD' : String.fromCharCode(code));
    }
    if (c === '\\') {
      this.escape = '';
      return '';
    }
    if (c === '"') {
      this.done = true;
      return this.flushPending(true);
    }
    return this.emit(c);
  }

  /** At the end, a high surrogate that never got its partner is given up as U+FFFD. */
  flushPending(atEnd: boolean): string {
    if (!atEnd || this.highSurrogate === null) return '';
    this.highSurrogate = null;
    return '\uFFFD';
  }

  private emit(unit: string): string {
    const code = unit.charCodeAt(0);
    let out = '';
    if (this.highSurrogate !== null) {
      if (unit.length === 1 && code >= 0xdc00 && code <= 0xdfff) {
        out = this.highSurrogate + unit;
        this.highSurrogate = null;
        return out;
      }
      out = '\uFFFD';
      this.highSurrogate = null;
    }
    if (unit.length === 1 && code >= 0xd800 && code <= 0xdbff) {
      this.highSurrogate = unit;
      return out;
    }
    return out + unit;
  }
}

const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
