// Harmony, gpt-oss's chat format: its special tokens, how its chat template is recognised, and the prompt the
// runtime renders for it. The prompt is built here rather than by the model's Jinja template because the template
// cannot say what the Responses API means (src/responses/CONTRACT.md, "Harmony"):
// - the system message carries the knowledge cutoff, the current date, `Reasoning: low|medium|high` (from the
//   request's `reasoning.effort`) and the valid channels; it and the developer message are rebuilt for every
//   request from that request alone (instructions are never inherited through previous_response_id);
// - the developer message holds the instructions (`# Instructions`) and the tools in Harmony's TypeScript-like
//   `namespace functions { type x = (_: {...}) => any; }` form;
// - earlier messages go back on their channel: final answers on `final`, messages the client marked
//   `phase: "commentary"` on `commentary`;
// - earlier calls are written as the model writes them, `<|start|>assistant<|channel|>commentary to=functions.x
//   <|constrain|>json<|message|>{…}<|call|>` (the template puts `to=` in the role and drops `<|constrain|>`), one
//   message per call (the template renders only the first), text before a call on the commentary channel;
// - tool results are `<|start|>functions.x to=assistant<|channel|>commentary<|message|>…<|end|>` with the output as
//   it is (the template JSON-quotes it);
// - analysis (reasoning) of earlier turns is dropped once a final answer follows it; the reasoning of the turn in
//   progress (calls not yet answered by a final message) is kept, as `<|channel|>analysis`;
// - code the model sent to its `python` tool (a code_interpreter_call, replayed as a call of `python` that no
//   declared function answers) is `<|channel|>analysis to=python code`, what it printed `<|start|>python to=assistant`.
// - a parameter's default is written `, // default: x` as openai-harmony writes it (the template adds a second comma),
//   a nested object type without the template's stray indentation, descriptions with `// ` on every line.
// Where the template and this renderer mean the same, they write the same text (test/unit/chat-formats/
// harmony-render.test.ts renders both). Plain functions over the shared chat vocabulary only.
import type { ChatMessage, ChatTool } from './chat.ts';
import { strftime } from './strftime.ts';

/** Harmony's special tokens (o200k_harmony ids in the comments). */
export const HARMONY_TOKENS = {
  start: '<|start|>', // 200006
  end: '<|end|>', // 200007
  message: '<|message|>', // 200008
  channel: '<|channel|>', // 200005
  constrain: '<|constrain|>', // 200003
  /** Ends the model's turn after a tool call (a stop token). */
  call: '<|call|>', // 200012
  /** Ends the model's turn after its final answer (a stop token). */
  return: '<|return|>', // 200002
} as const;

/** The special tokens a Harmony answer writes inside its turn (headers and message ends): the constraint writes them. */
export const HARMONY_CONTROL_TOKENS: readonly string[] = [
  HARMONY_TOKENS.start,
  HARMONY_TOKENS.end,
  HARMONY_TOKENS.message,
  HARMONY_TOKENS.channel,
  HARMONY_TOKENS.constrain,
];

/** Tokens that end a Harmony turn (stop tokens); `<|end|>` only ends a message inside it. */
export const HARMONY_STOP_TOKENS: readonly string[] = [HARMONY_TOKENS.return, HARMONY_TOKENS.call];

/** A chat template is gpt-oss's Harmony template when it writes Harmony's headers and turn ends. */
export function isHarmonyTemplate(text: string): boolean {
  return ['<|start|>', '<|channel|>', '<|message|>', '<|return|>', '<|call|>'].every((t) => text.includes(t));
}

export type HarmonyEffort = 'low' | 'medium' | 'high';

export interface HarmonyPromptOptions {
  /** `Reasoning:` in the system message (default medium). */
  reasoningEffort?: HarmonyEffort;
  /** `Current date:` as YYYY-MM-DD (default: today in local time, as the template's strftime_now("%Y-%m-%d")). */
  date?: string;
  /** `Knowledge cutoff:` (default gpt-oss's, 2024-06). */
  knowledgeCutoff?: string;
  /** The system message's first line (default gpt-oss's). */
  modelIdentity?: string;
}

export const HARMONY_MODEL_IDENTITY = 'You are ChatGPT, a large language model trained by OpenAI.';
export const HARMONY_KNOWLEDGE_CUTOFF = '2024-06';

/** `reasoning.effort` as Harmony's three levels: none/minimal are low (gpt-oss always reasons), xhigh/max high. */
export function harmonyEffort(effort: string | null | undefined): HarmonyEffort {
  if (effort === 'none' || effort === 'minimal' || effort === 'low') return 'low';
  if (effort === 'high' || effort === 'xhigh' || effort === 'max') return 'high';
  return 'medium';
}

/** The function name a recipient names (`functions.` stripped as a prefix only, so dotted names survive). */
export function harmonyFunctionName(recipient: string): string | null {
  return recipient.startsWith('functions.') ? recipient.slice('functions.'.length) : null;
}

const T = HARMONY_TOKENS;

/** The whole prompt for these messages and tools, ending with the opened assistant turn (`<|start|>assistant`). */
export function renderHarmonyPrompt(messages: readonly ChatMessage[], tools: readonly ChatTool[], options: HarmonyPromptOptions = {}): string {
  let out = harmonySystemMessage(tools.length > 0, options);
  // The leading system/developer messages are the instructions; later ones stay where they are.
  let first = 0;
  const instructions: string[] = [];
  while (first < messages.length && (messages[first]!.role === 'system' || messages[first]!.role === 'developer')) {
    instructions.push(messages[first]!.content);
    first++;
  }
  out += harmonyDeveloperMessage(instructions.join('\n\n'), tools);
  const rest = messages.slice(first);
  // A call of `python` that no declared function answers is code for Harmony's python tool (a code_interpreter_call).
  const python = !tools.some((t) => t.function.name === 'python');
  // Reasoning is kept only after the last final answer (an assistant message with text, no calls, not commentary).
  const isFinal = (m: ChatMessage) => m.role === 'assistant' && !(m.tool_calls && m.tool_calls.length > 0) && m.phase !== 'commentary' && m.content !== '';
  const lastFinal = rest.findLastIndex(isFinal);
  for (const [i, m] of rest.entries()) {
    switch (m.role) {
      case 'system':
      case 'developer':
        out += `${T.start}developer${T.message}${m.content}${T.end}`;
        break;
      case 'user':
        out += `${T.start}user${T.message}${m.content}${T.end}`;
        break;
      case 'tool':
        if (python && m.name === 'python') out += `${T.start}python to=assistant${T.channel}analysis${T.message}${m.content}${T.end}`;
        else out += `${T.start}functions.${m.name ?? ''} to=assistant${T.channel}commentary${T.message}${m.content}${T.end}`;
        break;
      case 'assistant': {
        const calls = m.tool_calls ?? [];
        if (m.reasoning_content && i > lastFinal) out += `${T.start}assistant${T.channel}analysis${T.message}${m.reasoning_content}${T.end}`;
        if (calls.length === 0) {
          // A message the client marked commentary goes back on that channel; an empty one (reasoning alone) is none.
          if (m.content) out += `${T.start}assistant${T.channel}${m.phase === 'commentary' ? 'commentary' : 'final'}${T.message}${m.content}${T.end}`;
          break;
        }
        if (m.content) out += `${T.start}assistant${T.channel}commentary${T.message}${m.content}${T.end}`;
        for (const call of calls) {
          const args = typeof call.function.arguments === 'string' ? call.function.arguments : JSON.stringify(call.function.arguments);
          if (python && call.function.name === 'python') {
            out += `${T.start}assistant${T.channel}analysis to=python code${T.message}${args}${T.call}`;
            continue;
          }
          out += `${T.start}assistant${T.channel}commentary to=functions.${call.function.name} ${T.constrain}json${T.message}${args}${T.call}`;
        }
        break;
      }
    }
  }
  return `${out}${T.start}assistant`;
}

export function harmonySystemMessage(withTools: boolean, options: HarmonyPromptOptions = {}): string {
  // As gpt-oss's template writes it: strftime_now("%Y-%m-%d"), the user's today (local time), not UTC's.
  const date = options.date ?? strftime(new Date(), '%Y-%m-%d');
  let text =
    `${options.modelIdentity ?? HARMONY_MODEL_IDENTITY}\n` +
    `Knowledge cutoff: ${options.knowledgeCutoff ?? HARMONY_KNOWLEDGE_CUTOFF}\n` +
    `Current date: ${date}\n\n` +
    `Reasoning: ${options.reasoningEffort ?? 'medium'}\n\n` +
    '# Valid channels: analysis, commentary, final. Channel must be included for every message.';
  if (withTools) text += "\nCalls to these tools must go to the commentary channel: 'functions'.";
  return `${T.start}system${T.message}${text}${T.end}`;
}

/** The developer message (instructions, then the tools), or '' when there is neither. */
export function harmonyDeveloperMessage(instructions: string, tools: readonly ChatTool[]): string {
  if (!instructions && tools.length === 0) return '';
  let text = '';
  if (instructions) text += `# Instructions\n\n${instructions}\n\n`;
  if (tools.length > 0) text += `# Tools\n\n${harmonyToolNamespace('functions', tools)}`;
  return `${T.start}developer${T.message}${text}${T.end}`;
}

type Schema = Record<string, unknown>;

/** Tools as Harmony's TypeScript-like namespace. */
export function harmonyToolNamespace(namespace: string, tools: readonly ChatTool[]): string {
  let out = `## ${namespace}\n\nnamespace ${namespace} {\n\n`;
  for (const { function: tool } of tools) {
    if (tool.description) out += comment(tool.description);
    out += `type ${tool.name} = `;
    const params = tool.parameters as Schema | undefined;
    const properties = params?.properties as Record<string, Schema> | undefined;
    if (properties && Object.keys(properties).length > 0) {
      const required = Array.isArray(params!.required) ? (params!.required as string[]) : [];
      out += '(_: {\n';
      for (const [name, spec] of Object.entries(properties)) {
        if (typeof spec.description === 'string' && spec.description) out += comment(spec.description);
        out += `${name}${required.includes(name) ? '' : '?'}: ${typescriptType(spec)}`;
        if (spec.default !== undefined) {
          out += `, // default: ${spec.enum || spec.oneOf ? String(spec.default) : JSON.stringify(spec.default)}\n`;
        } else out += ',\n';
      }
      out += '}) => any;\n\n';
    } else out += '() => any;\n\n';
  }
  return `${out}} // namespace ${namespace}`;
}

/** `// ` before every line of a description. */
function comment(text: string): string {
  return text
    .split('\n')
    .map((line) => `// ${line}\n`)
    .join('');
}

/** A JSON schema as the TypeScript type Harmony writes for it (as gpt-oss's template types parameters). */
export function typescriptType(spec: Schema): string {
  const nullable = spec.nullable === true ? ' | null' : '';
  const type = spec.type;
  if (Array.isArray(type)) return type.length > 1 ? type.join(' | ') : String(type[0]);
  if (type === 'array') {
    const items = spec.items as Schema | undefined;
    if (!items) return `any[]${nullable}`;
    const simple: Record<string, string> = { string: 'string[]', number: 'number[]', integer: 'number[]', boolean: 'boolean[]' };
    if (typeof items.type === 'string' && simple[items.type]) return `${simple[items.type]}${nullable}`;
    const inner = typescriptType(items);
    return `${inner === 'object | object' || inner.length > 50 ? 'any[]' : `${inner}[]`}${nullable}`;
  }
  if (Array.isArray(spec.oneOf) || Array.isArray(spec.anyOf)) {
    const variants = (spec.oneOf ?? spec.anyOf) as Schema[];
    if (variants.length > 1 && variants.some((v) => v.type === 'object')) return 'any';
    return variants.map((v) => typescriptType(v)).join(' | ');
  }
  if (type === 'string') {
    if (Array.isArray(spec.enum)) return spec.enum.map((v) => JSON.stringify(String(v))).join(' | ');
    return `string${nullable}`;
  }
  if (type === 'number' || type === 'integer') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'object') {
    const properties = spec.properties as Record<string, Schema> | undefined;
    if (!properties || Object.keys(properties).length === 0) return 'object';
    const required = Array.isArray(spec.required) ? (spec.required as string[]) : [];
    const fields = Object.entries(properties).map(([name, p]) => `${name}${required.includes(name) ? '' : '?'}: ${typescriptType(p)}`);
    return `{\n${fields.join(', ')}}`;
  }
  return 'any';
}
