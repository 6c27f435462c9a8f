// The event pipeline: engine events -> output parser -> Responses stream events, numbered from 0. Streamed and
// non-streamed answers both run it; the non-streamed one keeps only the final Response of the terminal event, so
// the two carry the same items byte for byte.
//
// Phase: text whose phase cannot be known yet (tools are on offer and the model may still call one) is held back
// until it is: a tool call starting makes it `commentary`, the end of the turn `final_answer` (sglang's choice).
// Without tools on offer, text is `final_answer` from the first token and streams live. A format that names the
// phase itself (Harmony's commentary and final channels) sends it with the text, which then streams live.
// Text and reasoning segments are trimmed of surrounding whitespace (held back until a non-space follows).
import type { GenerationEvent } from '../engine/types.ts';
import { EngineError } from '../engine/types.ts';
import { isClientError, toApiError } from './errors.ts';
import type { OutputParser, ParseEvent } from './output-parser.ts';
import { responseItemIds } from './item-references.ts';
import { summarizeReasoning } from './reasoning-summary.ts';
import type { ReasoningSealer } from './reasoning-seal.ts';
import type {
  OutputCodeInterpreterCall,
  OutputCustomToolCall,
  OutputFunctionCall,
  OutputItem,
  OutputMessage,
  OutputReasoning,
  ResponseObject,
  StreamEvent,
  UnnumberedStreamEvent,
  Usage,
} from './schema.ts';

export type IdSource = (prefix: 'resp' | 'msg' | 'rs' | 'fc' | 'call' | 'ctc' | 'cmp' | 'item') => string;

export interface PipelineOptions {
  /** The response as created: status `in_progress` (or `queued`), no output. */
  response: ResponseObject;
  ids: IdSource;
  parser: OutputParser;
  /** Hold text until its phase is known (tools are on offer). */
  holdTextForPhase: boolean;
  /** Calls kept in this turn (1 for `parallel_tool_calls: false`, or `max_tool_calls`); later ones are dropped. */
  maxToolCalls: number;
  /** `include: ["reasoning.encrypted_content"]`: seal reasoning into the item. */
  sealReasoning: ReasoningSealer | null;
  now: () => number;
  /** Called with the final response (and what failed it) before the terminal event; a throw makes it `failed`. */
  persist: (final: ResponseObject, fault: unknown) => Promise<void>;
  /** Aborted by the client or a cancel: the response ends `cancelled`. */
  signal: AbortSignal;
  /**
   * The names of the reasoning text events: `openai` (default) `response.reasoning_text.delta`/`.done`, as the
   * `openai` SDK types and accumulates them; `open-responses` `response.reasoning.delta`/`.done`, as the Open
   * Responses specification names them (its compliance suite rejects any event type it does not define, so the
   * two cannot both be sent to it). Same fields either way.
   */
  reasoningEvents?: ReasoningEventNames;
  /**
   * During a long prefill, a `response.in_progress` event at most this often (ms; default 5,000), keep-alive
   * comments between: clients whose idle timer counts only events (Codex CLI's stream idle timeout does: comments
   * never reach it) see activity, and every client knows the event type.
   */
  prefillProgressMs?: number;
}

export type ReasoningEventNames = 'openai' | 'open-responses';

export type PipelineOutput = { kind: 'event'; event: StreamEvent } | { kind: 'keepalive' };

export interface PipelineOutcome {
  response: ResponseObject;
  /** What made it fail, when it did (an engine fault or a store failure). */
  cause: unknown;
}

type Open =
  | { kind: 'message'; index: number; item: OutputMessage; text: string }
  | { kind: 'reasoning'; index: number; item: OutputReasoning; text: string }
  | { kind: 'function'; index: number; item: OutputFunctionCall; announced: boolean }
  | { kind: 'custom'; index: number; item: OutputCustomToolCall; announced: boolean }
  | { kind: 'code'; index: number; item: OutputCodeInterpreterCall };

/** Holds surrounding whitespace back so that a segment's text is trimmed however it was split. */
class TrimmedSegment {
  private started = false;
  private trailing = '';

  push(text: string): string {
    let t = text;
    if (!this.started) {
      t = t.replace(/^\s+/, '');
      if (t === '') return '';
      this.started = true;
    }
    const joined = this.trailing + t;
    const space = /\s+$/.exec(joined);
    this.trailing = space ? space[0] : '';
    return space ? joined.slice(0, space.index) : joined;
  }
}

class ResponseEmitter {
  private sequence = 0;
  readonly output: OutputItem[] = [];
  private open: Open | null = null;
  private reasoningSegment: TrimmedSegment | null = null;
  private textSegment: TrimmedSegment | null = null;
  /** Held text of the current segment (when holding for phase). */
  private held: string[] = [];
  private calls = 0;
  /** Inside a call over maxToolCalls, which is dropped. */
  private dropping = false;
  /** Off once sealing failed (abandon): what is open closes without a seal. */
  private sealing = true;

  /** Output item ids name their response (item-references.ts), so an `item_reference` finds them in the store. */
  private readonly itemId: (prefix: 'msg' | 'rs' | 'fc' | 'ctc' | 'ci') => string;

  constructor(private readonly options: PipelineOptions) {
    this.itemId = responseItemIds(options.response.id, options.response.store);
  }

  number(event: UnnumberedStreamEvent): PipelineOutput {
    return { kind: 'event', event: { ...event, sequence_number: this.sequence++ } as StreamEvent };
  }

  async apply(event: ParseEvent): Promise<UnnumberedStreamEvent[]> {
    const out: UnnumberedStreamEvent[] = [];
    switch (event.kind) {
      case 'text.delta':
        this.textDelta(event.text, event.phase, out);
        break;
      case 'text.end':
        out.push(...this.endTextSegment('commentary', 'completed'));
        break;
      case 'reasoning.start':
        out.push(...this.endTextSegment('commentary', 'completed'));
        this.reasoningSegment = new TrimmedSegment();
        break;
      case 'reasoning.delta':
        this.reasoningDelta(event.text, out);
        break;
      case 'reasoning.end':
        this.reasoningSegment = null;
        if (this.open?.kind === 'reasoning') out.push(...(await this.closeOpen(event.complete ? 'completed' : 'incomplete')));
        break;
      case 'call.start':
        this.callStart(event, out);
        break;
      case 'call.delta':
        this.callDelta(event.text, out);
        break;
      case 'call.end':
        if (this.dropping) this.dropping = false;
        else out.push(...(await this.closeOpen(event.complete ? 'completed' : 'incomplete')));
        break;
      case 'code.start':
        this.codeStart(out);
        break;
      case 'code.delta':
        if (this.open?.kind === 'code') {
          this.open.item.code += event.text;
          out.push({ type: 'response.code_interpreter_call_code.delta', item_id: this.open.item.id, output_index: this.open.index, delta: event.text });
        }
        break;
      case 'code.end':
        if (this.open?.kind === 'code') out.push(...(await this.closeOpen(event.complete ? 'completed' : 'incomplete')));
        break;
    }
    return out;
  }

  private textDelta(delta: string, phase: Extract<ParseEvent, { kind: 'text.delta' }>['phase'], out: UnnumberedStreamEvent[]): void {
    this.textSegment ??= new TrimmedSegment();
    const text = this.textSegment.push(delta);
    if (text === '') return;
    if (phase) {
      // The format names the phase (Harmony's channels): the text streams live under it.
      if (this.open?.kind !== 'message') out.push(...this.openMessage(phase));
      out.push(...this.messageDelta(text));
    } else if (this.options.holdTextForPhase) this.held.push(text);
    else {
      if (this.open?.kind !== 'message') out.push(...this.openMessage('final_answer'));
      out.push(...this.messageDelta(text));
    }
  }

  private reasoningDelta(delta: string, out: UnnumberedStreamEvent[]): void {
    const text = (this.reasoningSegment ??= new TrimmedSegment()).push(delta);
    if (text === '') return;
    if (this.open?.kind !== 'reasoning') out.push(...this.openReasoning());
    const open = this.open as Extract<Open, { kind: 'reasoning' }>;
    open.text += text;
    const type = this.options.reasoningEvents === 'open-responses' ? 'response.reasoning.delta' : 'response.reasoning_text.delta';
    out.push({ type, item_id: open.item.id, output_index: open.index, content_index: 0, delta: text });
  }

  private callStart(event: Extract<ParseEvent, { kind: 'call.start' }>, out: UnnumberedStreamEvent[]): void {
    if (this.calls >= this.options.maxToolCalls) {
      this.dropping = true;
      return;
    }
    this.calls++;
    out.push(...this.endTextSegment('commentary', 'completed'));
    const index = this.output.length;
    const callId = this.options.ids('call');
    if (event.custom) {
      const item: OutputCustomToolCall = {
        id: this.itemId('ctc'),
        type: 'custom_tool_call',
        call_id: callId,
        name: event.name,
        ...(event.namespace ? { namespace: event.namespace } : {}),
        input: '',
      };
      this.open = { kind: 'custom', index, item, announced: false };
    } else {
      const item: OutputFunctionCall = {
        id: this.itemId('fc'),
        type: 'function_call',
        call_id: callId,
        name: event.name,
        ...(event.namespace ? { namespace: event.namespace } : {}),
        arguments: '',
        status: 'in_progress',
      };
      this.open = { kind: 'function', index, item, announced: false };
    }
    // The item is announced with its first argument text (announceCall): a call cut off before any has
    // nothing a client could call (empty arguments read as `{}`), so it is dropped like one cut before its name.
  }

  private callDelta(delta: string, out: UnnumberedStreamEvent[]): void {
    if (this.dropping || delta === '') return;
    const open = this.open;
    if (open?.kind === 'function' || open?.kind === 'custom') out.push(...this.announceCall(open));
    if (open?.kind === 'function') {
      open.item.arguments += delta;
      out.push({ type: 'response.function_call_arguments.delta', item_id: open.item.id, output_index: open.index, delta });
    } else if (open?.kind === 'custom') {
      open.item.input += delta;
      out.push({ type: 'response.custom_tool_call_input.delta', item_id: open.item.id, output_index: open.index, delta });
    }
  }

  /** Harmony's `python` recipient: the code as a code_interpreter_call (this runtime runs none: no outputs). */
  private codeStart(out: UnnumberedStreamEvent[]): void {
    out.push(...this.endTextSegment('commentary', 'completed'));
    const index = this.output.length;
    const item: OutputCodeInterpreterCall = { id: this.itemId('ci'), type: 'code_interpreter_call', code: '', container_id: 'auto', outputs: [], status: 'in_progress' };
    this.open = { kind: 'code', index, item };
    this.output.push(structuredClone(item));
    out.push(
      { type: 'response.output_item.added', output_index: index, item: structuredClone(item) },
      { type: 'response.code_interpreter_call.in_progress', item_id: item.id, output_index: index },
    );
  }

  /** The turn ended: the held text is the final answer; whatever is open closes with `status`. */
  async end(status: 'completed' | 'incomplete'): Promise<UnnumberedStreamEvent[]> {
    const out = this.endTextSegment('final_answer', status);
    if (this.open !== null) out.push(...(await this.closeOpen(status)));
    return out;
  }

  /**
   * The output broke outside the engine (a fault writing it): whatever is open closes `incomplete`, unsealed, so
   * that no item is left half-written; an item even that cannot close is marked `incomplete` as it stands.
   */
  async abandon(): Promise<UnnumberedStreamEvent[]> {
    this.sealing = false;
    try {
      return await this.end('incomplete');
    } catch {
      this.open = null;
      for (const [i, item] of this.output.entries()) if ('status' in item && item.status === 'in_progress') this.output[i] = { ...item, status: 'incomplete' } as OutputItem;
      return [];
    }
  }

  /** A text segment ends: emit what was held under the phase now known, or close the live message. */
  private endTextSegment(phase: 'commentary' | 'final_answer', status: 'completed' | 'incomplete'): UnnumberedStreamEvent[] {
    const out: UnnumberedStreamEvent[] = [];
    this.textSegment = null;
    if (this.held.length > 0) {
      out.push(...this.openMessage(phase));
      for (const text of this.held) out.push(...this.messageDelta(text));
      this.held = [];
    }
    if (this.open?.kind === 'message') out.push(...this.closeMessage(status));
    return out;
  }

  private openMessage(phase: 'commentary' | 'final_answer'): UnnumberedStreamEvent[] {
    const index = this.output.length;
    const item: OutputMessage = { id: this.itemId('msg'), type: 'message', role: 'assistant', status: 'in_progress', content: [], phase };
    this.open = { kind: 'message', index, item, text: '' };
    this.output.push(structuredClone(item));
    return [
      { type: 'response.output_item.added', output_index: index, item: structuredClone(item) },
      {
        type: 'response.content_part.added',
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      },
    ];
  }

  private messageDelta(text: string): UnnumberedStreamEvent[] {
    const open = this.open as Extract<Open, { kind: 'message' }>;
    open.text += text;
    return [{ type: 'response.output_text.delta', item_id: open.item.id, output_index: open.index, content_index: 0, delta: text, logprobs: [] }];
  }

  private closeMessage(status: 'completed' | 'incomplete'): UnnumberedStreamEvent[] {
    const open = this.open as Extract<Open, { kind: 'message' }>;
    this.open = null;
    const part = { type: 'output_text' as const, text: open.text, annotations: [] };
    const item: OutputMessage = { ...open.item, status, content: [part] };
    this.output[open.index] = item;
    const at = { item_id: item.id, output_index: open.index, content_index: 0 };
    return [
      { type: 'response.output_text.done', ...at, text: open.text, logprobs: [] },
      { type: 'response.content_part.done', ...at, part: structuredClone(part) },
      { type: 'response.output_item.done', output_index: open.index, item: structuredClone(item) },
    ];
  }

  private openReasoning(): UnnumberedStreamEvent[] {
    const index = this.output.length;
    const item: OutputReasoning = { id: this.itemId('rs'), type: 'reasoning', summary: [], content: [], status: 'in_progress' };
    this.open = { kind: 'reasoning', index, item, text: '' };
    this.output.push(structuredClone(item));
    return [
      { type: 'response.output_item.added', output_index: index, item: structuredClone(item) },
      { type: 'response.content_part.added', item_id: item.id, output_index: index, content_index: 0, part: { type: 'reasoning_text', text: '' } },
    ];
  }

  /** A call's output_item.added, once: when its first argument text arrives, or when it ends whole without any. */
  private announceCall(open: Extract<Open, { kind: 'function' | 'custom' }>): UnnumberedStreamEvent[] {
    if (open.announced) return [];
    open.announced = true;
    this.output.push(structuredClone(open.item));
    return [{ type: 'response.output_item.added', output_index: open.index, item: structuredClone(open.item) }];
  }

  private async closeOpen(status: 'completed' | 'incomplete'): Promise<UnnumberedStreamEvent[]> {
    const open = this.open;
    if (open === null) return [];
    if ((open.kind === 'function' || open.kind === 'custom') && !open.announced && status === 'incomplete') {
      this.open = null;
      return [];
    }
    switch (open.kind) {
      case 'message':
        return this.closeMessage(status);
      case 'reasoning': {
        // Sealed before the item counts as closed: a seal that fails leaves it open, for abandon() to close.
        const sealed = this.options.sealReasoning && this.sealing ? await this.options.sealReasoning.seal(open.text) : undefined;
        this.open = null;
        const part = { type: 'reasoning_text' as const, text: open.text };
        const item: OutputReasoning = { ...open.item, content: [part], status };
        if (sealed !== undefined) item.encrypted_content = sealed;
        const at = { item_id: item.id, output_index: open.index, content_index: 0 };
        const out: UnnumberedStreamEvent[] = [
          { type: this.options.reasoningEvents === 'open-responses' ? 'response.reasoning.done' : 'response.reasoning_text.done', ...at, text: open.text },
          { type: 'response.content_part.done', ...at, part: structuredClone(part) },
        ];
        // `reasoning.summary` asked for a summary: made now that the reasoning text is whole (reasoning-summary.ts).
        const level = this.options.response.reasoning.summary;
        const summary = level && open.text ? summarizeReasoning(open.text, level) : '';
        if (summary) {
          const whole = { type: 'summary_text' as const, text: summary };
          const where = { item_id: item.id, output_index: open.index, summary_index: 0 };
          item.summary = [whole];
          out.push(
            { type: 'response.reasoning_summary_part.added', ...where, part: { type: 'summary_text', text: '' } },
            { type: 'response.reasoning_summary_text.delta', ...where, delta: summary },
            { type: 'response.reasoning_summary_text.done', ...where, text: summary },
            { type: 'response.reasoning_summary_part.done', ...where, part: structuredClone(whole) },
          );
        }
        this.output[open.index] = item;
        out.push({ type: 'response.output_item.done', output_index: open.index, item: structuredClone(item) });
        return out;
      }
      case 'function': {
        const added = this.announceCall(open);
        this.open = null;
        const item: OutputFunctionCall = { ...open.item, status };
        this.output[open.index] = item;
        return [
          ...added,
          { type: 'response.function_call_arguments.done', item_id: item.id, output_index: open.index, name: item.name, arguments: item.arguments },
          { type: 'response.output_item.done', output_index: open.index, item: structuredClone(item) },
        ];
      }
      case 'code': {
        this.open = null;
        const item: OutputCodeInterpreterCall = { ...open.item, status };
        this.output[open.index] = item;
        const at = { item_id: item.id, output_index: open.index };
        return [
          { type: 'response.code_interpreter_call_code.done', ...at, code: item.code ?? '' },
          ...(status === 'completed' ? [{ type: 'response.code_interpreter_call.completed' as const, ...at }] : []),
          { type: 'response.output_item.done', output_index: open.index, item: structuredClone(item) },
        ];
      }
      case 'custom': {
        const added = this.announceCall(open);
        this.open = null;
        // The SDK types no status on a custom tool call; one cut short says so (its input is not whole).
        const item: OutputCustomToolCall = status === 'incomplete' ? { ...open.item, status } : { ...open.item };
        this.output[open.index] = item;
        return [
          ...added,
          { type: 'response.custom_tool_call_input.done', item_id: item.id, output_index: open.index, input: item.input },
          { type: 'response.output_item.done', output_index: open.index, item: structuredClone(item) },
        ];
      }
    }
  }
}

function terminalType(status: ResponseObject['status']): 'response.completed' | 'response.incomplete' | 'response.failed' {
  if (status === 'completed') return 'response.completed';
  if (status === 'failed') return 'response.failed';
  // `incomplete`, and `cancelled` (the SDK has no cancelled event; a cancelled stream has no reader anyway).
  return 'response.incomplete';
}

/**
 * Runs one generation into stream events; returns the final response (already persisted). `generate` starts
 * the engine; it is called inside, so an engine that throws at once still ends in a terminal event.
 */
export async function* runPipeline(
  options: PipelineOptions,
  generate: () => AsyncIterable<GenerationEvent>,
): AsyncGenerator<PipelineOutput, PipelineOutcome> {
  const emitter = new ResponseEmitter(options);
  const base = options.response;
  yield emitter.number({ type: base.status === 'queued' ? 'response.queued' : 'response.created', response: structuredClone(base) });
  if (base.status === 'queued') {
    yield emitter.number({ type: 'response.in_progress', response: { ...structuredClone(base), status: 'in_progress' } });
  } else {
    yield emitter.number({ type: 'response.in_progress', response: structuredClone(base) });
  }

  let done: Extract<GenerationEvent, { type: 'done' }> | null = null;
  let fault: unknown = null;
  let status: ResponseObject['status'];
  /** The fault is the runtime's own (writing the output), not the engine's. */
  let outside = false;
  let writing = false;
  const progressEvery = options.prefillProgressMs ?? 5_000;
  let lastProgress = Date.now();
  try {
    for await (const event of generate()) {
      writing = true;
      if (event.type === 'prefill') {
        if (Date.now() - lastProgress >= progressEvery) {
          lastProgress = Date.now();
          yield emitter.number({ type: 'response.in_progress', response: { ...structuredClone(base), status: 'in_progress' } });
        } else yield { kind: 'keepalive' };
      }
      else if (event.type === 'token') {
        for (const parsed of options.parser.push(event.text)) for (const e of await emitter.apply(parsed)) yield emitter.number(e);
      } else done = event;
      writing = false;
    }
    if (done === null && !options.signal.aborted) throw new EngineError('internal', 'The engine stopped without finishing the generation.');
  } catch (error) {
    fault = error;
    outside = writing;
  }

  const cancelled = options.signal.aborted || (fault === null && done?.finishReason === 'abort');
  const run: RunEnd = { cancelled, fault, outside, status: cancelled ? 'cancelled' : fault !== null ? 'failed' : done?.finishReason === 'length' ? 'incomplete' : 'completed' };
  for (const e of await closeOutput(options.parser, emitter, run)) yield emitter.number(e);
  ({ status, fault, outside } = run);

  let final: ResponseObject = {
    ...structuredClone(base),
    status,
    output: structuredClone(emitter.output),
    usage: done ? usageOf(done, options.parser.reasoningTokens) : null,
    error: status === 'failed' ? (outside ? outsideFaultBody(fault) : faultBody(fault)) : null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    completed_at: status === 'completed' ? options.now() : null,
  };
  let cause: unknown = fault;
  try {
    await options.persist(final, fault);
  } catch (error) {
    cause = error;
    final = {
      ...final,
      status: 'failed',
      completed_at: null,
      error: { code: 'server_error', message: `The response was generated but could not be stored: ${error instanceof Error ? error.message : String(error)}` },
    };
  }
  yield emitter.number({ type: terminalType(final.status), response: final });
  return { response: final, cause };
}

/** How a run ended: its status, what failed it and whether that was outside the engine (writing the output). */
interface RunEnd {
  cancelled: boolean;
  status: ResponseObject['status'];
  fault: unknown;
  outside: boolean;
}

/**
 * The rest of the output, closed: the parser's last events, then whatever is open. A fault here (or `outside` one
 * writing the output before) fails the response like an engine fault: what is open closes incomplete (abandon),
 * the failed response is stored and `response.failed` ends the stream.
 */
async function closeOutput(parser: OutputParser, emitter: ResponseEmitter, run: RunEnd): Promise<UnnumberedStreamEvent[]> {
  const closing: UnnumberedStreamEvent[] = [];
  try {
    if (run.outside) throw run.fault;
    for (const parsed of parser.finish()) closing.push(...(await emitter.apply(parsed)));
    closing.push(...(await emitter.end(run.status === 'completed' ? 'completed' : 'incomplete')));
  } catch (error) {
    if (run.fault === null) run.fault = error;
    run.outside ||= run.fault === error;
    if (!run.cancelled) run.status = 'failed';
    closing.push(...(await emitter.abandon()));
  }
  return closing;
}

function usageOf(done: Extract<GenerationEvent, { type: 'done' }>, reasoningTokens: number): Usage {
  const { promptTokens, cachedTokens, completionTokens } = done.usage;
  return {
    input_tokens: promptTokens,
    input_tokens_details: { cached_tokens: cachedTokens, cache_write_tokens: promptTokens - cachedTokens },
    output_tokens: completionTokens,
    output_tokens_details: { reasoning_tokens: Math.min(reasoningTokens, completionTokens) },
    total_tokens: promptTokens + completionTokens,
  };
}

function faultBody(fault: unknown): { code: 'server_error' | 'invalid_prompt'; message: string } {
  if (fault instanceof EngineError) {
    return { code: isClientError(fault) ? 'invalid_prompt' : 'server_error', message: fault.message };
  }
  return { code: 'server_error', message: 'The model failed while generating this response.' };
}

/** A fault of the runtime's own while writing the output: OpenAI's error body's message, no model blamed. */
function outsideFaultBody(fault: unknown): { code: 'server_error'; message: string } {
  return { code: 'server_error', message: `The response failed while its output was written: ${toApiError(fault).body.error.message}` };
}

/** One stream event as an SSE frame. */
export function sseFrame(event: StreamEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * The `error` event of a stream the pipeline could not finish (a fault writing the output ends `response.failed`
 * instead, see runPipeline), numbered after the last event sent: the `openai` SDK's
 * ResponseErrorEvent fields (`type:"error"`, `code`, `message`, `param`, `sequence_number`), and the OpenAI error
 * body under `error` too, for clients that read that shape.
 */
export function sseErrorFrame(body: { error: { message: string; type: string; param: string | null; code: string | null } }, sequenceNumber: number): string {
  const { message, param, code } = body.error;
  return `event: error\ndata: ${JSON.stringify({ type: 'error', code, message, param, sequence_number: sequenceNumber, error: body.error })}\n\n`;
}

export const SSE_KEEPALIVE = ': keep-alive\n\n';
