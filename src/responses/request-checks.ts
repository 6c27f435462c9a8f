// The checks the spec requires before any token is generated, and the preparation of a generation from a
// request body: body -> schema -> model -> tool_choice -> previous_response_id -> normalised history -> chat ->
// constraint (checked by the engine). Anything rejected here throws a DomainError; nothing has been stored yet.
import { EngineError, type ChatMessage, type ConstraintSpec, type Engine, type ModelInfo } from '../engine/types.ts';
import type { ResponseStore } from '../store/types.ts';
import { DomainError, badRequest, fromZodError, isClientError, notFound, quote } from './errors.ts';
import { depthParam, findExcessDepth, MAX_JSON_DEPTH } from './json-depth.ts';
import { isJsonMediaType, unsupportedMediaType } from './request-guard.ts';
import { InputItem, LIMITS, type CreateResponseBody, type Tool, type ToolChoice } from './schema.ts';
import { buildChat, constraintFor, normaliseItems, serveTools, toolCallLimit, type Sealers, type ServedTools, type SourcedItem } from './translate.ts';
import { defaultReserve, fitToContext, type TruncationReport } from './truncation.ts';
import { thinkingEnabled } from './reasoning-effort.ts';
import { servedToolChoice, namedChoiceTarget } from './tool-namespaces.ts';
import type { z } from 'zod';

/**
 * Read and parse a JSON body within the size and nesting bounds: the size is counted while the body streams in
 * (a body without content-length is cut off at the bound, never read whole), and the nesting depth is checked on
 * the text before it is parsed (json-depth.ts), so a streamed request gets its 400 before any stream starts.
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > LIMITS.maxBodyBytes) throw tooLarge();
  const text = await readBodyText(request, LIMITS.maxBodyBytes);
  const type = request.headers.get('content-type');
  if (type === null ? text.length > 0 : !isJsonMediaType(type)) throw unsupportedMediaType(type);
  const deep = findExcessDepth(text, MAX_JSON_DEPTH);
  if (deep !== null) throw tooDeep(depthParam(deep));
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest('We could not parse the JSON body of your request. The body must be a JSON object.', null, 'invalid_json');
  }
}

/** The body as text, reading at most `maxBytes` of it (the stream is cancelled past that: 400). */
export async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  if (request.body === null || request.body === undefined) {
    const text = await request.text();
    if (text.length > maxBytes) throw tooLarge();
    return text;
  }
  return new TextDecoder().decode(await readBodyBytes(request, maxBytes, tooLarge));
}

/**
 * The body's bytes, counted while they stream in: past `maxBytes` the stream is cancelled and `tooLarge()` thrown,
 * so memory stays bounded without a content-length. Every host reads bodies through this.
 */
export async function readBodyBytes(request: Request, maxBytes: number, tooLarge: () => Error): Promise<Uint8Array> {
  if (request.body === null || request.body === undefined) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

function tooLarge(): DomainError {
  return badRequest(`The request body is larger than ${LIMITS.maxBodyBytes} bytes.`, 'input', 'input_too_large');
}

function tooDeep(param: string | null): DomainError {
  return badRequest(
    `${param === null ? 'The request body' : `'${param}'`} nests deeper than this server accepts (${MAX_JSON_DEPTH} levels of objects and arrays).`,
    param,
    'json_too_deep',
  );
}

export function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest('The request body must be a JSON object.', null, 'invalid_json');
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw fromZodError(parsed.error, value);
  return parsed.data;
}

/** Check 1: the model must be one this runtime serves; a missing model means the default one. */
export async function resolveModel(engine: Engine, requested: string | null | undefined): Promise<ModelInfo> {
  const models = await engine.listModels();
  if (requested === null || requested === undefined || requested === '') {
    const model = models.find((m) => m.loaded) ?? models[0];
    if (model === undefined) throw new DomainError('unavailable', 'No model is available on this runtime yet.', { param: 'model', code: 'model_not_available' });
    return model;
  }
  const model = models.find((m) => m.id === requested || m.aliases.includes(requested));
  if (model === undefined) throw new DomainError('not_found', `The model '${quote(requested)}' does not exist`, { param: 'model', code: 'model_not_found' });
  return model;
}

/** Checks 2 and 3: what tool_choice may force (and that the turn may make the call it forces). */
export function checkToolChoice(tools: readonly Tool[], toolChoice: ToolChoice, maxToolCalls = Infinity): void {
  if (toolChoice === 'required' && !tools.some((t) => t.type === 'function' || t.type === 'custom')) {
    throw badRequest(
      `tool_choice "required" needs at least one tool of type "function" or "custom"; other tool types cannot be forced.`,
      'tool_choice',
    );
  }
  if (typeof toolChoice === 'object' && (toolChoice.type === 'function' || toolChoice.type === 'custom') && 'name' in toolChoice) {
    const target = namedChoiceTarget(tools, toolChoice);
    const name = toolChoice.namespace ? `${toolChoice.namespace}.${toolChoice.name}` : toolChoice.name;
    if ('missing' in target) throw badRequest(`Tool '${quote(name)}' is not declared in tools`, 'tool_choice');
    if ('ambiguous' in target) {
      throw badRequest(`Tool '${quote(name)}' is a member of several namespaces (${quote(target.ambiguous.join(', '))}); name one in tool_choice.namespace.`, 'tool_choice');
    }
  }
  const forced =
    toolChoice === 'required' ||
    (typeof toolChoice === 'object' &&
      (((toolChoice.type === 'function' || toolChoice.type === 'custom') && 'name' in toolChoice) ||
        (toolChoice.type === 'allowed_tools' && 'mode' in toolChoice && toolChoice.mode === 'required')));
  if (forced && maxToolCalls === 0) {
    throw badRequest('tool_choice forces a tool call, but max_tool_calls is 0.', 'max_tool_calls');
  }
}

export const RESPONSE_ID = /^resp_[A-Za-z0-9_-]{1,200}$/;

/** A `resp_…` id in a path or field; 400 naming `param` when malformed. */
export function checkResponseId(id: string, param: string): void {
  if (!RESPONSE_ID.test(id)) throw badRequest(`Invalid '${param}': '${quote(id)}'. Response ids start with 'resp_'.`, param);
}

/** Check 4: previous_response_id is well formed and stored; returns its history (schema-checked). */
export async function loadPreviousHistory(store: ResponseStore, id: string): Promise<InputItem[]> {
  checkResponseId(id, 'previous_response_id');
  const record = await store.get(id);
  if (record === undefined) throw notFound(`Previous response with id '${quote(id)}' not found.`, 'previous_response_id');
  const parsed = InputItem.array().safeParse(record.history);
  if (!parsed.success) throw new DomainError('internal', `The stored history of '${quote(id)}' cannot be read.`, { param: 'previous_response_id', code: 'history_corrupt' });
  return parsed.data;
}

export interface PreparedPrompt {
  model: ModelInfo;
  /** Normalised items of the chain continued (previous_response_id), without this request's input. */
  chain: SourcedItem[];
  /** Normalised items of this request's input. */
  input: SourcedItem[];
  messages: ChatMessage[];
  served: ServedTools;
  constraint: ConstraintSpec;
  /** The most tool calls this turn may make (the constraint stops there; the event pipeline drops any beyond). */
  maxToolCalls: number;
  enableThinking: boolean;
  /** `reasoning.effort` as asked (the prompt of a format that writes it, Harmony's, depends on it). */
  reasoningEffort: string | null;
  /** What `truncation: "auto"` left out of the prompt (null when nothing). */
  truncation: TruncationReport | null;
}

type PromptFields = Pick<CreateResponseBody, 'model' | 'input' | 'instructions' | 'previous_response_id' | 'tools' | 'tool_choice' | 'text' | 'reasoning'> &
  Partial<Pick<CreateResponseBody, 'conversation' | 'prompt' | 'truncation' | 'max_output_tokens' | 'parallel_tool_calls' | 'max_tool_calls'>>;

/** Fields whose meaning needs server state this runtime does not keep: refused rather than silently ignored. */
function checkUnsupported(body: PromptFields): void {
  if (body.conversation !== null && body.conversation !== undefined) {
    throw badRequest('Conversations are not supported by this runtime; continue with previous_response_id.', 'conversation');
  }
  if (body.prompt !== null && body.prompt !== undefined) {
    throw badRequest('Stored prompt templates are not supported by this runtime; send input and instructions.', 'prompt');
  }
}

/** Every check and the translation, in the spec's order; throws a DomainError on the first failure. */
export async function preparePrompt(engine: Engine, store: ResponseStore, sealers: Sealers, body: PromptFields): Promise<PreparedPrompt> {
  const model = await resolveModel(engine, body.model);
  checkUnsupported(body);
  const tools = body.tools ?? [];
  const toolChoice = body.tool_choice ?? 'auto';
  const maxToolCalls = toolCallLimit(body);
  checkToolChoice(tools, toolChoice, maxToolCalls);
  const servedChoice = servedToolChoice(tools, toolChoice);
  const previous = body.previous_response_id ? await loadPreviousHistory(store, body.previous_response_id) : [];

  const chain = await normaliseItems(previous, (i) => `previous_response_id history[${i}]`, sealers);
  const rawInput: InputItem[] =
    typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : (body.input ?? []);
  const inputWhere = (i: number): string => (typeof body.input === 'string' ? 'input' : `input[${i}]`);
  checkItemDepth(rawInput, inputWhere);
  const input = await normaliseItems(rawInput, inputWhere, await verifiedSealers(rawInput, inputWhere, sealers));
  if (chain.length === 0 && input.length === 0) throw badRequest('The request has no input: send input, or continue with previous_response_id.', 'input');
  const served = serveTools(tools, servedChoice);
  const enableThinking = thinkingEnabled(body.reasoning);
  const reasoningEffort = body.reasoning?.effort ?? null;
  const history = [...chain, ...input];
  let messages = buildChat(history, body.instructions);
  let truncation: TruncationReport | null = null;
  if (body.truncation === 'auto') {
    const count = async (chat: ChatMessage[]) => (await engine.tokenizePrompt({ model: model.id, messages: chat, tools: served.chatTools, enableThinking, reasoningEffort })).length;
    const reserve = body.max_output_tokens ?? defaultReserve(model.contextLength);
    ({ messages, report: truncation } = await fitToContext({ history, instructions: body.instructions, count, contextLength: model.contextLength, reserve, modelId: model.id }));
  }
  const constraint = constraintFor(served, servedChoice, body.text, maxToolCalls);
  if (constraint.kind !== 'none') await checkConstraint(engine, model.id, constraint);
  return { model, chain, input, messages, served, constraint, maxToolCalls, enableThinking, reasoningEffort, truncation };
}

/**
 * Every `encrypted_content` a client sends on a reasoning item is verified, even when the item carries its text
 * as well (the official API rejects a blob that fails verification whenever one is sent): an empty, tampered,
 * foreign or oversize blob is a 400 naming the item. What opened is remembered for the translation that follows,
 * which reads a blob only when the item has no text, so none is decrypted twice.
 */
export async function verifiedSealers(items: readonly InputItem[], where: (i: number) => string, sealers: Sealers): Promise<Sealers> {
  const opened = new Map<string, string>();
  for (const [i, item] of items.entries()) {
    if (item.type !== 'reasoning' || item.encrypted_content === null || item.encrypted_content === undefined) continue;
    const param = `${where(i)}.encrypted_content`;
    if (item.encrypted_content === '') {
      throw badRequest(`The encrypted reasoning in '${param}' is empty: send the blob as it was given, or leave the field out.`, param, 'invalid_encrypted_content');
    }
    opened.set(item.encrypted_content, await sealers.reasoning.open(item.encrypted_content, param));
  }
  if (opened.size === 0) return sealers;
  const reasoning = sealers.reasoning;
  return {
    ...sealers,
    reasoning: { seal: (text) => reasoning.seal(text), open: async (blob, param) => opened.get(blob) ?? reasoning.open(blob, param) },
  };
}

/**
 * Function-call arguments are JSON in a string: parsed for the chat template, they are bounded in depth like the
 * body itself (400 naming the item's arguments).
 */
function checkItemDepth(items: readonly InputItem[], where: (i: number) => string): void {
  for (const [i, item] of items.entries()) {
    if (item.type !== 'function_call' || findExcessDepth(item.arguments, MAX_JSON_DEPTH) === null) continue;
    const param = `${where(i)}.arguments`;
    throw badRequest(`'${param}' nests deeper than this server accepts (${MAX_JSON_DEPTH} levels of objects and arrays).`, param, 'json_too_deep');
  }
}

/** A schema or grammar the engine cannot compile is the client's error: 400 naming the field. */
async function checkConstraint(engine: Engine, model: string, constraint: ConstraintSpec): Promise<void> {
  const param = constraint.kind === 'json_schema' ? 'text.format.schema' : 'tools';
  try {
    await engine.checkConstraint(model, constraint);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof EngineError && !isClientError(error)) throw error;
    throw badRequest(message, error instanceof EngineError && error.param ? error.param : param, error instanceof EngineError ? error.code : 'invalid_constraint');
  }
}
