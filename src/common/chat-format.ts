// Chat formats: how a model family writes reasoning and tool calls, found from its chat template's text (never
// from the architecture name). Plain data and pure functions only: the output parser (src/responses/chat-formats)
// and the tool-call grammar (src/sampling/constraints/json-call-grammar.ts) read the same `ChatFormat`, so what the
// constraint lets a model write is what the parser reads back as a call.
//
// - hermes: Hermes/Qwen `<tool_call>{"name", "arguments"}</tool_call>`, reasoning in `<think>…</think>` (today's
//   format, handled by output-parser.ts and constraint-grammar.ts as before; also the fallback for templates
//   nothing else recognises).
// - llama3: Llama 3.1/3.2/3.3. A call is bare JSON `{"name": …, "parameters": {…}}` at the start of the answer,
//   optionally after `<|python_tag|>`; several are separated by `;`. The turn ends with `<|eom_id|>` or
//   `<|eot_id|>` (stop tokens: they never reach the text). No reasoning.
// - mistral: Mistral v3 (`[INST] …`, `[TOOL_CALLS] [`) and tekken (`[INST]…`, `[TOOL_CALLS][`) templates.
//   `[TOOL_CALLS]` followed by a JSON list of `{"name", "arguments"}` objects (each may carry an `"id"`). No
//   reasoning. Its templates require tool-call ids of exactly 9 alphanumerics and strictly alternating
//   user/assistant turns after one optional system message: `replayMessagesFor` rewrites the chat to fit.
// - gemma3: Gemma 3 (`<start_of_turn>`). Its template knows no tools, so this runtime's prompt convention stands in:
//   the tools are described in the system text (GEMMA3_TOOLS_PROMPT) and a call is a fenced block
//   ```tool_call\n{"name": …, "arguments": {…}}\n``` (one block per call); earlier calls replay as such blocks in
//   the model's turn and their results as ```tool_result blocks in a user turn (the template alternates
//   user/model strictly and has no tool role). No reasoning.
// - mistral-v11: Mistral's v11+ templates (Mistral Small 3.2, Devstral, Magistral: `[TOOL_CALLS]name[ARGS]{…}`,
//   the tools in `[AVAILABLE_TOOLS]`). Each call is `[TOOL_CALLS]` + the tool's name + `[ARGS]` + its arguments
//   object, no JSON around it; several calls follow one another. Results are `[TOOL_RESULTS]…[/TOOL_RESULTS]`.
//   The parser also reads a `[CALL_ID]id` between the name and `[ARGS]` (newer templates write it); the grammar
//   never writes one. Call ids replay as 9 alphanumerics (the `[CALL_ID]` templates demand them). No reasoning,
//   but see below.
// - Mistral templates that write `[THINK]`…`[/THINK]` (Magistral, Ministral 3 Reasoning; mistral-common's v13+
//   `thinking` chunks): the same format (v11, or v3/tekken) with those as its reasoning markers (withMistralThinking).
//   A block leading the answer is reasoning (output-parser.ts reads it before the format's parser), forced calls
//   may follow one (constraint-grammar.ts), stray markers are dropped. These templates render earlier reasoning only
//   from `thinking` content chunks, which the runtime's string content has no place for, so the replay writes the
//   reasoning of the tool loop under way (after the last user message) into its turns' text as `[THINK]…[/THINK]`,
//   as the model wrote it, and drops older reasoning (replay.reasoning 'markers').
// - phi4: Phi-4-mini (`<|tool|>` in its template). Its own template (tokenizer_config.json) reads the tools as a
//   JSON string in the system message's `tools` field, wrapped in `<|tool|>…<|/tool|>`, and renders neither calls
//   nor results: the replay writes the calls into the assistant's text as the model writes them and the results as
//   `<|tool_response|>` turns (a message of role `tool_response`: the template writes `<|role|>`), as llama.cpp's
//   own Phi-4-mini template does. A call is `<|tool_call|>[{"name", "arguments"}, …]<|/tool_call|>` (the list is
//   what Microsoft's model card shows the model writing; the grammar writes it so); the parser also reads one bare
//   object per block, as llama.cpp's template renders past calls. The turn ends with `<|end|>`. No reasoning.
// - harmony: gpt-oss (`<|start|>`, `<|channel|>`, `<|message|>`, `<|return|>`, `<|call|>` in its template). Its
//   prompt is rendered by the runtime (src/common/harmony.ts, not the template), its output read per channel
//   (src/responses/chat-formats/harmony-parser.ts), its calls constrained by src/sampling/constraints/harmony-grammar.ts.
import type { ChatFormatMarkers, ChatMessage, ChatTool } from './chat.ts';
import { DEFAULT_MARKERS } from './chat.ts';
import { HARMONY_CONTROL_TOKENS, HARMONY_TOKENS, isHarmonyTemplate } from './harmony.ts';

export type ChatFormatName = 'hermes' | 'llama3' | 'mistral' | 'gemma3' | 'mistral-v11' | 'phi4' | 'harmony';

/** How a format writes its tool calls (the parser's and the grammar's common description). */
export interface ToolCallSyntax {
  /** The literal that opens the calls ('' for none). */
  open: string;
  /** A call may also begin the answer without `open` (bare JSON as its first non-space character). */
  bareAtStart: boolean;
  /** The literal that closes a call ('' when the JSON's own end closes it). */
  close: string;
  /** The calls after `open` are one JSON list `[call, call, …]`. */
  list: boolean;
  /** The key holding the arguments object, as the model is told to write it (the parser also reads `arguments`). */
  argumentsKey: 'arguments' | 'parameters';
  /** Between two calls (outside a list): the grammar writes it, the parser skips it. */
  separator: string;
  /** Template literals that never reach the text (end-of-turn markers, should the engine not stop on them). */
  dropped: readonly string[];
  /**
   * A call is `open` + the tool's name + this marker + the arguments object, with no JSON object around it
   * (Mistral v11's `[ARGS]`); the other fields but `open` and `dropped` are then unused.
   */
  nameArgs?: string;
}

export interface ChatFormat {
  name: ChatFormatName;
  /** A variant of the family's templates, for diagnostics (`v3`/`tekken` for Mistral). */
  variant?: string;
  /** Reasoning and tool-call markers ('' where the format has none). */
  markers: ChatFormatMarkers;
  /** The format has a reasoning block (`markers.thinkStart`/`thinkEnd`). */
  thinking: boolean;
  calls: ToolCallSyntax;
  /** Control tokens the tool-call constraint may write as their text (Harmony's headers); absent: only `calls.open`. */
  controlTokens?: readonly string[];
  /** How history replays into this family's template (see replayMessagesFor). */
  replay: {
    /**
     * Reasoning of earlier turns: the template renders `reasoning_content`; or it is dropped; or (`markers`: a
     * template that renders it only from content chunks the runtime's string content has no place for) the
     * reasoning of the assistant turns after the last user message (the tool loop under way, as Qwen3's templates
     * keep it) leads that turn's content between the format's think markers, as the model wrote it, and earlier
     * reasoning is dropped.
     */
    reasoning: 'template' | 'drop' | 'markers';
    /** Tool-call ids the template accepts: any, or exactly 9 alphanumerics (Mistral). */
    callIds: 'any' | 'alnum9';
    /**
     * Tools, calls and results: the template renders them, or the prompt convention of a format whose template
     * has no tools (Gemma 3) writes them as text, or the tools as the leading system message's `tools` field with
     * calls as text and results as `tool_response` turns (Phi-4-mini) (see replayMessagesFor).
     */
    tools: 'template' | 'convention' | 'system-field';
    /** Calls per assistant message the template renders: any number, or one (Llama 3.x raises on more). */
    callsPerMessage: 'many' | 'one';
    /**
     * System messages: anywhere, or all folded (in order, developer ones included) into the last user message, as
     * Mistral's own tokenizer places the system prompt (its templates render a leading system message only when
     * a user message ends the chat, so it would vanish from every turn that continues after a tool result), or
     * one leading system message with later ones folded into the next user message and consecutive turns of one
     * role merged (Gemma 3, whose template alternates user/model strictly).
     */
    systemMessages: 'anywhere' | 'last-user' | 'leading';
  };
}

export const HERMES_FORMAT: ChatFormat = {
  name: 'hermes',
  markers: DEFAULT_MARKERS,
  thinking: true,
  calls: {
    open: DEFAULT_MARKERS.toolCallStart,
    bareAtStart: false,
    close: DEFAULT_MARKERS.toolCallEnd,
    list: false,
    argumentsKey: 'arguments',
    separator: '',
    dropped: [],
  },
  replay: { reasoning: 'template', tools: 'template', callIds: 'any', callsPerMessage: 'many', systemMessages: 'anywhere' },
};

export const LLAMA3_PYTHON_TAG = '<|python_tag|>';

export const LLAMA3_FORMAT: ChatFormat = {
  name: 'llama3',
  markers: { thinkStart: '', thinkEnd: '', toolCallStart: LLAMA3_PYTHON_TAG, toolCallEnd: '' },
  thinking: false,
  calls: {
    open: LLAMA3_PYTHON_TAG,
    bareAtStart: true,
    close: '',
    list: false,
    argumentsKey: 'parameters',
    separator: ';',
    dropped: ['<|eom_id|>', '<|eot_id|>'],
  },
  replay: { reasoning: 'drop', tools: 'template', callIds: 'any', callsPerMessage: 'one', systemMessages: 'anywhere' },
};

export const MISTRAL_TOOL_CALLS = '[TOOL_CALLS]';

export const MISTRAL_FORMAT: ChatFormat = {
  name: 'mistral',
  markers: { thinkStart: '', thinkEnd: '', toolCallStart: MISTRAL_TOOL_CALLS, toolCallEnd: '' },
  thinking: false,
  calls: {
    open: MISTRAL_TOOL_CALLS,
    bareAtStart: false,
    close: '',
    list: true,
    argumentsKey: 'arguments',
    separator: ',',
    dropped: ['</s>'],
  },
  replay: { reasoning: 'drop', tools: 'template', callIds: 'alnum9', callsPerMessage: 'many', systemMessages: 'last-user' },
};

export const GEMMA3_CALL_OPEN = '```tool_call';
export const GEMMA3_CALL_CLOSE = '```';

export const GEMMA3_FORMAT: ChatFormat = {
  name: 'gemma3',
  markers: { thinkStart: '', thinkEnd: '', toolCallStart: GEMMA3_CALL_OPEN, toolCallEnd: GEMMA3_CALL_CLOSE },
  thinking: false,
  calls: {
    open: GEMMA3_CALL_OPEN,
    bareAtStart: false,
    close: GEMMA3_CALL_CLOSE,
    list: false,
    argumentsKey: 'arguments',
    separator: '',
    dropped: ['<end_of_turn>'],
  },
  replay: { reasoning: 'drop', tools: 'convention', callIds: 'any', callsPerMessage: 'many', systemMessages: 'leading' },
};

/** The system text that presents tools to a model whose template has none (Gemma 3), followed by the tools' JSON. */
export const GEMMA3_TOOLS_PROMPT =
  'You can call tools. To call one, answer with a fenced block and nothing after it:\n' +
  '```tool_call\n{"name": <the tool\'s name>, "arguments": <an object of its parameters>}\n```\n' +
  'Write one block per call. A result comes back in a ```tool_result block. The tools:';

export const MISTRAL_ARGS = '[ARGS]';

export const MISTRAL_V11_FORMAT: ChatFormat = {
  name: 'mistral-v11',
  variant: 'v11',
  markers: { thinkStart: '', thinkEnd: '', toolCallStart: MISTRAL_TOOL_CALLS, toolCallEnd: '' },
  thinking: false,
  calls: {
    open: MISTRAL_TOOL_CALLS,
    bareAtStart: false,
    close: '',
    list: false,
    argumentsKey: 'arguments',
    separator: '',
    // A stray `[ARGS]` (a control token) never reaches the text.
    dropped: ['</s>', MISTRAL_ARGS],
    nameArgs: MISTRAL_ARGS,
  },
  controlTokens: [MISTRAL_TOOL_CALLS, MISTRAL_ARGS],
  // Devstral 2507's template renders no ids; the later ones (`[CALL_ID]`, Ministral 3 / Devstral 2) demand 9
  // alphanumerics, as v3/tekken do.
  replay: { reasoning: 'drop', tools: 'template', callIds: 'alnum9', callsPerMessage: 'many', systemMessages: 'anywhere' },
};

export const MISTRAL_THINK = '[THINK]';
export const MISTRAL_THINK_END = '[/THINK]';

/**
 * A Mistral format whose template writes `[THINK]…[/THINK]` (Magistral, Ministral 3 Reasoning): those are its
 * reasoning markers (control tokens the grammar may write), the rest as the format is.
 */
export function withMistralThinking(format: ChatFormat): ChatFormat {
  return {
    ...format,
    variant: `${format.variant ?? format.name}+think`,
    thinking: true,
    markers: { ...format.markers, thinkStart: MISTRAL_THINK, thinkEnd: MISTRAL_THINK_END },
    calls: { ...format.calls, dropped: [...format.calls.dropped, MISTRAL_THINK, MISTRAL_THINK_END] },
    controlTokens: [...(format.controlTokens ?? [format.calls.open]), MISTRAL_THINK, MISTRAL_THINK_END],
    replay: { ...format.replay, reasoning: 'markers' },
  };
}

export const PHI4_CALL_OPEN = '<|tool_call|>';
export const PHI4_CALL_CLOSE = '<|/tool_call|>';

export const PHI4_FORMAT: ChatFormat = {
  name: 'phi4',
  markers: { thinkStart: '', thinkEnd: '', toolCallStart: PHI4_CALL_OPEN, toolCallEnd: PHI4_CALL_CLOSE },
  thinking: false,
  calls: {
    open: PHI4_CALL_OPEN,
    bareAtStart: false,
    close: PHI4_CALL_CLOSE,
    list: true,
    argumentsKey: 'arguments',
    separator: ',',
    // A stray close marker (a control token) never reaches the text.
    dropped: ['<|end|>', '<|endoftext|>', PHI4_CALL_CLOSE],
  },
  controlTokens: [PHI4_CALL_OPEN, PHI4_CALL_CLOSE],
  replay: { reasoning: 'drop', tools: 'system-field', callIds: 'any', callsPerMessage: 'many', systemMessages: 'anywhere' },
};

/**
 * gpt-oss's Harmony (`<|start|>role<|channel|>…<|message|>…<|end|>`, src/common/harmony.ts): the runtime renders
 * its prompt (renderHarmonyPrompt) and src/responses/chat-formats/harmony-parser.ts reads its channels; `calls`
 * only names the marker a call's header starts with (the Harmony grammar writes the rest).
 */
export const HARMONY_FORMAT: ChatFormat = {
  name: 'harmony',
  markers: { thinkStart: '', thinkEnd: '', toolCallStart: '', toolCallEnd: '' },
  thinking: false,
  calls: { open: HARMONY_TOKENS.channel, bareAtStart: false, close: '', list: false, argumentsKey: 'arguments', separator: '', dropped: [] },
  controlTokens: HARMONY_CONTROL_TOKENS,
  replay: { reasoning: 'template', tools: 'template', callIds: 'any', callsPerMessage: 'many', systemMessages: 'anywhere' },
};

export const CHAT_FORMATS: Readonly<Record<ChatFormatName, ChatFormat>> = {
  hermes: HERMES_FORMAT,
  llama3: LLAMA3_FORMAT,
  mistral: MISTRAL_FORMAT,
  gemma3: GEMMA3_FORMAT,
  'mistral-v11': MISTRAL_V11_FORMAT,
  phi4: PHI4_FORMAT,
  harmony: HARMONY_FORMAT,
};

export function chatFormatByName(name: ChatFormatName | undefined): ChatFormat {
  return (name !== undefined && CHAT_FORMATS[name]) || HERMES_FORMAT;
}

/** A tokenizer_config.json `chat_template` value (a string, or named templates as a list or a record). */
export type ChatTemplateField = string | Record<string, string> | { name: string; template: string }[] | null | undefined;

/**
 * The chat format a template writes, from its text. Mistral: `[INST]` (v11 when its calls write `[ARGS]`, v3
 * when it writes `"[INST] "`, tekken otherwise; with `[THINK]` and `[/THINK]`, withMistralThinking); Llama 3.x: `<|start_header_id|>`; Phi-4-mini: `<|tool|>` or
 * `<|tool_call|>` (a Phi-3/3.5 template without tools stays hermes); anything else (Qwen, Hermes, SmolLM, no
 * template): hermes.
 */
export function detectChatFormat(field: ChatTemplateField): ChatFormat {
  const text = templateText(field);
  if (isHarmonyTemplate(text)) return HARMONY_FORMAT;
  const thinks = (format: ChatFormat) => (text.includes(MISTRAL_THINK) && text.includes(MISTRAL_THINK_END) ? withMistralThinking(format) : format);
  if (text.includes('[INST]') && text.includes(MISTRAL_ARGS)) return thinks(MISTRAL_V11_FORMAT);
  if (text.includes('<|tool|>') || text.includes(PHI4_CALL_OPEN)) return PHI4_FORMAT;
  if (text.includes('[INST]')) {
    const v3 = text.includes('[INST] ') || text.includes('[TOOL_CALLS] [');
    return thinks({ ...MISTRAL_FORMAT, variant: v3 ? 'v3' : 'tekken' });
  }
  if (text.includes('<|start_header_id|>')) return LLAMA3_FORMAT;
  if (text.includes('<start_of_turn>')) return GEMMA3_FORMAT;
  return HERMES_FORMAT;
}

function templateText(field: ChatTemplateField): string {
  if (field === null || field === undefined) return '';
  if (typeof field === 'string') return field;
  if (Array.isArray(field)) return field.map((t) => t.template).join('\n');
  return Object.values(field).join('\n');
}

/**
 * The chat as this format's template can render it (the same for a chain replayed by id and one resent by hand,
 * since both go through here): reasoning dropped where the template has no place for it; tool-call ids mapped to
 * 9 alphanumerics (a stable hash, calls and their results alike) where the template demands them; an assistant
 * message with several calls split into one message per call where the template renders only one; system
 * messages folded into the last user message where the template has no place for them elsewhere.
 */
export function replayMessagesFor(format: ChatFormat, messages: readonly ChatMessage[], tools: readonly ChatTool[] = []): ChatMessage[] {
  const { replay } = format;
  let out: ChatMessage[] = messages.map((m) => ({ ...m }));
  if (replay.reasoning === 'markers') {
    const lastUser = out.findLastIndex((m) => m.role === 'user');
    for (const [i, m] of out.entries()) {
      if (i > lastUser && m.role === 'assistant' && m.reasoning_content) m.content = `${format.markers.thinkStart}${m.reasoning_content}${format.markers.thinkEnd}${m.content}`;
    }
  }
  if (replay.reasoning !== 'template') {
    for (const m of out) delete m.reasoning_content;
  }
  if (replay.tools === 'convention') out = toConvention(format, out, tools);
  if (replay.tools === 'system-field') out = toSystemField(format, out, tools);
  if (replay.callIds === 'alnum9') {
    for (const m of out) {
      if (m.tool_calls) m.tool_calls = m.tool_calls.map((c) => ({ ...c, id: alnum9(c.id) }));
      if (m.tool_call_id !== undefined) m.tool_call_id = alnum9(m.tool_call_id);
    }
  }
  if (replay.callsPerMessage === 'one') {
    out = out.flatMap((m) =>
      m.tool_calls && m.tool_calls.length > 1 ? m.tool_calls.map((call, i) => ({ ...m, content: i === 0 ? m.content : '', tool_calls: [call] })) : [m],
    );
  }
  if (replay.systemMessages === 'last-user') {
    const system = out.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => m.content);
    const rest: ChatMessage[] = [];
    for (const m of out) {
      if (m.role === 'system' || m.role === 'developer') continue;
      const last = rest.at(-1);
      // Two user turns in a row (the template demands alternation): one turn.
      if (m.role === 'user' && last?.role === 'user') {
        rest[rest.length - 1] = { ...last, content: `${last.content}\n\n${m.content}` };
        continue;
      }
      // A user turn right after tool results (the client answered for the model): the template wants an
      // assistant turn between them (it counts calls and results out of the alternation), so an empty one stands in.
      if (m.role === 'user' && last?.role === 'tool') rest.push({ role: 'assistant', content: '' });
      rest.push(m);
    }
    if (system.length > 0) {
      const at = rest.findLastIndex((m) => m.role === 'user');
      if (at < 0) rest.unshift({ role: 'user', content: system.join('\n\n') });
      else rest[at] = { ...rest[at]!, content: [...system, rest[at]!.content].join('\n\n') };
    }
    out = rest;
  }
  if (replay.systemMessages === 'leading') {
    const rest: ChatMessage[] = [];
    let pending: string[] = [];
    for (const [i, m] of out.entries()) {
      if (m.role === 'system' || m.role === 'developer') {
        if (i === 0) rest.push({ ...m, role: 'system' });
        else pending.push(m.content);
        continue;
      }
      const content = m.role === 'user' && pending.length > 0 ? [...pending, m.content].join('\n\n') : m.content;
      if (m.role === 'user') pending = [];
      const last = rest.at(-1);
      // Two turns of one role in a row (the template demands alternation): one turn.
      if (last && last.role === m.role && (m.role === 'user' || m.role === 'assistant')) rest[rest.length - 1] = { ...last, content: joinTurns(last.content, content) };
      else rest.push({ ...m, content });
    }
    if (pending.length > 0) {
      const last = rest.at(-1);
      if (last?.role === 'user') rest[rest.length - 1] = { ...last, content: joinTurns(last.content, pending.join('\n\n')) };
      else rest.push({ role: 'user', content: pending.join('\n\n') });
    }
    out = rest;
  }
  return out;
}

function joinTurns(a: string, b: string): string {
  return a && b ? `${a}\n\n${b}` : a || b;
}

/**
 * The prompt convention of a format whose template has no tools: the tools described at the end of the system
 * text (a system message is added when there is none), calls written into the assistant's text as the model
 * writes them, results as user turns.
 */
function toConvention(format: ChatFormat, messages: ChatMessage[], tools: readonly ChatTool[]): ChatMessage[] {
  const { open, close, argumentsKey } = format.calls;
  const out: ChatMessage[] = messages.map((m) => {
    if (m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0) {
      const blocks = m.tool_calls.map((c) => {
        const args = typeof c.function.arguments === 'string' ? safeParse(c.function.arguments) : c.function.arguments;
        return `${open}\n${JSON.stringify({ name: c.function.name, [argumentsKey]: args })}\n${close}`;
      });
      const { tool_calls: _calls, ...rest } = m;
      return { ...rest, content: [m.content, ...blocks].filter((t) => t).join('\n') };
    }
    if (m.role === 'tool') return { role: 'user', content: `\`\`\`tool_result\n${m.content}\n\`\`\`` };
    return m;
  });
  if (tools.length === 0) return out;
  const text = `${GEMMA3_TOOLS_PROMPT}\n${tools.map((t) => JSON.stringify(t.function)).join('\n')}`;
  if (out[0]?.role === 'system') out[0] = { ...out[0], content: `${out[0].content}\n\n${text}` };
  else out.unshift({ role: 'system', content: text });
  return out;
}

/**
 * Phi-4-mini's template: the tools as a JSON string in the leading system message's `tools` field (a system
 * message is added when there is none), calls written into the assistant's text as the model writes them, results
 * as `tool_response` turns.
 */
function toSystemField(format: ChatFormat, messages: ChatMessage[], tools: readonly ChatTool[]): ChatMessage[] {
  const { open, close, argumentsKey } = format.calls;
  const out: ChatMessage[] = messages.map((m) => {
    if (m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0) {
      const calls = m.tool_calls.map((c) => {
        const args = typeof c.function.arguments === 'string' ? safeParse(c.function.arguments) : c.function.arguments;
        return JSON.stringify({ name: c.function.name, [argumentsKey]: args });
      });
      const { tool_calls: _calls, ...rest } = m;
      return { ...rest, content: `${m.content}${open}[${calls.join(', ')}]${close}` };
    }
    if (m.role === 'tool') return { role: 'tool_response', content: m.content };
    return m;
  });
  if (tools.length === 0) return out;
  const field = JSON.stringify(tools.map((t) => t.function));
  if (out[0]?.role === 'system') out[0] = { ...out[0], tools: field };
  else out.unshift({ role: 'system', content: '', tools: field });
  return out;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A stable 9-alphanumeric id for `id` (kept when it already is one). */
export function alnum9(id: string): string {
  if (/^[A-Za-z0-9]{9}$/.test(id)) return id;
  // FNV-1a over the UTF-16 units, two rounds with different seeds for 9 base-62 digits.
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  let out = '';
  for (let i = 0; i < 9; i++) {
    const h = i < 5 ? h1 : h2;
    out += ALNUM[(h >>> ((i % 5) * 6)) % 62];
  }
  return out;
}
