// Incremental parser over the model's output text, fed one token's text at a time. It splits the text into
// reasoning (`<think>…</think>`, or from the first token when the prompt already opened the block), Hermes/Qwen
// tool calls (`<tool_call>{"name": …, "arguments": …}</tool_call>`, several in a turn being parallel calls) and
// plain text, and streams each piece as soon as it is known. Markers split across tokens are held back until
// they are complete. Tool-call arguments stream as the model writes them; a custom tool's `input` is decoded
// from the shim's JSON string value incrementally (escapes, `\uXXXX`, surrogate pairs), so the deltas add up to
// exactly the final input. A `<tool_call>` block that is no call (no tools offered, a name not declared or not
// decodable, JSON that does not parse) is kept as text without its markers; stray end markers are dropped, so
// no template marker reaches the text or the reasoning. A call ends at the first end marker after its arguments: the arguments are read
// JSON-aware (a marker inside a string is string content), and under the tool-call constraint a call's JSON
// never holds the marker raw anyway (it must write `<\/tool_call>` or `</tool_call\u003e`), so the first marker
// after `<tool_call>` is the end for this parser and for any other reader alike.
import type { ModelInfo } from '../engine/types.ts';

export type ParseEvent =
  | { kind: 'reasoning.start' }
  | { kind: 'reasoning.delta'; text: string }
  /** `complete` false when the output stopped before the block was closed. */
  | { kind: 'reasoning.end'; complete: boolean }
  | { kind: 'text.delta'; text: string }
  /** `name` as the client declared it; `namespace` set for a member of a `namespace` tool (tool-namespaces.ts). */
  | { kind: 'call.start'; name: string; custom: boolean; namespace?: string }
  | { kind: 'call.delta'; text: string }
  /** `complete` false when the output stopped before the call's arguments were whole. */
  | { kind: 'call.end'; complete: boolean };

export interface OutputParserOptions {
  markers: ModelInfo['markers'];
  /**
   * Recognise tool calls (only when the request offers tools). Without tools, a `<tool_call>…</tool_call>` block
   * is text, its markers dropped.
   */
  toolCalls: boolean;
  /**
   * The names a call may name (the tools offered, as the model sees them). A call naming another tool, or a name
   * that does not decode, is no call: its text is kept as text, without the markers. Absent: any name.
   */
  declaredNames?: ReadonlySet<string>;
  /** Qualified names of namespace members (as the model sees them) -> the name and namespace the call carries. */
  namespaced?: ReadonlyMap<string, { namespace: string; name: string }>;
  /** Names of custom tools: their calls decode `input` from the shim's arguments. */
  customNames: ReadonlySet<string>;
  /** The prompt ended inside an opened reasoning block, so the output starts as reasoning. */
  startsInReasoning: boolean;
}

/** `call-text`: inside a `<tool_call>` block that is no call (no tools, an undeclared name): text up to its end marker. */
type State = 'text' | 'reasoning' | 'call-head' | 'call-args' | 'call-tail' | 'call-text';

export class OutputParser {
  private state: State;
  private buffer = '';
  private args: ArgumentsDecoder | null = null;
  private tokensInReasoning = 0;

  /** `reasoning.start` owed when the output starts inside reasoning (sent with the first push). */
  private pendingStart: boolean;

  constructor(private readonly options: OutputParserOptions) {
    this.state = options.startsInReasoning ? 'reasoning' : 'text';
    this.pendingStart = options.startsInReasoning;
  }

  /** Tokens that belonged to reasoning (the markers included): usage's `reasoning_tokens`. */
  get reasoningTokens(): number {
    return this.tokensInReasoning;
  }

  /** Feed one token's text. */
  push(text: string): ParseEvent[] {
    const events: ParseEvent[] = [];
    if (this.pendingStart) {
      events.push({ kind: 'reasoning.start' });
      this.pendingStart = false;
    }
    const wasReasoning = this.state === 'reasoning';
    this.buffer += text;
    let touchedReasoning = wasReasoning;
    for (;;) {
      const before = this.state;
      const progressed = this.step(events);
      if (this.state === 'reasoning' || before === 'reasoning') touchedReasoning = true;
      if (!progressed) break;
    }
    if (touchedReasoning) this.tokensInReasoning++;
    return events;
  }

  /** The output ended (`stop`, `length`, an abort or a fault): flush what is held and close what is open. */
  finish(): ParseEvent[] {
    const events: ParseEvent[] = [];
    if (this.pendingStart) {
      events.push({ kind: 'reasoning.start' });
      this.pendingStart = false;
    }
    const rest = this.buffer;
    this.buffer = '';
    switch (this.state) {
      case 'text':
        if (rest) events.push({ kind: 'text.delta', text: rest });
        break;
      case 'reasoning':
        if (rest) events.push({ kind: 'reasoning.delta', text: rest });
        events.push({ kind: 'reasoning.end', complete: false });
        break;
      case 'call-head':
        // A call cut off before its name was known is dropped: there is no item to close.
        break;
      case 'call-text':
        if (rest) events.push({ kind: 'text.delta', text: rest });
        break;
      case 'call-args': {
        const delta = this.args!.push(rest);
        if (delta) events.push({ kind: 'call.delta', text: delta });
        events.push({ kind: 'call.end', complete: this.args!.done });
        break;
      }
      case 'call-tail':
        events.push({ kind: 'call.end', complete: true });
        break;
    }
    this.state = 'text';
    return events;
  }

  private callStart(name: string, custom: boolean): ParseEvent {
    const member = this.options.namespaced?.get(name);
    return member ? { kind: 'call.start', name: member.name, namespace: member.namespace, custom } : { kind: 'call.start', name, custom };
  }

  private declared(name: string): boolean {
    return this.options.declaredNames === undefined || this.options.declaredNames.has(name);
  }

  /** One step of the state machine over the buffer; false when it must wait for more text. */
  private step(events: ParseEvent[]): boolean {
    const { markers } = this.options;
    switch (this.state) {
      case 'text': {
        // Every marker is recognised; the end markers and (without tools) the call markers never reach the text.
        const candidates = [markers.thinkStart, markers.toolCallStart, markers.thinkEnd, markers.toolCallEnd];
        const hit = findFirst(this.buffer, candidates);
        if (hit === null) {
          const keep = heldPrefix(this.buffer, candidates);
          const out = this.buffer.slice(0, this.buffer.length - keep);
          if (out) events.push({ kind: 'text.delta', text: out });
          this.buffer = this.buffer.slice(out.length);
          return false;
        }
        const before = this.buffer.slice(0, hit.index);
        if (before) events.push({ kind: 'text.delta', text: before });
        this.buffer = this.buffer.slice(hit.index + hit.marker.length);
        if (hit.marker === markers.thinkStart) {
          events.push({ kind: 'reasoning.start' });
          this.state = 'reasoning';
        } else if (hit.marker === markers.toolCallStart) {
          this.state = this.options.toolCalls ? 'call-head' : 'call-text';
        }
        // A stray end marker (`</think>`, `</tool_call>` with nothing open) is dropped.
        return true;
      }
      case 'reasoning': {
        // A stray `<think>` inside reasoning is dropped; the block ends at the first `</think>`.
        const hit = findFirst(this.buffer, [markers.thinkEnd, markers.thinkStart]);
        if (hit === null) {
          const keep = heldPrefix(this.buffer, [markers.thinkEnd, markers.thinkStart]);
          const out = this.buffer.slice(0, this.buffer.length - keep);
          if (out) events.push({ kind: 'reasoning.delta', text: out });
          this.buffer = this.buffer.slice(out.length);
          return false;
        }
        const before = this.buffer.slice(0, hit.index);
        if (before) events.push({ kind: 'reasoning.delta', text: before });
        this.buffer = this.buffer.slice(hit.index + hit.marker.length);
        if (hit.marker === markers.thinkStart) return true;
        events.push({ kind: 'reasoning.end', complete: true });
        this.state = 'text';
        return true;
      }
      case 'call-text': {
        const hit = findFirst(this.buffer, [markers.toolCallEnd]);
        if (hit === null) {
          const keep = heldPrefix(this.buffer, [markers.toolCallEnd]);
          const out = this.buffer.slice(0, this.buffer.length - keep);
          if (out) events.push({ kind: 'text.delta', text: out });
          this.buffer = this.buffer.slice(out.length);
          return false;
        }
        const before = this.buffer.slice(0, hit.index);
        if (before) events.push({ kind: 'text.delta', text: before });
        this.buffer = this.buffer.slice(hit.index + hit.marker.length);
        this.state = 'text';
        return true;
      }
      case 'call-head': {
        const head = /^\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"arguments"\s*:/.exec(this.buffer);
        if (head) {
          const name = decodeName(head[1]!);
          if (name === null || !this.declared(name)) {
            // No call: the block is text (the buffer still holds its head), up to its end marker.
            this.state = 'call-text';
            return true;
          }
          const custom = this.options.customNames.has(name);
          events.push(this.callStart(name, custom));
          this.args = new ArgumentsDecoder(custom ? 'custom' : 'function');
          this.buffer = this.buffer.slice(head[0].length);
          this.state = 'call-args';
          return true;
        }
        const end = this.buffer.indexOf(markers.toolCallEnd);
        if (end < 0) return false;
        // The envelope closed in another shape (e.g. "arguments" before "name"): parse it whole.
        const body = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + markers.toolCallEnd.length);
        this.state = 'text';
        const call = parseWholeCall(body);
        if (call === null || !this.declared(call.name)) {
          if (body) events.push({ kind: 'text.delta', text: body });
          return true;
        }
        const custom = this.options.customNames.has(call.name);
        const decoder = new ArgumentsDecoder(custom ? 'custom' : 'function');
        events.push(this.callStart(call.name, custom));
        const delta = decoder.push(call.argumentsJson);
        if (delta) events.push({ kind: 'call.delta', text: delta });
        events.push({ kind: 'call.end', complete: true });
        return true;
      }
      case 'call-args': {
        const decoder = this.args!;
        const { delta, consumed } = decoder.pushUntilDone(this.buffer);
        if (delta) events.push({ kind: 'call.delta', text: delta });
        this.buffer = this.buffer.slice(consumed);
        if (!decoder.done) return false;
        this.state = 'call-tail';
        return true;
      }
      case 'call-tail': {
        const end = this.buffer.indexOf(markers.toolCallEnd);
        if (end < 0) {
          const keep = heldPrefix(this.buffer, [markers.toolCallEnd]);
          this.buffer = this.buffer.slice(this.buffer.length - keep);
          return false;
        }
        this.buffer = this.buffer.slice(end + markers.toolCallEnd.length);
        events.push({ kind: 'call.end', complete: true });
        this.args = null;
        this.state = 'text';
        return true;
      }
    }
  }
}

function findFirst(text: string, markers: readonly string[]): { index: number; marker: string } | null {
  let best: { index: number; marker: string } | null = null;
  for (const marker of markers) {
    if (!marker) continue;
    const index = text.indexOf(marker);
    if (index >= 0 && (best === null || index < best.index)) best = { index, marker };
  }
  return best;
}

/** How many chars at the end of `text` could be the start of one of the markers. */
function heldPrefix(text: string, markers: readonly string[]): number {
  let keep = 0;
  for (const marker of markers) {
    for (let k = Math.min(marker.length - 1, text.length); k > keep; k--) {
      if (text.endsWith(marker.slice(0, k))) {
        keep = k;
        break;
      }
    }
  }
  return keep;
}

/** A call's name as the model wrote it inside its JSON string; null when it does not decode (`"\uZZZZ"`). */
function decodeName(raw: string): string | null {
  try {
    const name: unknown = JSON.parse(`"${raw}"`);
    return typeof name === 'string' ? name : null;
  } catch {
    return null;
  }
}

function parseWholeCall(body: string): { name: string; argumentsJson: string } | null {
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value !== 'object' || value === null) return null;
    const { name, arguments: args } = value as { name?: unknown; arguments?: unknown };
    if (typeof name !== 'string') return null;
    return { name, argumentsJson: JSON.stringify(args ?? {}) };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------- arguments

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
