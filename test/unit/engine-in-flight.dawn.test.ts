// Decode steps in flight through the WebGPU engine (Node, Dawn, the bundled toy model): an engine keeping 2 steps
// submitted (decodeInFlight 2, the default) emits the same events as one keeping 1 (the behaviour before steps in
// flight): the same tokens for greedy requests, the same tokens and logprobs for seeded sampling with every sampling
// setting (the draw counter and the penalties' counts follow the steps); a stop token reached with a step in flight
// leaves the KV cache holding exactly the prompt and the tokens emitted, so the next request reuses that prefix;
// maxTokens, the context's end and an abort end it exactly; constrained and top_logprobs requests (one step at a
// time) are unchanged. Needs Dawn:
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
import { openAsBlob } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createWebGpuEngine, type WebGpuEngine } from '../../src/engine/webgpu-engine.ts';
import type { ChatMessage, GenerateRequest, GenerationEvent, SamplingParams } from '../../src/engine/types.ts';
import type { ConstraintSpec } from '../../src/common/constraint-spec.ts';
import { needDawnAdapter } from '../support/dawn-adapter.ts';
import { dawn, dawnMissing } from '../support/dawn-decoder.ts';

const MODEL = 'toy';
/** The same weights served with a context of SHORT_CONTEXT tokens. */
const SHORT = 'toy-short';
const SHORT_CONTEXT = 48;

let engines: Map<number, WebGpuEngine> | null = null;
let missing = '';

beforeAll(async () => {
  missing = await dawnMissing();
  if (missing) return;
  const gguf = await openAsBlob('public/models/toy-qwen3/model.gguf');
  const models = [
    { id: MODEL, gguf, contextLength: 2048 },
    { id: SHORT, gguf, contextLength: SHORT_CONTEXT },
  ];
  engines = new Map([1, 2].map((n) => [n, createWebGpuEngine({ gpu: dawn, models, decodeInFlight: n })]));
}, 120_000);
afterAll(async () => {
  for (const e of engines?.values() ?? []) await e.dispose();
});

const SMALL_TALK: ChatMessage[] = [
  { role: 'system', content: 'Developer instructions:\nThe file notes.txt holds:\nShopping list\n- bread\n- milk\n' },
  { role: 'user', content: 'Nice to meet you.' },
];
const GREEDY: SamplingParams = { temperature: 0, top_p: 1 };
const SAMPLED: SamplingParams = {
  temperature: 0.9,
  top_p: 0.95,
  top_k: 40,
  min_p: 0.01,
  presence_penalty: 0.4,
  frequency_penalty: 0.3,
  repetition_penalty: 1.1,
  logit_bias: { 13: 1.5, 2043: -2 },
  seed: 1234,
};

interface Run {
  tokens: { id: number; text: string; logprob?: number; top?: unknown }[];
  done: Extract<GenerationEvent, { type: 'done' }>;
  /** The KV cache's tokens after the request. */
  kv: number[];
}

function request(over: Partial<GenerateRequest> = {}): GenerateRequest {
  return { model: MODEL, messages: SMALL_TALK, tools: [], enableThinking: true, maxTokens: 40, sampling: GREEDY, constraint: { kind: 'none' }, ...over };
}

/** Runs a request; `abortAfter` tokens aborts it. */
async function run(e: WebGpuEngine, req: GenerateRequest, abortAfter?: number): Promise<Run> {
  const controller = new AbortController();
  const tokens: Run['tokens'] = [];
  let done: Run['done'] | null = null;
  for await (const ev of e.generate({ ...req, signal: controller.signal })) {
    if (ev.type === 'token') {
      const { type: _, ...token } = ev;
      tokens.push(token);
      if (tokens.length === abortAfter) controller.abort();
    }
    if (ev.type === 'done') done = ev;
  }
  expect(done).not.toBeNull();
  return { tokens, done: done!, kv: await kvTokens(e, req.model) };
}

/** The tokens the KV cache of a loaded model records (the engine's internals: what the next request reuses). */
async function kvTokens(e: WebGpuEngine, model: string): Promise<number[]> {
  const loaded = (e as unknown as { loaded: Map<string, Promise<{ decoder: { kv: { tokens: readonly number[] } } }>> }).loaded;
  return [...(await loaded.get(model)!).decoder.kv.tokens];
}

/** Runs `req` on the engines with 1 and 2 steps in flight (each from a cold cache) and returns both runs. */
async function both(req: GenerateRequest, abortAfter?: number): Promise<[Run, Run]> {
  const [one, two] = [engines!.get(1)!, engines!.get(2)!];
  for (const e of [one, two]) await e.logits(req.model, [0]); // any earlier request's cache forgotten
  return [await run(one, req, abortAfter), await run(two, req, abortAfter)];
}

function need(ctx: { skip: (note?: string) => void }): void {
  needDawnAdapter(ctx, engines, missing);
}

describe('decode steps in flight through the engine', () => {
  test('greedy: 2 in flight emits the tokens of 1, stops at the stop token with the cache holding exactly what was emitted', async (ctx) => {
    need(ctx);
    const prompt = await engines!.get(1)!.tokenizePrompt(request());
    const [one, two] = await both(request());
    expect(two.tokens).toEqual(one.tokens);
    expect(two.done).toEqual(one.done);
    // The toy model ends this turn with <|im_end|> (a step after it was in flight), well inside maxTokens.
    expect(two.done.finishReason).toBe('stop');
    expect(two.tokens.length).toBeGreaterThan(5);
    expect(two.done.usage.completionTokens).toBe(two.tokens.length);
    expect(two.kv).toEqual([...prompt, ...two.tokens.map((t) => t.id)]);
    expect(one.kv).toEqual(two.kv);
  }, 300_000);

  test('the next request reuses the prefix a stop with a step in flight left', async (ctx) => {
    need(ctx);
    const first = request();
    const [one1] = await both(first);
    const reply = one1.tokens.map((t) => t.text).join('');
    const next = request({ messages: [...SMALL_TALK, { role: 'assistant', content: reply }, { role: 'user', content: 'What is on the list?' }] });
    const prompt = await engines!.get(1)!.tokenizePrompt(next);
    const runs: Run[] = [];
    for (const e of [engines!.get(1)!, engines!.get(2)!]) {
      const kv = (await run(e, first)).kv;
      const again = await run(e, next);
      let common = 0;
      while (common < kv.length && kv[common] === prompt[common]) common++;
      expect(common).toBeGreaterThan(SMALL_TALK.length);
      expect(again.done.usage.cachedTokens).toBe(common);
      runs.push(again);
    }
    expect(runs[1].tokens).toEqual(runs[0].tokens);
    expect(runs[1].done).toEqual(runs[0].done);
    expect(runs[1].kv).toEqual(runs[0].kv);
  }, 300_000);

  test('seeded sampling with penalties and logit_bias: the same tokens and logprobs', async (ctx) => {
    need(ctx);
    for (const sampling of [SAMPLED, { ...SAMPLED, seed: 99, top_k: 0, top_p: 1 }, { ...GREEDY, frequency_penalty: 1.5, presence_penalty: 1 }]) {
      const [one, two] = await both(request({ sampling }));
      expect(one.tokens.length).toBeGreaterThan(5);
      expect(one.tokens.every((t) => typeof t.logprob === 'number' && t.logprob <= 0)).toBe(true);
      expect(two.tokens).toEqual(one.tokens);
      expect(two.done).toEqual(one.done);
      expect(two.kv).toEqual(one.kv);
    }
  }, 300_000);

  test('maxTokens, the context end and an abort end it exactly', async (ctx) => {
    need(ctx);
    const prompt = await engines!.get(1)!.tokenizePrompt(request());
    const [one, two] = await both(request({ maxTokens: 7 }));
    expect(two.tokens).toEqual(one.tokens);
    expect(two.done).toEqual(one.done);
    expect(two.done).toMatchObject({ finishReason: 'length', usage: { completionTokens: 7 } });
    expect(two.kv).toEqual([...prompt, ...two.tokens.slice(0, 6).map((t) => t.id)]);

    // A context of SHORT_CONTEXT tokens: the last token emitted is the one whose step would not fit.
    const [oneShort, twoShort] = await both(request({ model: SHORT, maxTokens: 100, sampling: { ...SAMPLED, logit_bias: { 2041: -100, 2043: -100 } } }));
    expect(twoShort.tokens).toEqual(oneShort.tokens);
    expect(twoShort.done).toEqual(oneShort.done);
    expect(twoShort.done).toMatchObject({ finishReason: 'length', usage: { completionTokens: SHORT_CONTEXT - prompt.length + 1 } });
    expect(twoShort.kv.length).toBe(SHORT_CONTEXT);

    const [oneAborted, twoAborted] = await both(request({ sampling: SAMPLED }), 4);
    expect(twoAborted.tokens).toEqual(oneAborted.tokens);
    expect(twoAborted.done).toEqual(oneAborted.done);
    expect(twoAborted.done).toMatchObject({ finishReason: 'abort', usage: { completionTokens: 4 } });
    expect(twoAborted.kv).toEqual([...prompt, ...twoAborted.tokens.slice(0, 3).map((t) => t.id)]);
  }, 300_000);

  test('constrained and top_logprobs requests (one step at a time) are unchanged', async (ctx) => {
    need(ctx);
    const schema = { type: 'object', properties: { item: { type: 'string', maxLength: 12 }, count: { type: 'integer' } }, required: ['item', 'count'], additionalProperties: false };
    const json: ConstraintSpec = { kind: 'json_schema', schema };
    for (const req of [request({ constraint: json, maxTokens: 60 }), request({ constraint: json, maxTokens: 60, sampling: SAMPLED }), request({ sampling: { ...SAMPLED, top_logprobs: 3 } })]) {
      const [one, two] = await both(req);
      expect(two.tokens).toEqual(one.tokens);
      expect(two.done).toEqual(one.done);
      expect(two.kv).toEqual(one.kv);
      if (req.constraint.kind !== 'none' && one.done.finishReason === 'stop') {
        const value = JSON.parse(one.tokens.map((t) => t.text).join('')) as Record<string, unknown>;
        expect(Object.keys(value).sort()).toEqual(['count', 'item']);
      }
    }
  }, 300_000);
});
