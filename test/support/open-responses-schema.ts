// The project's own check of response objects and stream events against the Open Responses specification
// (openresponses/openresponses, public/openapi/openapi.json, "Open Responses" version 2026-04-24), written from
// that document's `components.schemas` by hand in zod, not generated or copied. What it holds to:
// - `ResponseResource`: every field the document lists as required, with its type (null only where the document
//   allows null); extra fields are allowed, as the document does not forbid them.
// - `ItemField` (Message, FunctionCall, FunctionCallOutput, ReasoningBody, CompactionBody) for output items;
//   content parts per type; `Tool` (= FunctionTool, with description/parameters/strict required, nullable).
// - the streaming events of the document's `text/event-stream` union, each with `sequence_number`.
// Where this project serves more than the document defines, the extension is named here and still checked for
// shape (EXTENSIONS below): custom/namespace/hosted tools, a forced custom tool choice, `custom_tool_call` and `code_interpreter_call` items (and
// the latter's events), the `openai` SDK's reasoning
// event names (`response.reasoning_text.*`, where the document says `response.reasoning.*`) and custom tool input
// events. Two quirks of the document are read by intent: `JsonSchemaResponseFormat.schema` is typed `null` there (a
// generator artifact; any JSON is accepted), and `ReasoningEffortEnum` lists `minimal` in its descriptions but not
// its values (both accepted).
import { z } from 'zod';

const int = z.number().int();
const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

// ---------------------------------------------------------------- content parts

const InputTextContent = z.looseObject({ type: z.literal('input_text'), text: z.string() });
const TopLogProb = z.looseObject({ token: z.string(), logprob: z.number(), bytes: z.array(int) });
const LogProb = z.looseObject({ token: z.string(), logprob: z.number(), bytes: z.array(int), top_logprobs: z.array(TopLogProb) });
const UrlCitation = z.looseObject({ type: z.literal('url_citation'), url: z.string(), start_index: int, end_index: int, title: z.string() });
const OutputTextContent = z.looseObject({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(UrlCitation),
  logprobs: z.array(LogProb).optional(),
});
const TextContent = z.looseObject({ type: z.literal('text'), text: z.string() });
const SummaryTextContent = z.looseObject({ type: z.literal('summary_text'), text: z.string() });
const ReasoningTextContent = z.looseObject({ type: z.literal('reasoning_text'), text: z.string() });
const RefusalContent = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const InputImageContent = z.looseObject({ type: z.literal('input_image'), image_url: nullable(z.string()), detail: z.enum(['low', 'high', 'auto']) });
const InputFileContent = z.looseObject({ type: z.literal('input_file'), filename: z.string().optional(), file_url: z.string().optional() });
const InputVideoContent = z.looseObject({ type: z.literal('input_video'), video_url: z.string() });

const ItemContentPart = z.discriminatedUnion('type', [
  InputTextContent,
  OutputTextContent,
  TextContent,
  SummaryTextContent,
  ReasoningTextContent,
  RefusalContent,
  InputImageContent,
  InputFileContent,
]);
const MessageContentPart = z.discriminatedUnion('type', [
  InputTextContent,
  OutputTextContent,
  TextContent,
  SummaryTextContent,
  ReasoningTextContent,
  RefusalContent,
  InputImageContent,
  InputFileContent,
  InputVideoContent,
]);

// ---------------------------------------------------------------- items

const status = z.enum(['in_progress', 'completed', 'incomplete']);

const Message = z.looseObject({
  type: z.literal('message'),
  id: z.string(),
  status,
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.array(MessageContentPart),
  phase: z.enum(['commentary', 'final_answer']).optional(),
});
const FunctionCall = z.looseObject({
  type: z.literal('function_call'),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  status,
});
const FunctionCallOutput = z.looseObject({
  type: z.literal('function_call_output'),
  id: z.string(),
  call_id: z.string(),
  output: z.union([z.string(), z.array(z.discriminatedUnion('type', [InputTextContent, InputImageContent, InputFileContent]))]),
  status,
});
const ReasoningBody = z.looseObject({
  type: z.literal('reasoning'),
  id: z.string(),
  content: z.array(ItemContentPart).optional(),
  summary: z.array(ItemContentPart),
  encrypted_content: z.string().optional(),
});
const CompactionBody = z.looseObject({
  type: z.literal('compaction'),
  id: z.string(),
  encrypted_content: z.string(),
  created_by: z.string().optional(),
});
/** Extension: OpenAI's custom tool call, which the document does not define. */
const CustomToolCallExtension = z.looseObject({
  type: z.literal('custom_tool_call'),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  input: z.string(),
});

/** Extension: OpenAI's code interpreter call (a Harmony model's `python` recipient), which the document does not define. */
const CodeInterpreterCallExtension = z.looseObject({
  type: z.literal('code_interpreter_call'),
  id: z.string(),
  code: nullable(z.string()),
  container_id: z.string(),
  outputs: nullable(z.array(z.looseObject({ type: z.string() }))),
  status: z.enum(['in_progress', 'completed', 'incomplete', 'interpreting', 'failed']),
});

export const ItemField = z.discriminatedUnion('type', [Message, FunctionCall, FunctionCallOutput, ReasoningBody, CompactionBody, CustomToolCallExtension, CodeInterpreterCallExtension]);

// ---------------------------------------------------------------- tools, tool choice, text, reasoning, usage

const FunctionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string(),
  description: nullable(z.string()),
  parameters: nullable(z.record(z.string(), z.unknown())),
  strict: nullable(z.boolean()),
});
/** Extensions: tool kinds of the OpenAI API the document leaves out (custom, namespace, hosted tools). */
const OtherToolExtension = z.looseObject({ type: z.string().refine((t) => t !== 'function', 'a function tool must match FunctionTool'), name: z.string().optional() });
const Tool = z.union([FunctionTool, OtherToolExtension]);

const FunctionToolChoice = z.looseObject({ type: z.literal('function'), name: z.string().optional() });
const ToolChoiceValue = z.enum(['none', 'auto', 'required']);
const AllowedToolChoice = z.looseObject({ type: z.literal('allowed_tools'), tools: z.array(FunctionToolChoice), mode: ToolChoiceValue });
/** Extension: OpenAI's `{type:"custom", name}` forced choice of a custom tool. */
const CustomToolChoiceExtension = z.looseObject({ type: z.literal('custom'), name: z.string() });
const ToolChoice = z.union([FunctionToolChoice, ToolChoiceValue, AllowedToolChoice, CustomToolChoiceExtension]);

const TextField = z.looseObject({
  format: z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('text') }),
    z.looseObject({ type: z.literal('json_object') }),
    z.looseObject({ type: z.literal('json_schema'), name: z.string(), description: nullable(z.string()), schema: z.unknown(), strict: z.boolean() }),
  ]),
  verbosity: z.enum(['low', 'medium', 'high']).optional(),
});

const Reasoning = z.looseObject({
  effort: nullable(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])),
  summary: nullable(z.enum(['concise', 'detailed', 'auto'])),
});

const Usage = z.looseObject({
  input_tokens: int,
  output_tokens: int,
  total_tokens: int,
  input_tokens_details: z.looseObject({ cached_tokens: int }),
  output_tokens_details: z.looseObject({ reasoning_tokens: int }),
});

// ---------------------------------------------------------------- the response object

export const ResponseResource = z.looseObject({
  id: z.string(),
  object: z.literal('response'),
  created_at: int,
  completed_at: nullable(int),
  status: z.string(),
  incomplete_details: nullable(z.looseObject({ reason: z.string() })),
  model: z.string(),
  previous_response_id: nullable(z.string()),
  instructions: nullable(z.string()),
  output: z.array(ItemField),
  error: nullable(z.looseObject({ code: z.string(), message: z.string() })),
  tools: z.array(Tool),
  tool_choice: ToolChoice,
  truncation: z.enum(['auto', 'disabled']),
  parallel_tool_calls: z.boolean(),
  text: TextField,
  top_p: z.number(),
  presence_penalty: z.number(),
  frequency_penalty: z.number(),
  top_logprobs: int,
  temperature: z.number(),
  reasoning: nullable(Reasoning),
  usage: nullable(Usage),
  max_output_tokens: nullable(int),
  max_tool_calls: nullable(int),
  store: z.boolean(),
  background: z.boolean(),
  service_tier: z.string(),
  metadata: z.unknown().refine((m) => m !== undefined, 'metadata is required'),
  safety_identifier: nullable(z.string()),
  prompt_cache_key: nullable(z.string()),
});

// ---------------------------------------------------------------- stream events

const seq = { sequence_number: int };
const at = { item_id: z.string(), output_index: int };
const withResponse = (type: string) => z.looseObject({ type: z.literal(type), ...seq, response: ResponseResource });

/** Events the document defines, and (marked) the extensions this project sends. */
export const StreamingEvent = z.discriminatedUnion('type', [
  withResponse('response.created'),
  withResponse('response.queued'),
  withResponse('response.in_progress'),
  withResponse('response.completed'),
  withResponse('response.failed'),
  withResponse('response.incomplete'),
  z.looseObject({ type: z.literal('response.output_item.added'), ...seq, output_index: int, item: nullable(ItemField) }),
  z.looseObject({ type: z.literal('response.output_item.done'), ...seq, output_index: int, item: nullable(ItemField) }),
  z.looseObject({ type: z.literal('response.reasoning_summary_part.added'), ...seq, ...at, summary_index: int, part: ItemContentPart }),
  z.looseObject({ type: z.literal('response.reasoning_summary_part.done'), ...seq, ...at, summary_index: int, part: ItemContentPart }),
  z.looseObject({ type: z.literal('response.content_part.added'), ...seq, ...at, content_index: int, part: ItemContentPart }),
  z.looseObject({ type: z.literal('response.content_part.done'), ...seq, ...at, content_index: int, part: ItemContentPart }),
  z.looseObject({ type: z.literal('response.output_text.delta'), ...seq, ...at, content_index: int, delta: z.string(), logprobs: z.array(LogProb).optional() }),
  z.looseObject({ type: z.literal('response.output_text.done'), ...seq, ...at, content_index: int, text: z.string(), logprobs: z.array(LogProb).optional() }),
  z.looseObject({ type: z.literal('response.refusal.delta'), ...seq, ...at, content_index: int, delta: z.string() }),
  z.looseObject({ type: z.literal('response.refusal.done'), ...seq, ...at, content_index: int, refusal: z.string() }),
  z.looseObject({ type: z.literal('response.reasoning.delta'), ...seq, ...at, content_index: int, delta: z.string() }),
  z.looseObject({ type: z.literal('response.reasoning.done'), ...seq, ...at, content_index: int, text: z.string() }),
  z.looseObject({ type: z.literal('response.reasoning_summary_text.delta'), ...seq, ...at, summary_index: int, delta: z.string() }),
  z.looseObject({ type: z.literal('response.reasoning_summary_text.done'), ...seq, ...at, summary_index: int, text: z.string() }),
  z.looseObject({ type: z.literal('response.output_text.annotation.added'), ...seq, ...at, content_index: int, annotation_index: int, annotation: nullable(UrlCitation) }),
  z.looseObject({ type: z.literal('response.function_call_arguments.delta'), ...seq, ...at, delta: z.string() }),
  z.looseObject({ type: z.literal('response.function_call_arguments.done'), ...seq, ...at, arguments: z.string() }),
  z.looseObject({
    type: z.literal('error'),
    ...seq,
    error: z.looseObject({ type: z.string(), code: nullable(z.string()), message: z.string(), param: nullable(z.string()) }),
  }),
  // Extensions: the openai SDK's names for the document's reasoning events (same fields), custom tool input.
  z.looseObject({ type: z.literal('response.reasoning_text.delta'), ...seq, ...at, content_index: int, delta: z.string() }),
  z.looseObject({ type: z.literal('response.reasoning_text.done'), ...seq, ...at, content_index: int, text: z.string() }),
  z.looseObject({ type: z.literal('response.custom_tool_call_input.delta'), ...seq, ...at, delta: z.string() }),
  z.looseObject({ type: z.literal('response.custom_tool_call_input.done'), ...seq, ...at, input: z.string() }),
  // Extensions: the code interpreter call's events (OpenAI's names and fields).
  z.looseObject({ type: z.literal('response.code_interpreter_call.in_progress'), ...seq, ...at }),
  z.looseObject({ type: z.literal('response.code_interpreter_call_code.delta'), ...seq, ...at, delta: z.string() }),
  z.looseObject({ type: z.literal('response.code_interpreter_call_code.done'), ...seq, ...at, code: z.string() }),
  z.looseObject({ type: z.literal('response.code_interpreter_call.completed'), ...seq, ...at }),
]);

/** The extensions StreamingEvent, ItemField and Tool admit beyond the document (for reports). */
export const EXTENSIONS = {
  events: [
    'response.reasoning_text.delta',
    'response.reasoning_text.done',
    'response.custom_tool_call_input.delta',
    'response.custom_tool_call_input.done',
    'response.code_interpreter_call.in_progress',
    'response.code_interpreter_call_code.delta',
    'response.code_interpreter_call_code.done',
    'response.code_interpreter_call.completed',
  ],
  items: ['custom_tool_call', 'code_interpreter_call'],
  tools: ['custom', 'namespace', 'hosted tool kinds'],
  toolChoice: ['{type:"custom", name}'],
} as const;

function problems(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}

/** Throws, naming every field that does not conform, unless `value` is an Open Responses response object. */
export function assertOpenResponsesResponse(value: unknown, where = 'response'): void {
  const parsed = ResponseResource.safeParse(value);
  if (!parsed.success) throw new Error(`${where} does not conform to Open Responses ResponseResource: ${problems(parsed.error)}`);
}

/**
 * Throws unless `value` is an Open Responses streaming event, or one of the named extension events unless
 * `documentOnly` (as the specification's compliance suite holds a stream: every event one the document defines).
 */
export function assertOpenResponsesEvent(value: unknown, options: { documentOnly?: boolean } = {}): void {
  const type = typeof value === 'object' && value !== null && 'type' in value ? String((value as { type: unknown }).type) : '?';
  if (options.documentOnly && (EXTENSIONS.events as readonly string[]).includes(type)) {
    throw new Error(`stream event '${type}' is not one the Open Responses document defines`);
  }
  const parsed = StreamingEvent.safeParse(value);
  if (!parsed.success) throw new Error(`stream event '${type}' does not conform to Open Responses: ${problems(parsed.error)}`);
}
