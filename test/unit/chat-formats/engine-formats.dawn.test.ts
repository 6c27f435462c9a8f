// The WebGPU engine (Node, Dawn) with the bundled toy model's weights and tokenizer under each real chat template
// (test/fixtures/chat-templates): the engine finds the format from the template's text, lists it in ModelInfo,
// renders a chat with calls, results, system and developer text through the template after the format's replay
// rules. (Forced, named and custom calls sampled under each format's grammar and read back through the Responses
// handler: responses-formats.dawn.test.ts, on a generated model.) Needs Dawn: run with
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
// (without an adapter these tests are skipped, saying why).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHAT_FORMATS, type ChatFormatName } from '../../../src/common/chat-format.ts';
import { createWebGpuEngine, type WebGpuEngine } from '../../../src/engine/webgpu-engine.ts';
import type { ChatMessage, ChatTool } from '../../../src/engine/types.ts';
import { needDawnAdapter } from '../../support/dawn-adapter.ts';
import { dawn, dawnMissing, toyHfDir } from '../../support/dawn-decoder.ts';

const MODELS: { id: string; template: string; format: ChatFormatName }[] = [
  { id: 'toy-llama3', template: 'llama-3.2-3b-instruct.jinja', format: 'llama3' },
  { id: 'toy-mistral', template: 'mistral-7b-instruct-v0.3.jinja', format: 'mistral' },
  { id: 'toy-gemma3', template: 'gemma-3-1b-it.jinja', format: 'gemma3' },
  { id: 'toy-mistral-v11', template: 'devstral-small-2507.jinja', format: 'mistral-v11' },
  { id: 'toy-phi4', template: 'phi-4-mini-instruct.jinja', format: 'phi4' },
];

let engine: WebGpuEngine | null = null;
let missing = '';

beforeAll(async () => {
  missing = await dawnMissing();
  if (missing) return;
  const models = [];
  for (const m of MODELS) {
    const template = readFileSync(new URL(`../../fixtures/chat-templates/${m.template}`, import.meta.url), 'utf8');
    models.push({ id: m.id, contextLength: 2048, hfDir: await toyHfDir(template) });
  }
  engine = createWebGpuEngine({ gpu: dawn, models });
}, 120_000);
afterAll(async () => {
  await engine?.dispose();
});

const TOOLS: ChatTool[] = [{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 8 } }, required: ['city'], additionalProperties: false } } }];
const CHAT: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'system', content: 'Developer instructions:\nUse metric.' },
  { role: 'user', content: 'Weather in Oslo?' },
  { role: 'assistant', content: '', tool_calls: [{ id: 'call_000001', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
  { role: 'tool', content: '3C', tool_call_id: 'call_000001', name: 'get_weather' },
  { role: 'user', content: 'And Rome?' },
];

describe.each(MODELS)('the engine with the $template template', ({ id, format }) => {
  test('lists the detected format and renders the chat', async (ctx) => {
    const e = needDawnAdapter(ctx, engine, missing);
    const info = (await e.listModels()).find((m) => m.id === id)!;
    expect(info.chatFormat).toBe(format);
    expect(info.markers).toMatchObject({ ...CHAT_FORMATS[format].markers, format });
    const tokens = await e.tokenizePrompt({ model: id, messages: CHAT, tools: TOOLS, enableThinking: true });
    expect(tokens.length).toBeGreaterThan(50);
  }, 120_000);
});
