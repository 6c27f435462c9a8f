// The WebGPU engine (Node, Dawn) with the bundled toy model's weights and tokenizer under gpt-oss's real chat template
// (test/fixtures/harmony): the engine detects Harmony from the template, renders the prompt with the runtime's Harmony
// renderer (this request's reasoning effort, not the template), and a forced call sampled under the Harmony grammar
// ends the turn and is read back by the Harmony parser as the declared call. (The toy tokenizer has no Harmony special
// tokens: the grammar's headers are plain text to it, which the parser reads the same.) Needs Dawn: run with
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { renderHarmonyPrompt } from '../../../src/common/harmony.ts';
import { createWebGpuEngine, type WebGpuEngine } from '../../../src/engine/webgpu-engine.ts';
import type { ChatMessage, ChatTool } from '../../../src/engine/types.ts';
import { ModelTokenizer } from '../../../src/model/tokenizer.ts';
import { OutputParser, type ParseEvent } from '../../../src/responses/output-parser.ts';
import { needDawnAdapter } from '../../support/dawn-adapter.ts';
import { dawn, dawnMissing, toyHfDir } from '../../support/dawn-decoder.ts';

const TOY = 'public/models/toy-qwen3';
const ID = 'toy-harmony';

let engine: WebGpuEngine | null = null;
let missing = '';

beforeAll(async () => {
  missing = await dawnMissing();
  if (missing) return;
  const template = readFileSync(new URL('../../fixtures/harmony/gpt-oss-20b.jinja', import.meta.url), 'utf8');
  engine = createWebGpuEngine({ gpu: dawn, models: [{ id: ID, contextLength: 2048, hfDir: await toyHfDir(template) }] });
}, 120_000);
afterAll(async () => {
  await engine?.dispose();
});

const TOOLS: ChatTool[] = [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 8 } }, required: ['city'], additionalProperties: false } } }];
const CHAT: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Weather in Oslo?' },
  { role: 'assistant', content: '', reasoning_content: 'Look it up.', tool_calls: [{ id: 'call_000001', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
  { role: 'tool', content: '3C', tool_call_id: 'call_000001', name: 'get_weather' },
];

describe('the engine with a Harmony (gpt-oss) template', () => {
  test('lists Harmony and renders the runtime prompt with the request effort', async (ctx) => {
    const e = needDawnAdapter(ctx, engine, missing);
    const info = (await e.listModels()).find((m) => m.id === ID)!;
    expect(info.chatFormat).toBe('harmony');
    const ids = await e.tokenizePrompt({ model: ID, messages: CHAT, tools: TOOLS, enableThinking: true, reasoningEffort: 'high' });
    const tokenizer = ModelTokenizer.fromJson(JSON.parse(readFileSync(`${TOY}/tokenizer.json`, 'utf8')) as Record<string, unknown>);
    const text = tokenizer.decode(ids);
    expect(text).toBe(renderHarmonyPrompt(CHAT, TOOLS, { reasoningEffort: 'high' }));
    expect(text).toContain('Reasoning: high');
    expect(text).toContain('<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo"}<|call|>');
  }, 120_000);

  test('a forced call sampled under the Harmony grammar ends the turn and parses back as the declared call', async (ctx) => {
    const e = needDawnAdapter(ctx, engine, missing);
    let called = 0;
    for (let seed = 1; seed <= 12 && called < 1; seed++) {
      const parser = new OutputParser({ markers: { thinkStart: '', thinkEnd: '', toolCallStart: '', toolCallEnd: '' }, format: 'harmony', toolCalls: true, declaredNames: new Set(['get_weather']), customNames: new Set(), startsInReasoning: false });
      const events: ParseEvent[] = [];
      let text = '';
      let finish = '';
      for await (const ev of e.generate({
        model: ID,
        messages: CHAT.slice(0, 2),
        tools: TOOLS,
        enableThinking: true,
        maxTokens: 160,
        sampling: { temperature: 1, top_p: 1, seed },
        constraint: { kind: 'tools', mode: 'required', maxCalls: 1, tools: [{ type: 'function', name: 'get_weather', parameters: TOOLS[0]!.function.parameters!, strict: true }] },
      })) {
        if (ev.type === 'token') {
          text += ev.text;
          events.push(...parser.push(ev.text));
        }
        if (ev.type === 'done') finish = ev.finishReason;
      }
      events.push(...parser.finish());
      if (finish === 'length') continue; // a random model may wander in an analysis message until the limit
      expect(finish, text).toBe('stop');
      expect(text, text).toMatch(/<\|channel\|>commentary to=functions\.get_weather <\|constrain\|>json<\|message\|>\{[^]*\}$/);
      expect(events.filter((ev) => ev.kind === 'call.start'), text).toMatchObject([{ name: 'get_weather' }]);
      const args = events.filter((ev) => ev.kind === 'call.delta').map((ev) => (ev as { text: string }).text).join('');
      expect(Object.keys(JSON.parse(args) as object), text).toEqual(['city']);
      called++;
    }
    expect(called).toBeGreaterThan(0);
  }, 600_000);
});
