// Tokenizer (from tokenizer.json and from a GGUF's own vocabulary) against llama.cpp on the same GGUF,
// incremental detokenization, and chat templates with tools.

import { openAsBlob, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { readGguf, type GgufFile } from '../../../src/model/gguf.ts';
import { IncrementalDetokenizer } from '../../../src/model/incremental-detokenizer.ts';
import { ModelTokenizer } from '../../../src/model/tokenizer.ts';
import type { ChatMessage, ChatTool } from '../../../src/engine/types.ts';
import { makeTestModel, type TestModel, type TestModelOptions } from '../../support/test-models.ts';
import { loadLlamaModel } from './llama-oracle.ts';

const MIXED_TEXTS = [
  'Hello, world! The quick brown fox jumps over the lazy dog.',
  'Café crème, naïve résumé, Ça va? Straße über alles. ñandú',
  '東京は日本の首都です。北京欢迎你！ 안녕하세요',
  'Emoji: 🙂👍🏽 👨‍👩‍👧 ✨🚀 and flags 🇫🇷',
  'function add(a, b) {\n  return a + b; // sum\n}\n\tconst x = [1, 22, 333, 4444];\n',
  "def f(x):\n    if x >= 10:\n        return x ** 2\n    return None  # it's done\n\n\n",
  "I'm sure you'll see they've done it, haven't they? DON'T",
  '   leading spaces and trailing   ',
  '',
];
const SPECIAL_TEXT = '<|im_start|>user\nHi <think>hmm</think> <tool_call>{"a": 1}</tool_call><|im_end|>\n<|endoftext|>';

let model: TestModel;
let gguf: GgufFile;
let fromJson: ModelTokenizer;
let fromGguf: ModelTokenizer;

async function tokenizersOf(options: TestModelOptions) {
  const model = await makeTestModel(options);
  const gguf = await readGguf(await openAsBlob(model.ggufPath));
  const fromJson = ModelTokenizer.fromJson(
    JSON.parse(readFileSync(join(model.hfDir, 'tokenizer.json'), 'utf8')),
    JSON.parse(readFileSync(join(model.hfDir, 'tokenizer_config.json'), 'utf8')),
  );
  return { model, gguf, fromJson, fromGguf: ModelTokenizer.fromGguf(gguf.metadata) };
}

const TINY = { type: 'F32', hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 96, layers: 1 } as const;

beforeAll(async () => {
  ({ model, gguf, fromJson, fromGguf } = await tokenizersOf({ arch: 'qwen3', ...TINY }));
});

describe.each(['bpe', 'spm'] as const)('%s tokenizer', (kind) => {
  let t: Awaited<ReturnType<typeof tokenizersOf>>;
  let llamaIds: { text: string; ids: number[] }[];

  beforeAll(async () => {
    t = await tokenizersOf({ arch: kind === 'bpe' ? 'qwen3' : 'llama', tokenizer: kind, ...TINY });
    const llama = await loadLlamaModel(t.model.ggufPath);
    try {
      llamaIds = [
        ...MIXED_TEXTS.map((text) => ({ text, ids: Array.from(llama.tokenize(text, false), Number) })),
        { text: SPECIAL_TEXT, ids: Array.from(llama.tokenize(SPECIAL_TEXT, true), Number) },
      ];
    } finally {
      await llama.dispose();
    }
  });

  test('token ids equal llama.cpp on mixed text, from tokenizer.json and from the GGUF alone', () => {
    for (const { text, ids } of llamaIds) {
      expect(t.fromGguf.encode(text), text).toEqual(ids);
      expect(t.fromJson.encode(text), text).toEqual(ids);
    }
    // The vocabulary is tiny, so texts use many merges and byte tokens: make sure merges were exercised.
    const ascii = llamaIds[0];
    expect(ascii.ids.length).toBeLessThan(new TextEncoder().encode(ascii.text).length * 0.8);
  });

  test('decode inverts encode', () => {
    for (const text of MIXED_TEXTS) expect(t.fromGguf.decode(t.fromGguf.encode(text))).toBe(text);
  });

  test('incremental detokenizer: deltas concatenate to the text and never hold half a UTF-8 character', () => {
    for (const text of MIXED_TEXTS) {
      const ids = t.fromGguf.encode(text);
      const detok = new IncrementalDetokenizer(t.fromGguf);
      const deltas = ids.map((id) => detok.push(id));
      deltas.push(detok.flush());
      for (const d of deltas) {
        expect(d).not.toContain('\uFFFD');
        expect(d).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      }
      expect(deltas.join('')).toBe(text);
      // A multi-byte character split over byte tokens gives an empty delta first.
      if (/[東🙂]/u.test(text)) expect(deltas.some((d) => d === '')).toBe(true);
    }
  });

  test('a sequence cut inside a character flushes at most a replacement character', () => {
    const ids = t.fromGguf.encode('🙂');
    expect(ids.length).toBeGreaterThan(1);
    const detok = new IncrementalDetokenizer(t.fromGguf);
    expect(detok.push(ids[0])).toBe('');
    // Byte-level BPE decodes the stray byte to U+FFFD; SentencePiece byte fallback drops it.
    expect(kind === 'bpe' ? '\uFFFD' : '').toBe(detok.flush());
  });
});

describe('tokenizer files', () => {
  test('special tokens are matched whole and decode back', () => {
    const ids = fromGguf.encode(SPECIAL_TEXT);
    for (const s of model.specialTokens) expect(ids, s.content).toContain(s.id);
    expect(fromGguf.decode(ids)).toBe(SPECIAL_TEXT);
    expect(fromGguf.decode(ids, { skipSpecialTokens: true })).not.toContain('<|im_start|>');
  });

  test('ids, eos and bos come from the files', () => {
    for (const t of [fromJson, fromGguf]) {
      expect(t.eosTokenId).toBe(model.eosId);
      expect(t.tokenId('<|im_end|>')).toBe(model.eosId);
      expect(t.vocabSize).toBe(model.vocabSize);
      expect(t.specialTokens.find((s) => s.content === '<think>')).toMatchObject({ control: false });
      expect(t.specialTokens.find((s) => s.content === '<|im_start|>')).toMatchObject({ control: true });
    }
    expect(fromGguf.chatTemplate).toBe(fromJson.chatTemplate);
  });

  test('a GGUF with an unknown tokenizer model is refused by name', () => {
    expect(() => ModelTokenizer.fromGguf({ ...gguf.metadata, 'tokenizer.ggml.model': 'bert' })).toThrow(
      /Unsupported GGUF tokenizer model "bert"/,
    );
  });
});

describe('chat template', () => {
  const tools: ChatTool[] = [
    { type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
  ];
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: '',
      reasoning_content: 'I should call the tool.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }],
    },
    { role: 'tool', content: '{"temp": 21}', tool_call_id: 'call_1', name: 'get_weather' },
    { role: 'user', content: 'Thanks!' },
  ];

  test('renders tools, tool calls, tool results and reasoning, the same from both files', () => {
    const fromConfig = ChatTemplate.select(fromJson.chatTemplate, true);
    const fromGgufTemplate = ChatTemplate.select(fromGguf.chatTemplate, true);
    const prompt = fromConfig.render({ messages, tools, addGenerationPrompt: true, enableThinking: true });
    expect(fromGgufTemplate.render({ messages, tools, addGenerationPrompt: true, enableThinking: true })).toBe(prompt);
    expect(prompt.startsWith('<|im_start|>system\nYou are terse.\n\n# Tools')).toBe(true);
    const toolsBlock = /<tools>\n(.*)\n<\/tools>/.exec(prompt);
    expect(JSON.parse(toolsBlock![1])).toEqual(tools[0]);
    expect(prompt).toContain('<|im_start|>assistant\n<think>\nI should call the tool.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>');
    expect(prompt).toContain('<|im_start|>user\n<tool_response>\n{"temp": 21}\n</tool_response><|im_end|>');
    expect(prompt.endsWith('<|im_start|>user\nThanks!<|im_end|>\n<|im_start|>assistant\n')).toBe(true);
    const ids = fromJson.encode(prompt);
    expect(ids.filter((id) => id === fromJson.tokenId('<|im_start|>')).length).toBe(6);
    expect(fromJson.decode(ids)).toBe(prompt);
  });

  test('enable_thinking false pre-fills an empty think block; no tools, no tools block', () => {
    const template = ChatTemplate.select(fromGguf.chatTemplate, false);
    const prompt = template.render({ messages: [{ role: 'user', content: 'Hi' }], addGenerationPrompt: true, enableThinking: false });
    expect(prompt).toBe('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n');
    expect(template.render({ messages: [{ role: 'developer', content: 'Rules' }, { role: 'user', content: 'Hi' }], addGenerationPrompt: false })).toBe(
      '<|im_start|>system\nRules<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n',
    );
  });

  test("strftime_now writes English month names in any locale (Llama 3.x's 'Today Date: 02 Dec 2026')", () => {
    const real = Intl.DateTimeFormat;
    const english = (month: 'short' | 'long') => new real('en-US', { month }).format(new Date());
    try {
      // A German browser: Intl's default locale would give "Dez." and "Dezember".
      Intl.DateTimeFormat = function (locales?: string | string[], options?: Intl.DateTimeFormatOptions) {
        return new real(locales ?? 'de-DE', options);
      } as unknown as typeof Intl.DateTimeFormat;
      expect(new ChatTemplate('{{ strftime_now("%b|%B") }}').render({ messages: [] })).toBe(`${english('short')}|${english('long')}`);
    } finally {
      Intl.DateTimeFormat = real;
    }
  });

  test('string arguments pass through; raise_exception and missing templates give clear errors', () => {
    const template = ChatTemplate.select(fromGguf.chatTemplate, false);
    const prompt = template.render({
      messages: [{ role: 'assistant', content: 'ok', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"x": 1}' } }] }],
      addGenerationPrompt: false,
    });
    expect(prompt).toContain('ok\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>');
    expect(() => new ChatTemplate("{{ raise_exception('no system role') }}").render({ messages: [] })).toThrow(/chat template failed to render: .*no system role/);
    expect(() => ChatTemplate.select(null, false)).toThrow(/no chat template/);
    expect(() => new ChatTemplate('{% if %}')).toThrow(/does not parse/);
  });
});
