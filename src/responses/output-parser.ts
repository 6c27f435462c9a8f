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
import type { ParseEvent } from './chat-formats/parse-event.ts';
import { JsonCallsParser } from './chat-formats/json-calls-parser.ts';
import { HarmonyParser } from './chat-formats/harmony-parser.ts';
import { NameArgsParser } from './chat-formats/name-args-parser.ts';
import { decodeName, heldPrefix } from './chat-formats/marker-scan.ts';
import { CallStream, parseWholeCall, textUntil } from './chat-formats/call-stream.ts';
import { type ChatFormatName, chatFormatByName } from '../common/chat-format.ts';

export type { ParseEvent } from './chat-formats/parse-event.ts';
export { ArgumentsDecoder, JsonStringDecoder } from './chat-formats/arguments-decoder.ts';

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
  /**
   * The model's chat format (ModelInfo.chatFormat); absent: `markers.format`, else Hermes/Qwen. Formats other
   * than Hermes are parsed by their own parser (chat-formats/).
   */
  format?: ChatFormatName;
}

/** `call-text`: inside a `<tool_call>` block that is no call (no tools, an undeclared name): text up to its end marker. */
type State = 'text' | 'reasoning' | 'call-head' | 'call-args' | 'call-tail' | 'call-text';

export class OutputParser {
  private state: State;
  private buffer = '';
  private readonly call: CallStream;
  private tokensInReasoning = 0;

  /** `reasoning.start` owed when the output starts inside reasoning (sent with the first push). */
  private pendingStart: boolean;

  /** The parser of a chat format other than Hermes/Qwen, when the model has one. */
  private readonly delegate: JsonCallsParser | NameArgsParser | HarmonyParser | null = null;

  constructor(private readonly options: OutputParserOptions) {
    this.state = options.startsInReasoning ? 'reasoning' : 'text';
    this.pendingStart = options.startsInReasoning;
    this.call = new CallStream(options);
    const format = chatFormatByName(options.format ?? options.markers.format);
    if (format.name === 'harmony') {
      this.delegate = new HarmonyParser(options);
      this.pendingStart = false;
    } else if (format.name !== 'hermes') {
      // A Mistral template that writes `[THINK]…[/THINK]` (Magistral, Ministral 3 Reasoning) lists them as its
      // reasoning markers: a leading block is read here, before the format's parser; stray ones are dropped.
      const { thinkStart, thinkEnd } = options.markers;
      this.leading = thinkStart && thinkEnd ? { start: thinkStart, end: thinkEnd, state: options.startsInReasoning ? 'in' : 'maybe', buffer: '', tokens: 0 } : null;
      const calls = this.leading ? { ...format.calls, dropped: [...format.calls.dropped, thinkStart, thinkEnd] } : format.calls;
      this.delegate = calls.nameArgs ? new NameArgsParser(calls, options) : new JsonCallsParser(calls, options);
      if (!this.leading) this.pendingStart = false;
    }
  }

  /** A new event list that opens with the `reasoning.start` owed (once) when the output starts inside reasoning. */
  private startEvents(): ParseEvent[] {
    if (!this.pendingStart) return [];
    this.pendingStart = false;
    return [{ kind: 'reasoning.start' }];
  }

  /** A delegate format's leading reasoning block: may still start (`maybe`), open (`in`), or over (`done`). */
  private readonly leading: { start: string; end: string; state: 'maybe' | 'in' | 'done'; buffer: string; tokens: number } | null = null;

  /** Feed a delegate format's text through its leading reasoning block (if it has one) to its parser. */
  private pushLeading(text: string): ParseEvent[] {
    const lead = this.leading!;
    if (lead.state === 'done') return this.delegate!.push(text);
    const events = this.startEvents();
    lead.buffer += text;
    if (lead.state === 'maybe') {
      const head = lead.buffer.trimStart();
      if (head.length < lead.start.length && lead.start.startsWith(head)) return events;
      if (!head.startsWith(lead.start)) {
        lead.state = 'done';
        const rest = lead.buffer;
        lead.buffer = '';
        return [...events, ...this.delegate!.push(rest)];
      }
      events.push({ kind: 'reasoning.start' });
      lead.buffer = head.slice(lead.start.length);
      lead.state = 'in';
    }
    lead.tokens++;
    const { marker, rest } = textUntil(lead.buffer, [lead.end], 'reasoning.delta', events);
    lead.buffer = rest;
    if (marker === null) return events;
    events.push({ kind: 'reasoning.end', complete: true });
    lead.state = 'done';
    lead.buffer = '';
    return rest ? [...events, ...this.delegate!.push(rest)] : events;
  }

  private finishLeading(): ParseEvent[] {
    const lead = this.leading!;
    const events = this.startEvents();
    const rest = lead.buffer;
    lead.buffer = '';
    if (lead.state === 'in') {
      if (rest) events.push({ kind: 'reasoning.delta', text: rest });
      events.push({ kind: 'reasoning.end', complete: false });
    } else if (lead.state === 'maybe' && rest) {
      events.push(...this.delegate!.push(rest));
    }
    lead.state = 'done';
    return [...events, ...this.delegate!.finish()];
  }

  /** Tokens that belonged to reasoning (the markers included): usage's `reasoning_tokens`. */
  get reasoningTokens(): number {
    return this.delegate ? this.delegate.reasoningTokens + (this.leading?.tokens ?? 0) : this.tokensInReasoning;
  }

  /** Feed one token's text. */
  push(text: string): ParseEvent[] {
    if (this.delegate) return this.leading ? this.pushLeading(text) : this.delegate.push(text);
    const events = this.startEvents();
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
    if (this.delegate) return this.leading ? this.finishLeading() : this.delegate.finish();
    const events = this.startEvents();
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
      case 'call-args':
      case 'call-tail':
        this.call.stopped(this.state, rest, events);
        break;
    }
    this.state = 'text';
    return events;
  }

  /** One step of the state machine over the buffer; false when it must wait for more text. */
  private step(events: ParseEvent[]): boolean {
    switch (this.state) {
      case 'text':
        return this.stepText(events);
      case 'reasoning':
        return this.stepReasoning(events);
      case 'call-text': {
        // Inside a block that is no call: text up to its end marker.
        const { marker, rest } = textUntil(this.buffer, [this.options.markers.toolCallEnd], 'text.delta', events);
        this.buffer = rest;
        if (marker === null) return false;
        this.state = 'text';
        return true;
      }
      case 'call-head':
        return this.stepCallHead(events);
      case 'call-args': {
        const { consumed, done } = this.call.pushArgs(this.buffer, events);
        this.buffer = this.buffer.slice(consumed);
        if (!done) return false;
        this.state = 'call-tail';
        return true;
      }
      case 'call-tail': {
        const { toolCallEnd } = this.options.markers;
        const end = this.buffer.indexOf(toolCallEnd);
        if (end < 0) {
          this.buffer = this.buffer.slice(this.buffer.length - heldPrefix(this.buffer, [toolCallEnd]));
          return false;
        }
        this.buffer = this.buffer.slice(end + toolCallEnd.length);
        this.call.end(events);
        this.state = 'text';
        return true;
      }
    }
  }

  private stepText(events: ParseEvent[]): boolean {
    const { markers } = this.options;
    // Every marker is recognised; the end markers and (without tools) the call markers never reach the text.
    const { marker, rest } = textUntil(this.buffer, [markers.thinkStart, markers.toolCallStart, markers.thinkEnd, markers.toolCallEnd], 'text.delta', events);
    this.buffer = rest;
    if (marker === null) return false;
    if (marker === markers.thinkStart) {
      events.push({ kind: 'reasoning.start' });
      this.state = 'reasoning';
    } else if (marker === markers.toolCallStart) {
      this.state = this.options.toolCalls ? 'call-head' : 'call-text';
    }
    // A stray end marker (`</think>`, `</tool_call>` with nothing open) is dropped.
    return true;
  }

  private stepReasoning(events: ParseEvent[]): boolean {
    const { markers } = this.options;
    // A stray `<think>` inside reasoning is dropped; the block ends at the first `</think>`.
    const { marker, rest } = textUntil(this.buffer, [markers.thinkEnd, markers.thinkStart], 'reasoning.delta', events);
    this.buffer = rest;
    if (marker === null) return false;
    if (marker === markers.thinkStart) return true;
    events.push({ kind: 'reasoning.end', complete: true });
    this.state = 'text';
    return true;
  }

  private stepCallHead(events: ParseEvent[]): boolean {
    const { toolCallEnd } = this.options.markers;
    const head = /^\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"arguments"\s*:/.exec(this.buffer);
    if (head) {
      const name = decodeName(head[1]!);
      if (name === null || !this.call.declared(name)) {
        // No call: the block is text (the buffer still holds its head), up to its end marker.
        this.state = 'call-text';
        return true;
      }
      this.call.start(name, events);
      this.buffer = this.buffer.slice(head[0].length);
      this.state = 'call-args';
      return true;
    }
    const end = this.buffer.indexOf(toolCallEnd);
    if (end < 0) return false;
    // The envelope closed in another shape (e.g. "arguments" before "name"): parse it whole.
    const body = this.buffer.slice(0, end);
    this.buffer = this.buffer.slice(end + toolCallEnd.length);
    this.state = 'text';
    const call = parseWholeCall(body, ['arguments']);
    if (call === null || !this.call.declared(call.name)) {
      if (body) events.push({ kind: 'text.delta', text: body });
      return true;
    }
    this.call.whole(call, events);
    return true;
  }
}
