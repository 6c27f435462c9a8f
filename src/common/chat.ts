// The chat vocabulary every layer shares: messages and tools in the shape chat templates expect (the Hugging Face /
// OpenAI chat convention), and the markers a chat format writes around reasoning and tool calls.

/** A chat message in the shape chat templates expect. */
export interface ChatMessage {
  /** `tool_response`: a tool result as Phi-4-mini's template needs it (written only by replayMessagesFor). */
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'tool_response';
  content: string;
  /** For role `system`: the tools as JSON text, for a template that reads them there (Phi-4-mini; replay only). */
  tools?: string;
  /** An assistant message's phase as the client sent it (Harmony replays `commentary` on its commentary channel). */
  phase?: 'commentary' | 'final_answer';
  /** Assistant reasoning to replay (rendered inside `<think>…</think>` by templates that know it). */
  reasoning_content?: string;
  /** Assistant tool calls; `arguments` is an object so templates can `tojson` it. */
  tool_calls?: ChatToolCall[];
  /** For role `tool`: the call this is the result of. */
  tool_call_id?: string;
  /** For role `tool`: the tool's name, when known. */
  name?: string;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: Record<string, unknown> | string };
}

/** A tool as chat templates see it (custom tools arrive here already shimmed to a function with `input: string`). */
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** The literal markers a chat format writes around reasoning and tool calls. */
export interface ChatFormatMarkers {
  thinkStart: string;
  thinkEnd: string;
  toolCallStart: string;
  toolCallEnd: string;
}

/** Hermes/Qwen markers: the one definition every layer uses. */
export const DEFAULT_MARKERS: ChatFormatMarkers = {
  thinkStart: '<think>',
  thinkEnd: '</think>',
  toolCallStart: '<tool_call>',
  toolCallEnd: '</tool_call>',
};
