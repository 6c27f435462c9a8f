// Chat templates: render chat messages (with tools, tool calls, tool results and reasoning) to the prompt
// text through @huggingface/jinja, from tokenizer_config.json's `chat_template` or GGUF's
// `tokenizer.chat_template`.

import { Template } from '@huggingface/jinja';
import type { ChatMessage, ChatTool } from '../common/chat.ts';

export interface ChatTemplateInput {
  messages: ChatMessage[];
  tools?: ChatTool[];
  /** Open the assistant turn at the end (true for generation). */
  addGenerationPrompt?: boolean;
  /** Qwen3-style thinking switch; left undefined, templates use their default. */
  enableThinking?: boolean;
  bosToken?: string | null;
  eosToken?: string | null;
  /** Further variables some templates read (e.g. `date_string`). */
  extra?: Record<string, unknown>;
}

/** A parsed chat template, ready to render many times. */
export class ChatTemplate {
  private readonly template: Template;

  constructor(readonly source: string) {
    try {
      this.template = new Template(source);
    } catch (e) {
      throw new Error(`The chat template does not parse: ${(e as Error).message}`);
    }
  }

  /**
   * The template of a tokenizer_config.json `chat_template` value (a string, or named templates as an
   * array of {name, template} or a record): with tools, the "tool_use" one when present, else "default".
   */
  static select(field: string | Record<string, string> | { name: string; template: string }[] | null | undefined, withTools: boolean): ChatTemplate {
    if (field === null || field === undefined) throw new Error('The model has no chat template (no chat_template in tokenizer_config.json or tokenizer.chat_template in the GGUF)');
    if (typeof field === 'string') return new ChatTemplate(field);
    const named: Record<string, string> = Array.isArray(field) ? Object.fromEntries(field.map((t) => [t.name, t.template])) : field;
    const chosen = (withTools ? named.tool_use : undefined) ?? named.default ?? Object.values(named)[0];
    if (chosen === undefined) throw new Error('The model has an empty list of chat templates');
    return new ChatTemplate(chosen);
  }

  render(input: ChatTemplateInput): string {
    const context: Record<string, unknown> = {
      ...input.extra,
      messages: input.messages.map(toTemplateMessage),
      add_generation_prompt: input.addGenerationPrompt ?? true,
      bos_token: input.bosToken ?? '',
      eos_token: input.eosToken ?? '',
    };
    if (input.tools && input.tools.length) context.tools = input.tools;
    if (input.enableThinking !== undefined) context.enable_thinking = input.enableThinking;
    try {
      return this.template.render(context);
    } catch (e) {
      const message = (e as Error).message;
      throw new Error(message.startsWith('The chat template') ? message : `The chat template failed to render: ${message}`);
    }
  }
}

/** Message as templates expect it: optional fields left out rather than undefined. */
function toTemplateMessage(m: ChatMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.reasoning_content !== undefined) out.reasoning_content = m.reasoning_content;
  if (m.tool_calls && m.tool_calls.length) out.tool_calls = m.tool_calls;
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  if (m.name !== undefined) out.name = m.name;
  return out;
}
