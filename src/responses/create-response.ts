// POST /v1/responses: every check before generating, then the event pipeline three ways: detached (background:
// stored as queued, polled by id), streamed as SSE, or collected into one JSON response. store:true writes the
// response with its input history in one put. Functions over the handler's context (handler-context.ts).
import { EngineError, type GenerateRequest } from '../engine/types.ts';
import { MESSAGE_MAX_CHARS, badRequest, isClientError, quote, toApiError } from './errors.ts';
import type { HandlerContext } from './handler-context.ts';
import { checkPromptFits } from './context-check.ts';
import { responseItemIds } from './item-references.ts';
import { OutputParser } from './output-parser.ts';
import { toJson } from './records.ts';
import { parseWith, preparePrompt, readJsonBody, type PreparedPrompt } from './request-checks.ts';
import { echoedSettings } from './response-object.ts';
import { CreateResponseBody, type InputItem, type ResponseObject } from './schema.ts';
import { runPipeline, sseErrorFrame, sseFrame, SSE_KEEPALIVE, type PipelineOutcome, type PipelineOutput } from './stream-events.ts';
import { withTruncationMetadata } from './truncation.ts';

type Pipeline = AsyncGenerator<PipelineOutput, PipelineOutcome>;

/** One create request after its checks: what it will generate from and how its record is kept. */
interface Creation {
  body: CreateResponseBody;
  prepared: PreparedPrompt;
  id: string;
  createdAt: number;
  base: ResponseObject;
  keepRecord: boolean;
  inputItems: InputItem[];
  inputHistory: InputItem[];
  /** Set once the final record is stored. */
  recorded: boolean;
}

export async function createResponse(ctx: HandlerContext, request: Request): Promise<Response> {
  const creation = await checkCreate(ctx, request);
  if (creation.body.background) return runInBackground(ctx, creation);
  const controller = new AbortController();
  request.signal.addEventListener('abort', () => controller.abort(), { once: true });
  if (request.signal.aborted) controller.abort();
  ctx.running.add(request);
  const pipeline = holding(generation(ctx, creation, controller.signal), () => ctx.running.delete(request));
  if (creation.body.stream) return sseResponse(pipeline, controller, ctx.keepAliveMs);
  return answerCollected(creation, await drain(pipeline));
}

/** The body parsed, every request check run (model, tools, tool_choice, history, context), the record prepared. */
async function checkCreate(ctx: HandlerContext, request: Request): Promise<Creation> {
  const body = parseWith(CreateResponseBody, await readJsonBody(request));
  const keepRecord = body.store ?? true;
  if (body.background && !keepRecord) throw badRequest('Background responses must be stored: set store to true.', 'background');
  if (body.background && body.stream) throw badRequest('Streaming a background response is not supported by this runtime.', 'stream');
  const prepared = await preparePrompt(ctx.engine, ctx.store, ctx.sealers, body);
  await checkPromptFits(ctx.engine, prepared);
  const id = ctx.ids('resp');
  const createdAt = ctx.now();
  return {
    body,
    prepared,
    id,
    createdAt,
    keepRecord,
    base: baseResponse(body, prepared, id, createdAt, body.background ? 'queued' : 'in_progress'),
    inputItems: listedInputItems(prepared.input.map((s) => s.item), responseItemIds(id, keepRecord, 'input')),
    inputHistory: [...prepared.chain, ...prepared.input].map((s) => s.item),
    recorded: false,
  };
}

/** The event pipeline of one generation: the engine's events through the output parser into stream events. */
function generation(ctx: HandlerContext, c: Creation, signal: AbortSignal): Pipeline {
  const { body, prepared } = c;
  const parser = new OutputParser({
    markers: prepared.model.markers,
    toolCalls: prepared.served.chatTools.length > 0,
    customNames: prepared.served.customNames,
    declaredNames: new Set(prepared.served.chatTools.map((t) => t.function.name)),
    namespaced: prepared.served.namespaced,
    startsInReasoning: prepared.enableThinking && prepared.model.markers.promptOpensThink === true,
    format: prepared.model.chatFormat,
  });
  const generateRequest: GenerateRequest = {
    model: prepared.model.id,
    messages: prepared.messages,
    tools: prepared.served.chatTools,
    enableThinking: prepared.enableThinking,
    reasoningEffort: prepared.reasoningEffort,
    maxTokens: body.max_output_tokens ?? prepared.model.contextLength,
    sampling: {
      temperature: body.temperature ?? 1,
      top_p: body.top_p ?? 1,
      ...(body.seed !== null && body.seed !== undefined ? { seed: body.seed } : {}),
      top_logprobs: body.top_logprobs ?? 0,
    },
    constraint: prepared.constraint,
    signal,
  };
  return runPipeline(
    {
      response: c.base,
      ids: ctx.ids,
      parser,
      holdTextForPhase: prepared.served.chatTools.length > 0,
      maxToolCalls: prepared.maxToolCalls,
      sealReasoning: body.include?.includes('reasoning.encrypted_content') ? ctx.sealers.reasoning : null,
      reasoningEvents: ctx.reasoningEvents,
      prefillProgressMs: ctx.prefillProgressMs,
      now: ctx.now,
      persist: (final, fault) => persist(ctx, c, final, fault),
      signal,
    },
    () => ctx.engine.generate(generateRequest),
  );
}

/** Stores the final response with its history (store:true), except a prompt the engine refused before any output. */
async function persist(ctx: HandlerContext, c: Creation, final: ResponseObject, fault: unknown): Promise<void> {
  if (!c.keepRecord) return;
  // A prompt the engine refused before any output (too long, …) answers a non-streamed request with a 4xx
  // and no response id: like a request check, it leaves nothing stored.
  const refused = fault instanceof EngineError && isClientError(fault) && final.output.length === 0;
  if (refused && !c.body.stream && !c.body.background) return;
  await ctx.store.put({ id: c.id, response: toJson(final), history: toJson([...c.inputHistory, ...final.output]), inputItems: toJson(c.inputItems), createdAt: c.createdAt });
  c.recorded = true;
}

/** background:true: stored as queued, answered at once, generated detached; cancel and DELETE stop it. */
async function runInBackground(ctx: HandlerContext, c: Creation): Promise<Response> {
  const controller = new AbortController();
  await ctx.store.put({ id: c.id, response: toJson(c.base), history: toJson(c.inputHistory), inputItems: toJson(c.inputItems), createdAt: c.createdAt });
  const finished = (async () => {
    await ctx.store.updateResponse(c.id, toJson({ ...c.base, status: 'in_progress' }));
    await drain(generation(ctx, c, controller.signal));
  })()
    .catch(async (error: unknown) => {
      // The pipeline records engine faults itself; this is a store that failed mid-run. Say so if it can.
      const message = `The background response failed: ${error instanceof Error ? error.message : String(error)}`;
      await ctx.store.updateResponse(c.id, toJson({ ...c.base, status: 'failed', error: { code: 'server_error', message } })).catch(() => undefined);
    })
    .finally(() => ctx.background.delete(c.id));
  ctx.background.set(c.id, { controller, finished });
  return Response.json(c.base);
}

/** A non-streamed answer: the response, or for a failed one an error that names the stored record. */
function answerCollected(c: Creation, outcome: PipelineOutcome): Response {
  if (outcome.response.status !== 'failed') return Response.json(outcome.response);
  const { status, body } = toApiError(outcome.cause);
  // An engine fault is a 5xx that names the response, stored as failed (GET it by that id); a prompt the
  // engine refused (too long, …) keeps its 4xx and leaves nothing stored, like a request check.
  let message = outcome.response.error?.message ?? body.error.message;
  if (c.recorded) message += ` The response '${c.id}' is stored with status 'failed'.`;
  else if (status >= 500 && !c.keepRecord) message += ` (response '${c.id}', not stored: store is false)`;
  return Response.json({ error: { ...body.error, message: quote(message, MESSAGE_MAX_CHARS) } }, { status });
}

/** This request's input items as `input_items` lists them: each with an id, message content as parts. */
function listedInputItems(items: InputItem[], itemIds: (prefix: 'msg' | 'fc' | 'ctc' | 'rs' | 'item') => string): InputItem[] {
  return items.map((item) => {
    if (item.type === 'message') {
      const partType = item.role === 'assistant' ? 'output_text' : 'input_text';
      const content = typeof item.content === 'string' ? [{ type: partType, text: item.content }] : item.content;
      return { ...item, id: itemIds('msg'), content } as InputItem;
    }
    const prefix = item.type === 'function_call' ? 'fc' : item.type === 'custom_tool_call' ? 'ctc' : item.type === 'reasoning' ? 'rs' : 'item';
    return { ...item, id: itemIds(prefix) };
  });
}

/** The Response object as created, with every field the SDK types and honest values. */
function baseResponse(body: CreateResponseBody, prepared: PreparedPrompt, id: string, createdAt: number, status: 'queued' | 'in_progress'): ResponseObject {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    completed_at: null,
    status,
    background: body.background ?? false,
    model: prepared.model.id,
    output: [],
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    ...echoedSettings(body),
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    top_logprobs: body.top_logprobs ?? 0,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    metadata: withTruncationMetadata(body.metadata ?? {}, prepared.truncation),
    truncation: body.truncation ?? 'disabled',
    service_tier: 'default',
    prompt_cache_key: body.prompt_cache_key ?? null,
    safety_identifier: body.safety_identifier ?? null,
    ...(body.user !== undefined ? { user: body.user } : {}),
  };
}

/** A generator that calls `release` once the one it wraps has ended, however it ends. */
async function* holding<T, R>(inner: AsyncGenerator<T, R>, release: () => void): AsyncGenerator<T, R> {
  try {
    return yield* inner;
  } finally {
    release();
  }
}

async function drain(pipeline: Pipeline): Promise<PipelineOutcome> {
  for (;;) {
    const step = await pipeline.next();
    if (step.done) return step.value;
  }
}

/** The pipeline as `text/event-stream`; a reader that goes away aborts generation. */
function sseResponse(pipeline: Pipeline, controller: AbortController, keepAliveMs: number): Response {
  const encoder = new TextEncoder();
  let closed = false;
  const body = new ReadableStream<Uint8Array>({
    start(stream) {
      const send = (text: string): void => {
        if (closed) return;
        try {
          stream.enqueue(encoder.encode(text));
        } catch {
          closed = true;
        }
      };
      const timer = setInterval(() => send(SSE_KEEPALIVE), keepAliveMs);
      // Every event carries the next sequence_number, the error event too (it follows the last one sent).
      let nextSequence = 0;
      void (async () => {
        try {
          for (;;) {
            const step = await pipeline.next();
            if (step.done) break;
            if (step.value.kind === 'event') nextSequence = step.value.event.sequence_number + 1;
            send(step.value.kind === 'event' ? sseFrame(step.value.event) : SSE_KEEPALIVE);
          }
        } catch (error) {
          send(sseErrorFrame(toApiError(error).body, nextSequence));
        } finally {
          clearInterval(timer);
          if (!closed) {
            closed = true;
            try {
              stream.close();
            } catch {
              // already cancelled by the reader
            }
          }
        }
      })();
    },
    cancel() {
      closed = true;
      controller.abort();
    },
  });
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  });
}
