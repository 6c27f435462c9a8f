// The output parser of Harmony (gpt-oss), fed one token's text at a time. The model's turn is a run of messages,
// each `<|start|>assistant` (absent for the first: the prompt opened it) + a header + `<|message|>` + a body up
// to `<|end|>` (or the turn's end, `<|call|>`/`<|return|>`, stop tokens that never reach the text). The header
// names the channel (`<|channel|>analysis`), a recipient (` to=functions.x`, in the channel part as the model
// writes it or in the role part as gpt-oss's template writes it) and a content type (`<|constrain|>json`, or a
// bare ` json`). Each message maps as sglang's harmony_utils maps it:
// - analysis -> reasoning (reasoning.start / deltas / end);
// - commentary without a recipient -> a message with phase `commentary`;
// - final -> a message with phase `final_answer`;
// - `to=functions.x` -> a call of `x` (`functions.` stripped as a prefix only: dotted names survive), its
//   arguments streamed as they come (a custom tool's `input` decoded from the shim), when tools are on offer and
//   `x` is declared; otherwise the body is commentary text;
// - `to=python` -> a code-interpreter call whose code is the body (code.start / deltas / end);
// - any other recipient (`browser.search`, …) -> commentary text.
// A message cut off (max_output_tokens, an abort) closes what it opened, `complete: false`. A header never reaches
// the text; an output that does not start like a header at all (a model ignoring the format) is final text.
// A call is read as the other formats' parsers read theirs (call-stream.ts).
import { harmonyFunctionName, HARMONY_TOKENS as T } from '../../common/harmony.ts';
import { CallStream, type CallOptions } from './call-stream.ts';
import { findFirst, heldPrefix } from './marker-scan.ts';
import type { ParseEvent } from './parse-event.ts';

/** The header of one message, as parsed. */
export interface HarmonyHeader {
  role: string;
  channel: string;
  recipient: string | null;
  contentType: string | null;
}

/** A header longer than this without `<|message|>` is no header: its text is final text. */
const MAX_HEADER_CHARS = 1024;

/** What the body of the open message is being read as. */
type Body = 'reasoning' | 'text' | 'call-args' | 'call-tail' | 'code';

type State = { kind: 'header' } | { kind: 'body'; body: Body } | { kind: 'between' } | { kind: 'plain' };

const BODY_ENDS = [T.end, T.call, T.return, T.start];

export class HarmonyParser {
  private state: State = { kind: 'header' };
  private buffer = '';
  private readonly call: CallStream;
  /** Where the arguments' JSON is (inside a string or not), to tell a message end from string content. */
  private strings = new JsonStringState();
  private phase: 'commentary' | 'final_answer' = 'final_answer';
  private tokensInReasoning = 0;

  constructor(private readonly options: CallOptions) {
    this.call = new CallStream(options);
  }

  get reasoningTokens(): number {
    return this.tokensInReasoning;
  }

  push(text: string): ParseEvent[] {
    const events: ParseEvent[] = [];
    let touched = this.inReasoning();
    this.buffer += text;
    while (this.step(events)) if (this.inReasoning()) touched = true;
    if (touched || this.inReasoning()) this.tokensInReasoning++;
    return events;
  }

  finish(): ParseEvent[] {
    const events: ParseEvent[] = [];
    const rest = this.buffer;
    this.buffer = '';
    const state = this.state;
    this.state = { kind: 'between' };
    if (state.kind === 'plain') {
      if (rest) events.push({ kind: 'text.delta', text: rest, phase: 'final_answer' });
      return events;
    }
    if (state.kind !== 'body') return events; // a header cut off opened nothing
    switch (state.body) {
      case 'reasoning':
        if (rest) events.push({ kind: 'reasoning.delta', text: rest });
        events.push({ kind: 'reasoning.end', complete: false });
        break;
      case 'text':
        // The pipeline closes the open message with the response's status.
        if (rest) events.push({ kind: 'text.delta', text: rest, phase: this.phase });
        break;
      case 'call-args':
      case 'call-tail':
        this.call.stopped(state.body, rest, events);
        break;
      case 'code':
        // Ended by `<|call|>` (a stop) or cut off: the pipeline closes it with the response's status.
        if (rest) events.push({ kind: 'code.delta', text: rest });
        break;
    }
    return events;
  }

  private inReasoning(): boolean {
    return this.state.kind === 'body' && this.state.body === 'reasoning';
  }

  private step(events: ParseEvent[]): boolean {
    const state = this.state;
    switch (state.kind) {
      case 'plain':
        if (this.buffer) events.push({ kind: 'text.delta', text: this.buffer, phase: 'final_answer' });
        this.buffer = '';
        return false;
      case 'between': {
        // After a message's end: the next one's `<|start|>`, or straight its `<|channel|>` (anything else before
        // it is dropped).
        const hit = findFirst(this.buffer, [T.start, T.channel]);
        if (hit === null) {
          this.buffer = this.buffer.slice(this.buffer.length - heldPrefix(this.buffer, [T.start, T.channel]));
          return false;
        }
        this.buffer = this.buffer.slice(hit.marker === T.start ? hit.index + T.start.length : hit.index);
        this.state = { kind: 'header' };
        return true;
      }
      case 'header': {
        const lead = this.buffer.replace(/^\s+/, '');
        if (lead && !lead.startsWith('<|') && !'<|'.startsWith(lead) && !/^assistant/.test(lead) && !'assistant'.startsWith(lead)) {
          // No header at all: the model ignored the format.
          this.state = { kind: 'plain' };
          return true;
        }
        const end = this.buffer.indexOf(T.message);
        if (end < 0) {
          if (this.buffer.length > MAX_HEADER_CHARS) this.state = { kind: 'plain' };
          return this.buffer.length > MAX_HEADER_CHARS;
        }
        const header = parseHarmonyHeader(this.buffer.slice(0, end));
        this.buffer = this.buffer.slice(end + T.message.length);
        this.open(header, events);
        return true;
      }
      case 'body':
        return this.body(state.body, events);
    }
  }

  private open(header: HarmonyHeader, events: ParseEvent[]): void {
    const { recipient } = header;
    if (recipient !== null) {
      const name = harmonyFunctionName(recipient);
      if (name !== null && this.options.toolCalls && this.call.declared(name)) {
        this.call.start(name, events);
        this.strings = new JsonStringState();
        this.state = { kind: 'body', body: 'call-args' };
        return;
      }
      if (recipient === 'python' || recipient.startsWith('python.')) {
        events.push({ kind: 'code.start' });
        this.state = { kind: 'body', body: 'code' };
        return;
      }
      this.phase = 'commentary';
      this.state = { kind: 'body', body: 'text' };
      return;
    }
    if (header.channel === 'analysis') {
      events.push({ kind: 'reasoning.start' });
      this.state = { kind: 'body', body: 'reasoning' };
      return;
    }
    this.phase = header.channel === 'commentary' ? 'commentary' : 'final_answer';
    this.state = { kind: 'body', body: 'text' };
  }

  /** Reads the open message's body; false when it must wait for more text. */
  private body(body: Body, events: ParseEvent[]): boolean {
    if (body === 'call-args') {
      // Up to the end of the arguments' JSON value, or a message end outside its strings (should the JSON never
      // close): a marker inside a JSON string is string content, as the grammar lets the model write it there.
      const hit = this.strings.firstOutside(this.buffer, BODY_ENDS);
      const upTo = hit === null ? this.buffer.length - this.strings.heldOutside(this.buffer, BODY_ENDS) : hit.index;
      const { consumed, done } = this.call.pushArgs(this.buffer.slice(0, upTo), events);
      this.strings.advance(this.buffer.slice(0, consumed));
      this.buffer = this.buffer.slice(consumed);
      if (done) {
        this.state = { kind: 'body', body: 'call-tail' };
        return true;
      }
      if (hit === null) return false;
      // The message ended inside the arguments.
      this.endMessage(hit.marker, events);
      return true;
    }
    const hit = findFirst(this.buffer, BODY_ENDS);
    const upTo = hit === null ? this.buffer.length - heldPrefix(this.buffer, BODY_ENDS) : hit.index;
    const text = this.buffer.slice(0, upTo);
    this.buffer = this.buffer.slice(upTo);
    if (text) {
      if (body === 'reasoning') events.push({ kind: 'reasoning.delta', text });
      else if (body === 'text') events.push({ kind: 'text.delta', text, phase: this.phase });
      else if (body === 'code') events.push({ kind: 'code.delta', text });
      // call-tail: what follows the arguments' JSON up to the message end is dropped.
    }
    if (hit === null) return false;
    this.endMessage(hit.marker, events);
    return true;
  }

  /** The open message ends at `marker` (which is consumed, except a `<|start|>` that opens the next message). */
  private endMessage(marker: string, events: ParseEvent[]): void {
    const body = this.state.kind === 'body' ? this.state.body : null;
    if (marker !== T.start) this.buffer = this.buffer.slice(marker.length);
    if (body === 'reasoning') events.push({ kind: 'reasoning.end', complete: true });
    else if (body === 'text') events.push({ kind: 'text.end' });
    // Inside the arguments the call is cut short; after them (call-tail) it is whole.
    else if (body === 'call-args' || body === 'call-tail') this.call.end(events, body === 'call-tail');
    else if (body === 'code') events.push({ kind: 'code.end', complete: true });
    this.state = { kind: 'between' };
  }
}

/**
 * A message header (what comes before `<|message|>`): `assistant`, `<|channel|>commentary`, ` to=functions.x`
 * in either part, `<|constrain|>json` or a bare trailing ` json`. A leading `<|start|>` is skipped.
 */
export function parseHarmonyHeader(text: string): HarmonyHeader {
  let rest = text.replace(/^\s+/, '');
  if (rest.startsWith(T.start)) rest = rest.slice(T.start.length);
  const channelAt = rest.indexOf(T.channel);
  const rolePart = channelAt < 0 ? rest : rest.slice(0, channelAt);
  const channelPart = channelAt < 0 ? '' : rest.slice(channelAt + T.channel.length);
  const recipientIn = (part: string) => /(?:^|\s)to=(\S+?)(?=\s|<\||$)/.exec(part)?.[1] ?? null;
  const recipient = recipientIn(channelPart) ?? recipientIn(rolePart);
  const role = rolePart.trim().split(/\s+/)[0] ?? '';
  const channel = channelPart.replace(/^\s+/, '').split(/[\s<]/)[0] ?? '';
  let contentType: string | null = null;
  const constrainAt = channelPart.indexOf(T.constrain);
  if (constrainAt >= 0) contentType = channelPart.slice(constrainAt + T.constrain.length).trim().split(/\s+/)[0] || null;
  else {
    const words = channelPart.replace(/(?:^|\s)to=\S+/, ' ').trim().split(/\s+/);
    if (words.length > 1) contentType = words.at(-1)!;
  }
  return { role, channel, recipient, contentType };
}

/** Whether JSON text read so far ends inside a string; finds markers that stand outside strings. */
class JsonStringState {
  private inString = false;
  private escaped = false;

  advance(text: string): void {
    for (const c of text) this.step(c);
  }

  /** The first of `markers` in `text` that starts outside a JSON string (the state is not advanced). */
  firstOutside(text: string, markers: readonly string[]): { index: number; marker: string } | null {
    const saved = { inString: this.inString, escaped: this.escaped };
    try {
      for (let i = 0; i < text.length; i++) {
        if (!this.inString) {
          const marker = markers.find((m) => text.startsWith(m, i));
          if (marker) return { index: i, marker };
        }
        this.step(text[i]!);
      }
      return null;
    } finally {
      this.inString = saved.inString;
      this.escaped = saved.escaped;
    }
  }

  /** How many chars at the end of `text` could begin a marker outside a string (held until the next token). */
  heldOutside(text: string, markers: readonly string[]): number {
    const keep = heldPrefix(text, markers);
    if (keep === 0) return 0;
    const saved = { inString: this.inString, escaped: this.escaped };
    this.advance(text.slice(0, text.length - keep));
    const outside = !this.inString;
    this.inString = saved.inString;
    this.escaped = saved.escaped;
    return outside ? keep : 0;
  }

  private step(c: string): void {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === '\\') this.escaped = true;
      else if (c === '"') this.inString = false;
    } else if (c === '"') this.inString = true;
  }
}
