// Zod schemas for the `/v1/responses` wire contract: the request body, the input items it carries, the
// Response object, its output items and the stream events. They are the single source of these types in the
// project; each is shaped the way the `openai` SDK (resources/responses/responses.d.ts) types it, and
// test/unit/responses/schema-types.test.ts checks the inferred types against the SDK's at compile time.
import { z } from 'zod';

/** Bounds on what a request may carry (checked before anything else is done with it). */
export const LIMITS = {
  /** The whole request body, in bytes. */
  maxBodyBytes: 8 * 1024 * 1024,
  /** Items in `input`. */
  maxInputItems: 10_000,
  /** Characters in any one text field of an item. */
  maxTextChars: 4 * 1024 * 1024,
  /** Tools declared. */
  maxTools: 512,
};

const text = z.string().max(LIMITS.maxTextChars);
const jsonObject = z.record(z.string(), z.unknown());
const phase = z.enum(['commentary', 'final_answer']);
const itemStatus = z.enum(['in_progress', 'completed', 'incomplete']);

// ---------------------------------------------------------------- content parts

export const InputTextPart = z.object({ type: z.literal('input_text'), text });
export const OutputTextPart = z.object({
  type: z.literal('output_text'),
  text,
  annotations: z.array(jsonObject).optional(),
  logprobs: z.array(jsonObject).optional(),
});
export const RefusalPart = z.object({ type: z.literal('refusal'), refusal: text });
/** Images and files are part of the wire format; this runtime serves text models and rejects them in translation. */
export const InputImagePart = z.looseObject({ type: z.literal('input_image') });
export const InputFilePart = z.looseObject({ type: z.literal('input_file') });
export const InputAudioPart = z.looseObject({ type: z.literal('input_audio') });

export const MessageContentPart = z.discriminatedUnion('type', [
  InputTextPart,
  OutputTextPart,
  RefusalPart,
  InputImagePart,
  InputFilePart,
  InputAudioPart,
]);
export type MessageContentPart = z.infer<typeof MessageContentPart>;

// ---------------------------------------------------------------- input items
// Optional fields also take null: clients written in other languages (Codex) send null for absent values.

export const MessageItem = z.object({
  type: z.literal('message'),
  id: z.string().nullish(),
  role: z.enum(['user', 'system', 'developer', 'assistant']),
  content: z.union([text, z.array(MessageContentPart)]),
  phase: phase.nullish(),
  status: itemStatus.nullish(),
});
export type MessageItem = z.infer<typeof MessageItem>;

/** `namespace`: the `namespace` tool the function belongs to (Codex sends it back with the call). */
export const FunctionCallItem = z.object({
  type: z.literal('function_call'),
  id: z.string().nullish(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  namespace: z.string().min(1).max(128).nullish(),
  arguments: text,
  status: itemStatus.nullish(),
});
export type FunctionCallItem = z.infer<typeof FunctionCallItem>;

const ToolOutputValue = z.union([text, z.array(MessageContentPart)]);

export const FunctionCallOutputItem = z.object({
  type: z.literal('function_call_output'),
  id: z.string().nullish(),
  call_id: z.string().min(1),
  output: ToolOutputValue,
  status: itemStatus.nullish(),
});
export type FunctionCallOutputItem = z.infer<typeof FunctionCallOutputItem>;

export const CustomToolCallItem = z.object({
  type: z.literal('custom_tool_call'),
  id: z.string().nullish(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  namespace: z.string().min(1).max(128).nullish(),
  input: text,
  status: itemStatus.nullish(),
});
export type CustomToolCallItem = z.infer<typeof CustomToolCallItem>;

export const CustomToolCallOutputItem = z.object({
  type: z.literal('custom_tool_call_output'),
  id: z.string().nullish(),
  call_id: z.string().min(1),
  output: ToolOutputValue,
});
export type CustomToolCallOutputItem = z.infer<typeof CustomToolCallOutputItem>;

export const ReasoningTextPart = z.object({ type: z.literal('reasoning_text'), text });
export const SummaryTextPart = z.object({ type: z.literal('summary_text'), text });

export const ReasoningItem = z.object({
  type: z.literal('reasoning'),
  id: z.string().nullish(),
  summary: z.array(SummaryTextPart).nullish().transform((parts) => parts ?? []),
  content: z.array(ReasoningTextPart).nullish(),
  encrypted_content: z.string().max(LIMITS.maxTextChars).nullish(),
  status: itemStatus.nullish(),
});
export type ReasoningItem = z.infer<typeof ReasoningItem>;

/**
 * Code a Harmony model (gpt-oss) sent to its `python` tool, as this runtime answers it (stream-events.ts): replayed to
 * the model as that message, `outputs`' logs as the tool's answer. This runtime runs no code itself.
 */
export const CodeInterpreterCallItem = z.object({
  type: z.literal('code_interpreter_call'),
  id: z.string().nullish(),
  code: text.nullish(),
  container_id: z.string().nullish(),
  outputs: z.array(z.looseObject({ type: z.string(), logs: text.optional() })).nullish(),
  status: z.enum(['in_progress', 'completed', 'incomplete', 'interpreting', 'failed']).nullish(),
});
export type CodeInterpreterCallItem = z.infer<typeof CodeInterpreterCallItem>;

export const CompactionItem = z.object({
  type: z.literal('compaction'),
  id: z.string().nullish(),
  encrypted_content: z.string().max(LIMITS.maxTextChars),
});
export type CompactionItem = z.infer<typeof CompactionItem>;

/** Item types of the wire format this runtime does not take: hosted tools' items and item references. */
export const HOSTED_ITEM_TYPES = [
  'file_search_call',
  'computer_call',
  'computer_call_output',
  'web_search_call',
  'tool_search_call',
  'tool_search_output',
  'image_generation_call',
  'local_shell_call',
  'local_shell_call_output',
  'shell_call',
  'shell_call_output',
  'apply_patch_call',
  'apply_patch_call_output',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
  'mcp_call',
  'compaction_trigger',
  'program',
  'program_output',
] as const;

// ---------------------------------------------------------------- tools and tool choice

export const FunctionTool = z.object({
  type: z.literal('function'),
  name: z.string().min(1).max(128),
  description: z.string().nullish(),
  parameters: jsonObject.nullish(),
  strict: z.boolean().nullish(),
});
export type FunctionTool = z.infer<typeof FunctionTool>;

export const CustomToolFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('grammar'), syntax: z.enum(['lark', 'regex']), definition: text }),
]);
export const CustomTool = z.object({
  type: z.literal('custom'),
  name: z.string().min(1).max(128),
  description: z.string().optional(),
  format: CustomToolFormat.optional(),
});
export type CustomTool = z.infer<typeof CustomTool>;

/** Hosted tool kinds: accepted in a request (and echoed back) but not served by this runtime. */
export const HOSTED_TOOL_TYPES = [
  'file_search',
  'computer',
  'computer_use',
  'computer_use_preview',
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'mcp',
  'code_interpreter',
  'image_generation',
  'local_shell',
  'shell',
  'apply_patch',
  'tool_search',
  'programmatic_tool_calling',
] as const;
export const HostedTool = z.looseObject({ type: z.enum(HOSTED_TOOL_TYPES) });

/** A function inside a `namespace` tool: as a function tool, `parameters` optional. */
export const NamespaceFunction = z.object({
  type: z.literal('function'),
  name: z.string().min(1).max(128),
  description: z.string().nullish(),
  parameters: jsonObject.nullish(),
  strict: z.boolean().nullish(),
});
/**
 * A named group of client functions (Codex declares every MCP server, and its own tool groups, this way). They are
 * offered to the model under qualified names (see tool-namespaces.ts) and their calls come back as
 * `{name, namespace}`.
 */
export const NamespaceTool = z.object({
  type: z.literal('namespace'),
  name: z.string().min(1).max(128),
  description: z.string().nullish(),
  tools: z.array(z.discriminatedUnion('type', [NamespaceFunction, CustomTool])).max(LIMITS.maxTools),
});
export type NamespaceTool = z.infer<typeof NamespaceTool>;

export const Tool = z.discriminatedUnion('type', [FunctionTool, CustomTool, NamespaceTool, HostedTool]);
export type Tool = z.infer<typeof Tool>;

export const ToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.discriminatedUnion('type', [
    /** `namespace`: a member of a `namespace` tool (tool-namespaces.ts, namedChoiceTarget). */
    z.object({ type: z.literal('function'), name: z.string(), namespace: z.string().max(128).nullish() }),
    z.object({ type: z.literal('custom'), name: z.string(), namespace: z.string().max(128).nullish() }),
    z.object({ type: z.literal('allowed_tools'), mode: z.enum(['auto', 'required']), tools: z.array(jsonObject) }),
    /** Hosted-tool forms (`{type:"file_search"}`, `{type:"mcp", server_label}`, …): treated as `auto`. */
    z.looseObject({ type: z.enum(HOSTED_TOOL_TYPES) }),
  ]),
]);
export type ToolChoice = z.infer<typeof ToolChoice>;

// ---------------------------------------------------------------- input items that carry or point at others

/** A stored item by id (the AI SDK sends its earlier output this way): resolved through the store. */
export const ItemReferenceItem = z.object({ type: z.literal('item_reference'), id: z.string().min(1).max(300) });
export type ItemReferenceItem = z.infer<typeof ItemReferenceItem>;

/** Tools delivered as an input item (Codex's way for its code-mode models): they join the request's tools. */
export const AdditionalToolsItem = z.object({
  type: z.literal('additional_tools'),
  id: z.string().nullish(),
  role: z.literal('developer').nullish(),
  tools: z.array(Tool).max(LIMITS.maxTools),
});
export type AdditionalToolsItem = z.infer<typeof AdditionalToolsItem>;

export const InputItem = z.discriminatedUnion('type', [
  MessageItem,
  FunctionCallItem,
  FunctionCallOutputItem,
  CustomToolCallItem,
  CustomToolCallOutputItem,
  ReasoningItem,
  CompactionItem,
  CodeInterpreterCallItem,
  ItemReferenceItem,
  AdditionalToolsItem,
]);
export type InputItem = z.infer<typeof InputItem>;

/** `EasyInputMessage` may leave out `type`; such an object with a `role` is a message. */
const InputItemOnWire = z.preprocess(
  (value) =>
    typeof value === 'object' && value !== null && !('type' in value) && 'role' in value
      ? { ...value, type: 'message' }
      : value,
  InputItem,
);

// ---------------------------------------------------------------- text format, reasoning

export type TextFormat = z.infer<typeof TextFormat>;
export const TextFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({
    type: z.literal('json_schema'),
    name: z.string(),
    schema: jsonObject,
    /** null in the echo when not given (as the API and the Open Responses schema have it; the SDK types it optional). */
    description: z.string().nullish(),
    strict: z.boolean().nullish(),
  }),
  z.object({ type: z.literal('json_object') }),
]);
export const TextConfig = z.object({
  format: TextFormat.optional(),
  verbosity: z.enum(['low', 'medium', 'high']).nullish(),
});
export type TextConfig = z.infer<typeof TextConfig>;

export const ReasoningConfig = z.object({
  effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']).nullish(),
  summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
  generate_summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
  context: z.enum(['auto', 'current_turn', 'all_turns']).nullish(),
  mode: z.string().optional(),
});
export type ReasoningConfig = z.infer<typeof ReasoningConfig>;

const Includable = z.enum([
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
]);

// ---------------------------------------------------------------- the request body

const metadata = z.record(z.string().max(64), z.string().max(512)).refine((m) => Object.keys(m).length <= 16, {
  message: 'metadata may have at most 16 keys',
});

/** Every field of the SDK's ResponseCreateParams; those this runtime cannot honour are accepted and echoed. */
const CreateResponseFields = z.object({
  model: z.string().nullish(),
  input: z.union([text, z.array(InputItemOnWire).max(LIMITS.maxInputItems)]).optional(),
  instructions: text.nullish(),
  background: z.boolean().nullish(),
  context_management: z.array(jsonObject).nullish(),
  conversation: z.union([z.string(), jsonObject]).nullish(),
  include: z.array(Includable).nullish(),
  max_output_tokens: z.number().int().min(1).nullish(),
  max_tool_calls: z.number().int().min(0).nullish(),
  metadata: metadata.nullish(),
  /** Codex's own bookkeeping (trace ids, …): accepted, never used. */
  client_metadata: jsonObject.nullish(),
  moderation: jsonObject.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  prompt: jsonObject.nullish(),
  prompt_cache_key: z.string().nullish(),
  prompt_cache_options: jsonObject.nullish(),
  prompt_cache_retention: z.enum(['in_memory', '24h']).nullish(),
  reasoning: ReasoningConfig.nullish(),
  safety_identifier: z.string().nullish(),
  service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority']).nullish(),
  store: z.boolean().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_obfuscation: z.boolean().optional() }).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  text: TextConfig.nullish(),
  tool_choice: ToolChoice.nullish(),
  tools: z.array(Tool).max(LIMITS.maxTools).nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  truncation: z.enum(['auto', 'disabled']).nullish(),
  user: z.string().optional(),
  /** Not in the SDK's params but honoured: a seed makes sampling reproducible. */
  seed: z.number().int().nullish(),
});

/**
 * The request's tools with those its `additional_tools` input items carry appended (in input order): they are
 * offered like the request's own. A body without such items comes back as it is.
 */
function withAdditionalTools<B extends { tools?: Tool[] | null | undefined; input?: string | InputItem[] | undefined }>(body: B): B {
  if (!Array.isArray(body.input)) return body;
  const extra: Tool[] = [];
  for (const item of body.input) if (item.type === 'additional_tools') extra.push(...item.tools);
  if (extra.length === 0) return body;
  return { ...body, tools: [...(body.tools ?? []), ...extra] };
}

/** The tools of `additional_tools` input items count against the same bound as the request's own. */
function boundTools(body: { tools?: readonly unknown[] | null; input?: unknown }, ctx: z.RefinementCtx): void {
  let total = body.tools?.length ?? 0;
  if (!Array.isArray(body.input)) return;
  for (const [index, item] of (body.input as { type?: string; tools?: unknown[] }[]).entries()) {
    if (item.type !== 'additional_tools') continue;
    total += item.tools?.length ?? 0;
    if (total > LIMITS.maxTools) {
      ctx.addIssue({ code: 'custom', path: ['input', index, 'tools'], message: `A request may declare at most ${LIMITS.maxTools} tools, additional_tools included.` });
      return;
    }
  }
}

/** The create body; `tools` already holds the tools of its `additional_tools` input items. */
export const CreateResponseBody = CreateResponseFields.superRefine(boundTools).transform((body) => withAdditionalTools(body));
export type CreateResponseBody = z.infer<typeof CreateResponseBody>;

/** `POST /v1/responses/input_tokens` takes the prompt-shaping subset of the create body. */
export const InputTokensBody = CreateResponseFields.pick({
  model: true,
  input: true,
  instructions: true,
  previous_response_id: true,
  reasoning: true,
  text: true,
  tool_choice: true,
  tools: true,
  parallel_tool_calls: true,
  conversation: true,
  truncation: true,
})
  .superRefine(boundTools)
  .transform((body) => withAdditionalTools(body));
export type InputTokensBody = z.infer<typeof InputTokensBody>;

/** `POST /v1/responses/compact`. */
export const CompactBody = CreateResponseFields.pick({
  model: true,
  input: true,
  instructions: true,
  previous_response_id: true,
  prompt_cache_key: true,
  prompt_cache_retention: true,
  service_tier: true,
});
export type CompactBody = z.infer<typeof CompactBody>;

export const InputItemsQuery = z.object({
  after: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
});

// ---------------------------------------------------------------- output items

/** This runtime produces no annotations and (yet) no logprobs: both are always empty. */
const none = z.array(z.never());

export const OutputText = z.object({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: none,
});
export type OutputText = z.infer<typeof OutputText>;

export const OutputMessage = z.object({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  status: itemStatus,
  content: z.array(OutputText),
  phase: phase.nullish(),
});
export type OutputMessage = z.infer<typeof OutputMessage>;

export const OutputReasoning = z.object({
  id: z.string(),
  type: z.literal('reasoning'),
  summary: z.array(SummaryTextPart),
  content: z.array(ReasoningTextPart).optional(),
  encrypted_content: z.string().nullish(),
  status: itemStatus.optional(),
});
export type OutputReasoning = z.infer<typeof OutputReasoning>;

export const OutputFunctionCall = z.object({
  id: z.string(),
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  /** Set when the function belongs to a `namespace` tool (`name` is then the function's own name). */
  namespace: z.string().optional(),
  arguments: z.string(),
  status: itemStatus,
});
export type OutputFunctionCall = z.infer<typeof OutputFunctionCall>;

export const OutputCustomToolCall = z.object({
  id: z.string(),
  type: z.literal('custom_tool_call'),
  call_id: z.string(),
  name: z.string(),
  namespace: z.string().optional(),
  input: z.string(),
  /** Set `incomplete` when the output ended inside the call (max_output_tokens): its input is cut short. */
  status: itemStatus.optional(),
});
export type OutputCustomToolCall = z.infer<typeof OutputCustomToolCall>;

/** Code a Harmony model sent to `python` (no container runs it here: `outputs` empty). */
export const OutputCodeInterpreterCall = z.object({
  id: z.string(),
  type: z.literal('code_interpreter_call'),
  code: z.string().nullable(),
  container_id: z.string(),
  outputs: z.array(z.object({ type: z.literal('logs'), logs: z.string() })).nullable(),
  status: z.enum(['in_progress', 'completed', 'incomplete', 'interpreting', 'failed']),
});
export type OutputCodeInterpreterCall = z.infer<typeof OutputCodeInterpreterCall>;

export const OutputCompaction = z.object({
  id: z.string(),
  type: z.literal('compaction'),
  encrypted_content: z.string(),
  created_by: z.string().optional(),
});
export type OutputCompaction = z.infer<typeof OutputCompaction>;

export const OutputItem = z.discriminatedUnion('type', [
  OutputMessage,
  OutputReasoning,
  OutputFunctionCall,
  OutputCustomToolCall,
  OutputCompaction,
  OutputCodeInterpreterCall,
]);
export type OutputItem = z.infer<typeof OutputItem>;

// ---------------------------------------------------------------- the Response object

export const ResponseStatus = z.enum(['completed', 'failed', 'in_progress', 'cancelled', 'queued', 'incomplete']);
export type ResponseStatus = z.infer<typeof ResponseStatus>;

export const Usage = z.object({
  input_tokens: z.number().int(),
  /** `cache_write_tokens`: prompt tokens whose KV this request computed and kept for prefix reuse. */
  input_tokens_details: z.object({ cached_tokens: z.number().int(), cache_write_tokens: z.number().int() }),
  output_tokens: z.number().int(),
  output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
  total_tokens: z.number().int(),
});
export type Usage = z.infer<typeof Usage>;

export const ResponseErrorBody = z.object({
  code: z.enum(['server_error', 'rate_limit_exceeded', 'invalid_prompt']),
  message: z.string(),
});
export type ResponseErrorBody = z.infer<typeof ResponseErrorBody>;

export const ResponseObject = z.object({
  id: z.string(),
  object: z.literal('response'),
  created_at: z.number(),
  completed_at: z.number().nullable(),
  status: ResponseStatus,
  background: z.boolean(),
  model: z.string(),
  output: z.array(OutputItem),
  error: ResponseErrorBody.nullable(),
  incomplete_details: z.object({ reason: z.enum(['max_output_tokens', 'content_filter']) }).nullable(),
  instructions: z.string().nullable(),
  tools: z.array(Tool),
  tool_choice: ToolChoice,
  parallel_tool_calls: z.boolean(),
  previous_response_id: z.string().nullable(),
  store: z.boolean(),
  /** `null` until generation has finished (as the API sends it on `response.created`; the SDK types it optional). */
  usage: Usage.nullable(),
  /** `format` always present (`{type:"text"}` by default), `verbosity` when asked. */
  text: z.object({ format: TextFormat, verbosity: z.enum(['low', 'medium', 'high']).optional() }),
  /** `effort` and `summary` always present (null when not asked). */
  reasoning: z.object({ effort: ReasoningConfig.shape.effort.unwrap().unwrap().nullable(), summary: ReasoningConfig.shape.summary.unwrap().unwrap().nullable() }),
  temperature: z.number().nullable(),
  top_p: z.number().nullable(),
  /** This runtime applies no presence or frequency penalty: both are 0. */
  presence_penalty: z.number(),
  frequency_penalty: z.number(),
  top_logprobs: z.number().nullable(),
  max_output_tokens: z.number().nullable(),
  max_tool_calls: z.number().nullable(),
  metadata: z.record(z.string(), z.string()),
  truncation: z.enum(['auto', 'disabled']),
  service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority']),
  prompt_cache_key: z.string().nullable(),
  safety_identifier: z.string().nullable(),
  user: z.string().optional(),
});
export type ResponseObject = z.infer<typeof ResponseObject>;

// ---------------------------------------------------------------- stream events

const seq = { sequence_number: z.number().int().min(0) };
const at = { item_id: z.string(), output_index: z.number().int().min(0) };
const ContentPart = z.union([OutputText, ReasoningTextPart]);

export const StreamEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('response.created'), response: ResponseObject, ...seq }),
  z.object({ type: z.literal('response.queued'), response: ResponseObject, ...seq }),
  z.object({ type: z.literal('response.in_progress'), response: ResponseObject, ...seq }),
  z.object({ type: z.literal('response.completed'), response: ResponseObject, ...seq }),
  z.object({ type: z.literal('response.incomplete'), response: ResponseObject, ...seq }),
  z.object({ type: z.literal('response.failed'), response: ResponseObject, ...seq }),
  z.object({ type: z.literal('response.output_item.added'), output_index: z.number().int(), item: OutputItem, ...seq }),
  z.object({ type: z.literal('response.output_item.done'), output_index: z.number().int(), item: OutputItem, ...seq }),
  z.object({ type: z.literal('response.content_part.added'), ...at, content_index: z.number().int(), part: ContentPart, ...seq }),
  z.object({ type: z.literal('response.content_part.done'), ...at, content_index: z.number().int(), part: ContentPart, ...seq }),
  z.object({
    type: z.literal('response.output_text.delta'),
    ...at,
    content_index: z.number().int(),
    delta: z.string(),
    logprobs: none,
    ...seq,
  }),
  z.object({
    type: z.literal('response.output_text.done'),
    ...at,
    content_index: z.number().int(),
    text: z.string(),
    logprobs: none,
    ...seq,
  }),
  z.object({ type: z.literal('response.reasoning_summary_part.added'), ...at, summary_index: z.number().int(), part: SummaryTextPart, ...seq }),
  z.object({ type: z.literal('response.reasoning_summary_part.done'), ...at, summary_index: z.number().int(), part: SummaryTextPart, ...seq }),
  z.object({ type: z.literal('response.reasoning_summary_text.delta'), ...at, summary_index: z.number().int(), delta: z.string(), ...seq }),
  z.object({ type: z.literal('response.reasoning_summary_text.done'), ...at, summary_index: z.number().int(), text: z.string(), ...seq }),
  z.object({ type: z.literal('response.reasoning_text.delta'), ...at, content_index: z.number().int(), delta: z.string(), ...seq }),
  z.object({ type: z.literal('response.reasoning_text.done'), ...at, content_index: z.number().int(), text: z.string(), ...seq }),
  /** The Open Responses names of the two above (sent instead of them when the host asks: stream-events.ts). */
  z.object({ type: z.literal('response.reasoning.delta'), ...at, content_index: z.number().int(), delta: z.string(), ...seq }),
  z.object({ type: z.literal('response.reasoning.done'), ...at, content_index: z.number().int(), text: z.string(), ...seq }),
  z.object({ type: z.literal('response.function_call_arguments.delta'), ...at, delta: z.string(), ...seq }),
  z.object({ type: z.literal('response.function_call_arguments.done'), ...at, name: z.string(), arguments: z.string(), ...seq }),
  z.object({ type: z.literal('response.custom_tool_call_input.delta'), ...at, delta: z.string(), ...seq }),
  z.object({ type: z.literal('response.custom_tool_call_input.done'), ...at, input: z.string(), ...seq }),
  z.object({ type: z.literal('response.code_interpreter_call.in_progress'), ...at, ...seq }),
  z.object({ type: z.literal('response.code_interpreter_call_code.delta'), ...at, delta: z.string(), ...seq }),
  z.object({ type: z.literal('response.code_interpreter_call_code.done'), ...at, code: z.string(), ...seq }),
  z.object({ type: z.literal('response.code_interpreter_call.completed'), ...at, ...seq }),
]);
export type StreamEvent = z.infer<typeof StreamEvent>;
/** A stream event before the emitter numbers it. */
export type UnnumberedStreamEvent = StreamEvent extends infer E
  ? E extends { sequence_number: number }
    ? Omit<E, 'sequence_number'>
    : never
  : never;

// ---------------------------------------------------------------- other endpoint bodies

export const ModelObject = z.object({
  id: z.string(),
  object: z.literal('model'),
  created: z.number(),
  owned_by: z.string(),
});
export type ModelObject = z.infer<typeof ModelObject>;
