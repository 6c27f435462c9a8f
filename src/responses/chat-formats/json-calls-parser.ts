// The output parser of the chat formats whose tool calls are plain JSON objects (Llama 3.x, Mistral): the same
// events as the Hermes parser (output-parser.ts), fed one token's text at a time. What a call looks like comes
// from the format's ToolCallSyntax (src/common/chat-format.ts):
// - Llama 3.x: `{"name": …, "parameters": {…}}` as the answer's first non-space text, or after `<|python_tag|>`;
//   several separated by `;`.
// - Mistral: `[TOOL_CALLS]` then `[{"name": …, "arguments": {…}, "id"?: …}, …]`.
// - Gemma 3 (a prompt convention): ```tool_call\n{"name": …, "arguments": {…}}\n``` per call.
// - Phi-4-mini: `<|tool_call|>[{"name": …, "arguments": {…}}, …]<|/tool_call|>` (the list optional).
// Mistral v11's `[TOOL_CALLS]name[ARGS]{…}` has its own parser (name-args-parser.ts).
// A call's arguments stream as they are written (a custom tool's `input` decoded as it comes, as for Hermes). A
// call whose keys come in another order is read whole once its object closes. A call naming an undeclared tool,
// or JSON that is no call, is kept as text (the opening marker dropped), and so is everything after it (most of
// these formats have no end marker to resume from). These formats have no reasoning block.
import type { ToolCallSyntax } from '../../common/chat-format.ts';
import { BufferedCallParser, CallStream, parseWholeCall, textUntil, type CallOptions } from './call-stream.ts';
import { decodeName } from './marker-scan.ts';
import type { ParseEvent } from './parse-event.ts';

/** The OutputParser options this parser reads (see output-parser.ts). */
export type JsonCallsParserOptions = CallOptions;

/** Where a call's arguments may stand: Llama writes `parameters`, the others `arguments`. */
const ARGUMENT_KEYS = ['arguments', 'parameters'] as const;

type State = 'start' | 'text' | 'calls' | 'call-head' | 'call-args' | 'call-tail';

export class JsonCallsParser extends BufferedCallParser {
  private state: State;
  private readonly call: CallStream;
  private tail = new ObjectTailScanner();
  /** Inside the calls after `open`: the list's `[` was read (list syntaxes). */
  private listOpen = false;
  /** A call was no call: the rest is text. */
  private callsOff = false;

  constructor(
    private readonly syntax: ToolCallSyntax,
    options: JsonCallsParserOptions,
  ) {
    super();
    this.state = syntax.bareAtStart && options.toolCalls ? 'start' : 'text';
    this.callsOff = !options.toolCalls;
    this.call = new CallStream(options);
  }

  finish(): ParseEvent[] {
    const events: ParseEvent[] = [];
    const rest = this.takeBuffer();
    switch (this.state) {
      case 'start':
      case 'text':
        if (rest) events.push({ kind: 'text.delta', text: rest });
        break;
      case 'calls':
        // Spaces or separators after the last call.
        break;
      case 'call-head': {
        const call = parseWholeCall(rest, ARGUMENT_KEYS);
        if (call && this.call.declared(call.name)) this.call.whole(call, events);
        else if (rest) events.push({ kind: 'text.delta', text: rest });
        break;
      }
      case 'call-args':
      case 'call-tail':
        this.call.stopped(this.state, rest, events);
        break;
    }
    this.state = 'text';
    return events;
  }

  /** No call after all: the rest of the output is text. */
  private toText(): void {
    this.callsOff = true;
    this.state = 'text';
  }

  protected step(events: ParseEvent[]): boolean {
    switch (this.state) {
      case 'start': {
        const i = this.buffer.search(/\S/);
        if (i < 0) return false;
        if (this.buffer[i] === '{') {
          this.buffer = this.buffer.slice(i);
          this.state = 'call-head';
        } else this.state = 'text';
        return true;
      }
      case 'text': {
        const { marker, rest } = textUntil(this.buffer, [this.syntax.open, ...this.syntax.dropped], 'text.delta', events);
        this.buffer = rest;
        if (marker === null) return false;
        if (marker === this.syntax.open && !this.callsOff) {
          this.state = 'calls';
          this.listOpen = false;
        }
        return true;
      }
      case 'calls':
        return this.stepBetweenCalls();
      case 'call-head':
        return this.stepCallHead(events);
      case 'call-args': {
        const { consumed, done } = this.call.pushArgs(this.buffer, events);
        this.buffer = this.buffer.slice(consumed);
        if (!done) return false;
        this.tail = new ObjectTailScanner();
        this.state = 'call-tail';
        return true;
      }
      case 'call-tail': {
        // The rest of the call's object (an "id" Mistral writes, say) up to its closing brace.
        const consumed = this.tail.push(this.buffer);
        this.buffer = this.buffer.slice(consumed);
        if (!this.tail.done) return false;
        this.call.end(events);
        this.state = 'calls';
        return true;
      }
    }
  }

  /** Inside the calls: list brackets, separators and the close marker, up to the next call's `{`. */
  private stepBetweenCalls(): boolean {
    const { syntax } = this;
    const i = this.buffer.search(/\S/);
    if (i < 0) {
      this.buffer = '';
      return false;
    }
    const c = this.buffer[i]!;
    if (syntax.list && !this.listOpen) {
      // With a close marker the list is optional (Phi-4-mini writes `[…]`, past calls replay as bare objects).
      if (c !== '[' && !syntax.close) return this.giveUp(i);
      this.listOpen = true;
      if (c === '[') this.buffer = this.buffer.slice(i + 1);
      return true;
    }
    if (c === '{') {
      this.buffer = this.buffer.slice(i);
      this.state = 'call-head';
      return true;
    }
    if (syntax.separator && c === syntax.separator) {
      this.buffer = this.buffer.slice(i + 1);
      return true;
    }
    if (syntax.list && c === ']') {
      // The list is closed: what follows is text (or the block's close marker).
      this.buffer = this.buffer.slice(i + 1);
      this.state = syntax.close ? 'calls' : 'text';
      return true;
    }
    if (syntax.close && this.buffer.slice(i).startsWith(syntax.close)) {
      this.buffer = this.buffer.slice(i + syntax.close.length);
      this.state = 'text';
      return true;
    }
    // The start of the close marker: wait for the rest.
    if (syntax.close && syntax.close.startsWith(this.buffer.slice(i))) return false;
    return this.giveUp(i);
  }

  private stepCallHead(events: ParseEvent[]): boolean {
    const head = /^\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"(?:arguments|parameters)"\s*:/.exec(this.buffer);
    if (head) {
      const name = decodeName(head[1]!);
      if (name === null || !this.call.declared(name)) {
        this.toText();
        return true;
      }
      this.call.start(name, events);
      this.buffer = this.buffer.slice(head[0].length);
      this.state = 'call-args';
      return true;
    }
    // Another key order: wait for the object to close, then read it whole.
    const end = objectEnd(this.buffer);
    if (end < 0) return false;
    const call = parseWholeCall(this.buffer.slice(0, end), ARGUMENT_KEYS);
    if (call === null || !this.call.declared(call.name)) {
      this.toText();
      return true;
    }
    this.buffer = this.buffer.slice(end);
    this.call.whole(call, events);
    this.state = 'calls';
    return true;
  }

  /** Between calls, something that is no call: it and the rest are text. */
  private giveUp(at: number): boolean {
    this.buffer = this.buffer.slice(at);
    this.toText();
    return true;
  }
}

/** Reads the rest of an object whose `{` was read, strings and nesting aware; `done` after its `}`. */
class ObjectTailScanner {
  private depth = 1;
  private inString = false;
  private escaped = false;
  done = false;

  /** Returns how many chars it consumed (all, or up to and including the closing brace). */
  push(text: string): number {
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') this.inString = false;
      } else if (c === '"') this.inString = true;
      else if (c === '{' || c === '[') this.depth++;
      else if (c === '}' || c === ']') {
        if (--this.depth === 0) {
          this.done = true;
          return i + 1;
        }
      }
    }
    return text.length;
  }
}

/** The index after the JSON object `text` starts with, or -1 while it is not closed. */
function objectEnd(text: string): number {
  const scanner = new ObjectTailScanner();
  const consumed = scanner.push(text.slice(1));
  return scanner.done ? consumed + 1 : -1;
}
