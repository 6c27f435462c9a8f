// What the format parsers (the Hermes parser in output-parser.ts, json-calls-parser.ts, name-args-parser.ts,
// harmony-parser.ts) do the same way, written once: text streamed up to the next marker, and a tool call once its
// name is known (is the name declared, its `call.start` with the namespace split off, its arguments streamed through
// an ArgumentsDecoder, its end, or its end where the output stopped; or a call read whole when its keys came in
// another order), and the buffered push loop of the parsers without reasoning (BufferedCallParser).
import { ArgumentsDecoder } from './arguments-decoder.ts';
import { findFirst, heldPrefix } from './marker-scan.ts';
import type { ParseEvent } from './parse-event.ts';

/** The OutputParser options that decide what a call is (see output-parser.ts). */
export interface CallOptions {
  toolCalls: boolean;
  declaredNames?: ReadonlySet<string>;
  namespaced?: ReadonlyMap<string, { namespace: string; name: string }>;
  customNames: ReadonlySet<string>;
}

/**
 * `buffer`'s text up to the first of `markers`, sent as `kind` deltas (the end that could still begin a marker is
 * held back); returns the marker found (null: none yet) and what is left of the buffer after it.
 */
export function textUntil(buffer: string, markers: readonly string[], kind: 'text.delta' | 'reasoning.delta', events: ParseEvent[]): { marker: string | null; rest: string } {
  const hit = findFirst(buffer, markers);
  const end = hit === null ? buffer.length - heldPrefix(buffer, markers) : hit.index;
  if (end > 0) events.push({ kind, text: buffer.slice(0, end) });
  return hit === null ? { marker: null, rest: buffer.slice(end) } : { marker: hit.marker, rest: buffer.slice(hit.index + hit.marker.length) };
}

/** The tool call being read: started by name, its arguments streamed as they are written, ended once. */
export class CallStream {
  private args: ArgumentsDecoder | null = null;

  constructor(private readonly options: CallOptions) {}

  /** Whether a call may name `name` (a declared tool; any name when the request declared none). */
  declared(name: string): boolean {
    return this.options.declaredNames === undefined || this.options.declaredNames.has(name);
  }

  /** `call.start` for `name` (a namespace member's as its name and namespace); its arguments come next. */
  start(name: string, events: ParseEvent[]): void {
    const custom = this.options.customNames.has(name);
    const member = this.options.namespaced?.get(name);
    events.push(member ? { kind: 'call.start', name: member.name, namespace: member.namespace, custom } : { kind: 'call.start', name, custom });
    this.args = new ArgumentsDecoder(custom ? 'custom' : 'function');
  }

  /** Feeds the open call's arguments from `text`: how many chars they took, and whether they are complete. */
  pushArgs(text: string, events: ParseEvent[]): { consumed: number; done: boolean } {
    const decoder = this.args!;
    const { delta, consumed } = decoder.pushUntilDone(text);
    if (delta) events.push({ kind: 'call.delta', text: delta });
    return { consumed, done: decoder.done };
  }

  /** `call.end` of a call whose arguments are complete (`complete: false`: one its message ended inside them). */
  end(events: ParseEvent[], complete = true): void {
    events.push({ kind: 'call.end', complete });
    this.args = null;
  }

  /** The output stopped inside the call's arguments: `rest` goes to them, then `call.end` (complete if they are). */
  cutOff(rest: string, events: ParseEvent[]): void {
    const decoder = this.args!;
    const delta = decoder.push(rest);
    if (delta) events.push({ kind: 'call.delta', text: delta });
    events.push({ kind: 'call.end', complete: decoder.done });
    this.args = null;
  }

  /** The output stopped inside the call: in its arguments (`rest` the unread text: cutOff) or after them (end). */
  stopped(part: 'call-args' | 'call-tail', rest: string, events: ParseEvent[]): void {
    if (part === 'call-args') this.cutOff(rest, events);
    else this.end(events);
  }

  /** A call read whole (its keys in another order): its start, all its arguments, its end. */
  whole(call: { name: string; argumentsJson: string }, events: ParseEvent[]): void {
    this.start(call.name, events);
    const delta = this.args!.push(call.argumentsJson);
    if (delta) events.push({ kind: 'call.delta', text: delta });
    this.end(events);
  }
}

/**
 * What the parsers of the formats without reasoning (json-calls-parser.ts, name-args-parser.ts) share: each token's
 * text joins a buffer that `step` reads as far as it can decide; `finish` takes what is left (`takeBuffer`).
 */
export abstract class BufferedCallParser {
  protected buffer = '';

  get reasoningTokens(): number {
    return 0;
  }

  /** Feed one token's text. */
  push(text: string): ParseEvent[] {
    const events: ParseEvent[] = [];
    this.buffer += text;
    while (this.step(events));
    return events;
  }

  /** The output ended: flush what is held and close what is open. */
  abstract finish(): ParseEvent[];

  /** One step of the state machine over the buffer; false when it must wait for more text. */
  protected abstract step(events: ParseEvent[]): boolean;

  /** What the buffer holds, emptying it. */
  protected takeBuffer(): string {
    const rest = this.buffer;
    this.buffer = '';
    return rest;
  }
}

/** A call's JSON object read whole: its name and its arguments (under the first of `argumentKeys` present), or null. */
export function parseWholeCall(body: string, argumentKeys: readonly string[]): { name: string; argumentsJson: string } | null {
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const fields = value as { [key: string]: unknown };
    if (typeof fields.name !== 'string') return null;
    const args = argumentKeys.map((key) => fields[key]).find((v) => v !== undefined && v !== null);
    return { name: fields.name, argumentsJson: JSON.stringify(args ?? {}) };
  } catch {
    return null;
  }
}
