// The output parser of Mistral's v11+ templates (src/common/chat-format.ts, `mistral-v11`): each call is
// `[TOOL_CALLS]` + the tool's name + `[ARGS]` + the arguments object (`[TOOL_CALLS]name[CALL_ID]id[ARGS]{…}` read
// too), one after another. The same events as the other parsers, fed one token's text at a time: a call's
// arguments stream as they are written (a custom tool's `input` decoded as it comes). A name that is not declared,
// does not end at `[ARGS]` within a name's length, or arguments that are no JSON value keep the rest of the output
// as text (the marker dropped), as the JSON-call parser does. No reasoning.
import type { ToolCallSyntax } from '../../common/chat-format.ts';
import { BufferedCallParser, CallStream, textUntil, type CallOptions } from './call-stream.ts';
import type { ParseEvent } from './parse-event.ts';

const CALL_ID = '[CALL_ID]';
/** A name longer than this without `[ARGS]` after it is no call. */
const MAX_NAME = 256;

type State = 'text' | 'name' | 'args' | 'between';

export class NameArgsParser extends BufferedCallParser {
  private state: State = 'text';
  private readonly call: CallStream;
  /** A call was no call: the rest is text. */
  private callsOff: boolean;
  private readonly argsMarker: string;

  constructor(
    private readonly syntax: ToolCallSyntax,
    options: CallOptions,
  ) {
    super();
    this.call = new CallStream(options);
    this.callsOff = !options.toolCalls;
    this.argsMarker = syntax.nameArgs ?? '[ARGS]';
  }

  finish(): ParseEvent[] {
    const events: ParseEvent[] = [];
    const rest = this.takeBuffer();
    if (this.state === 'text' || this.state === 'name') {
      if (rest) events.push({ kind: 'text.delta', text: rest });
    } else if (this.state === 'args') {
      this.call.cutOff(rest, events);
    }
    this.state = 'text';
    return events;
  }

  protected step(events: ParseEvent[]): boolean {
    switch (this.state) {
      case 'text': {
        const { marker, rest } = textUntil(this.buffer, [this.syntax.open, ...this.syntax.dropped], 'text.delta', events);
        this.buffer = rest;
        if (marker === null) return false;
        if (marker === this.syntax.open && !this.callsOff) this.state = 'name';
        return true;
      }
      case 'name': {
        const at = this.buffer.indexOf(this.argsMarker);
        if (at < 0) {
          if (this.buffer.length > MAX_NAME + CALL_ID.length + MAX_NAME) return this.toText();
          return false;
        }
        let name = this.buffer.slice(0, at);
        const id = name.indexOf(CALL_ID);
        if (id >= 0) name = name.slice(0, id);
        if (!name || name.length > MAX_NAME || !this.call.declared(name)) return this.toText();
        this.call.start(name, events);
        this.buffer = this.buffer.slice(at + this.argsMarker.length);
        this.state = 'args';
        return true;
      }
      case 'args': {
        const { consumed, done } = this.call.pushArgs(this.buffer, events);
        this.buffer = this.buffer.slice(consumed);
        if (!done) return false;
        this.call.end(events);
        this.state = 'between';
        return true;
      }
      case 'between': {
        // Spaces, then the next call's marker; anything else is text.
        const i = this.buffer.search(/\S/);
        if (i < 0) return false;
        const rest = this.buffer.slice(i);
        if (rest.startsWith(this.syntax.open)) {
          this.buffer = rest.slice(this.syntax.open.length);
          this.state = 'name';
          return true;
        }
        if (this.syntax.open.startsWith(rest)) return false;
        this.buffer = rest;
        this.state = 'text';
        return true;
      }
    }
  }

  /** No call after all: the rest of the output is text. */
  private toText(): boolean {
    this.callsOff = true;
    this.state = 'text';
    return true;
  }
}
