// The WebGPU engine end to end in Chromium: a generated model served by Vite (GGUF read with Range requests),
// chat template -> tokens -> prefill -> greedy decode, checked against the TypeScript reference; prefix reuse
// equals a cold start; the queue serialises concurrent requests; errors are clear (unknown model, prompt too
// long, unsupported constraint) and a lost device fails the request instead of hanging.
import { beforeAll, describe, expect, test } from 'vitest';
import { createWebGpuEngine, type WebGpuEngine } from '../../src/engine/webgpu-engine.ts';
import { EngineError, type ChatMessage, type GenerateRequest, type GenerationEvent } from '../../src/engine/types.ts';
import { referenceGreedy, referenceModelFromGguf, type ReferenceModel } from '../support/cpu-forward.ts';
import type { ForwardFixtureIndex } from './forward-cases.ts';
import { fetchGguf, loadFixtureIndex } from './forward-support.ts';
import { modelConfigFromGguf } from '../../src/model/model-config.ts';
import { toApiError } from '../../src/responses/errors.ts';

let index: ForwardFixtureIndex;
let modelUrl: string;
let reference: ReferenceModel;
let stopIds: number[];

beforeAll(async () => {
  index = await loadFixtureIndex();
  const fixture = index.cases.find((c) => c.id === 'qwen3-f32')!;
  modelUrl = new URL(fixture.gguf, location.origin).href;
  const file = await fetchGguf(fixture.gguf);
  reference = await referenceModelFromGguf(file);
  stopIds = modelConfigFromGguf(file).eosTokenIds;
  expect(stopIds.length).toBeGreaterThan(0);
});

/**
 * A greedy run of at most `max` tokens equals the reference's: the reference decides whether it stops (an end
 * token among its first max + 1 tokens: the engine checks for the end before the length) or runs to the length.
 */
function expectGreedyRun(events: GenerationEvent[], prompt: number[], max: number): void {
  const expected = referenceGreedy(reference.config, reference.weights, prompt, max + 1);
  const stopAt = expected.findIndex((t) => stopIds.includes(t));
  const done = doneOf(events);
  if (stopAt !== -1) {
    expect(tokensOf(events)).toEqual(expected.slice(0, stopAt));
    expect(done.finishReason).toBe('stop');
  } else {
    expect(tokensOf(events)).toEqual(expected.slice(0, max));
    expect(done.finishReason).toBe('length');
  }
  expect(done.usage.completionTokens).toBe(tokensOf(events).length);
}

function request(messages: ChatMessage[], extra: Partial<GenerateRequest> = {}): GenerateRequest {
  return {
    model: 'tiny',
    messages,
    tools: [],
    enableThinking: false,
    maxTokens: 12,
    sampling: { temperature: 0, top_p: 1 },
    constraint: { kind: 'none' },
    ...extra,
  };
}

async function collect(events: AsyncIterable<GenerationEvent>): Promise<GenerationEvent[]> {
  const out: GenerationEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

function tokensOf(events: GenerationEvent[]): number[] {
  return events.flatMap((e) => (e.type === 'token' ? [e.id] : []));
}

function doneOf(events: GenerationEvent[]): Extract<GenerationEvent, { type: 'done' }> {
  const done = events.filter((e) => e.type === 'done');
  expect(done).toHaveLength(1);
  expect(events[events.length - 1]).toBe(done[0]);
  return done[0] as Extract<GenerationEvent, { type: 'done' }>;
}

function engineFor(extra: { contextLength?: number; gpu?: GPU } = {}): WebGpuEngine {
  return createWebGpuEngine({
    gpu: extra.gpu,
    models: [{ id: 'tiny', aliases: ['tiny-qwen3'], gguf: modelUrl, contextLength: extra.contextLength ?? 256 }],
  });
}

const CHAT: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Say something about caches.' },
];

describe('WebGPU engine', () => {
  test('lists its models, tokenizes with the chat template, generates the reference greedy tokens', async () => {
    const engine = engineFor();
    try {
      const [info] = await engine.listModels();
      expect(info).toMatchObject({ id: 'tiny', aliases: ['tiny-qwen3'], contextLength: 256, loaded: false });
      expect(info.markers.thinkStart).toBe('<think>');
      const prompt = await engine.tokenizePrompt({ model: 'tiny-qwen3', messages: CHAT, tools: [], enableThinking: false });
      expect(prompt.length).toBeGreaterThan(10);
      const events = await collect(engine.generate(request(CHAT)));
      const tokens = tokensOf(events);
      const done = doneOf(events);
      const prefill = events.filter((e) => e.type === 'prefill');
      expect(prefill.length).toBeGreaterThan(0);
      expect(prefill[prefill.length - 1]).toEqual({ type: 'prefill', done: prompt.length, total: prompt.length });
      expect(done.usage).toEqual({ promptTokens: prompt.length, cachedTokens: 0, completionTokens: tokens.length });
      // Greedy tokens = the reference's, up to a stop token or the length, as the reference decides.
      expectGreedyRun(events, prompt, 12);
      // The streamed text is the decoded text.
      const text = events.map((e) => (e.type === 'token' ? e.text : '')).join('');
      expect(text.length).toBeGreaterThan(0);
      expect((await engine.listModels())[0].loaded).toBe(true);
    } finally {
      await engine.dispose();
    }
  });

  test('a follow-up turn reuses the cached prefix and gives the same tokens as a cold start', async () => {
    const warm = engineFor();
    const cold = engineFor();
    try {
      const first = await collect(warm.generate(request(CHAT)));
      const answer = first.map((e) => (e.type === 'token' ? e.text : '')).join('');
      const followUp: ChatMessage[] = [...CHAT, { role: 'assistant', content: answer }, { role: 'user', content: 'And more?' }];
      const second = await collect(warm.generate(request(followUp)));
      const coldRun = await collect(cold.generate(request(followUp)));
      const warmDone = doneOf(second);
      expect(warmDone.usage.cachedTokens).toBeGreaterThan(CHAT.length * 4);
      expect(doneOf(coldRun).usage.cachedTokens).toBe(0);
      expect(tokensOf(second)).toEqual(tokensOf(coldRun));
      // The same request again: everything but the last prompt token is cached.
      const again = await collect(warm.generate(request(followUp)));
      expect(doneOf(again).usage.cachedTokens).toBe(warmDone.usage.promptTokens - 1);
      expect(tokensOf(again)).toEqual(tokensOf(coldRun));
    } finally {
      await warm.dispose();
      await cold.dispose();
    }
  });

  test('concurrent requests run one at a time and each gets its own answer; maxTokens ends with length', async () => {
    const engine = engineFor();
    try {
      const a = request(CHAT, { maxTokens: 5 });
      const b = request([{ role: 'user', content: 'Another question entirely.' }], { maxTokens: 4 });
      const [ra, rb] = await Promise.all([collect(engine.generate(a)), collect(engine.generate(b))]);
      const sa = await collect(engine.generate(a));
      const sb = await collect(engine.generate(b));
      expect(tokensOf(ra)).toEqual(tokensOf(sa));
      expect(tokensOf(rb)).toEqual(tokensOf(sb));
      for (const [events, req, max] of [[ra, a, 5], [rb, b, 4]] as const) {
        expectGreedyRun(events, await engine.tokenizePrompt(req), max);
      }
    } finally {
      await engine.dispose();
    }
  });

  test('abort: a running request ends with finishReason abort; a waiting one never starts', async () => {
    const engine = engineFor();
    try {
      const controller = new AbortController();
      const events: GenerationEvent[] = [];
      for await (const e of engine.generate(request(CHAT, { maxTokens: 50, signal: controller.signal }))) {
        events.push(e);
        if (e.type === 'token') controller.abort();
      }
      expect(doneOf(events).finishReason).toBe('abort');
      expect(tokensOf(events)).toHaveLength(1);

      const waitingController = new AbortController();
      const running = collect(engine.generate(request(CHAT, { maxTokens: 3 })));
      const waiting = collect(engine.generate(request(CHAT, { maxTokens: 3, signal: waitingController.signal })));
      waitingController.abort();
      const waited = await waiting;
      expect(doneOf(waited)).toMatchObject({ finishReason: 'abort', usage: { promptTokens: 0, completionTokens: 0 } });
      expect(doneOf(await running).finishReason).not.toBe('abort');
    } finally {
      await engine.dispose();
    }
  });

  test('sampling: a seed gives the same tokens every time, with logprobs and top alternatives', async () => {
    const engine = engineFor();
    try {
      const sampled = (seed: number) =>
        collect(engine.generate(request(CHAT, { maxTokens: 10, sampling: { temperature: 1, top_p: 0.95, seed, top_logprobs: 3 } })));
      const a = await sampled(42);
      const b = await sampled(42);
      const c = await sampled(7);
      expect(tokensOf(a)).toEqual(tokensOf(b));
      expect(tokensOf(a).length).toBeGreaterThan(0);
      const greedy = tokensOf(await collect(engine.generate(request(CHAT, { maxTokens: 10 }))));
      // Random models have flat distributions: different seeds (and greedy) part ways within 10 tokens.
      expect(tokensOf(c)).not.toEqual(tokensOf(a));
      expect(greedy).not.toEqual(tokensOf(a));
      for (const e of a) {
        if (e.type !== 'token') continue;
        expect(e.logprob).toBeLessThanOrEqual(0);
        expect(e.top).toHaveLength(3);
        const top = e.top!;
        expect(top[0].logprob).toBeGreaterThanOrEqual(top[1].logprob);
        expect(top[1].logprob).toBeGreaterThanOrEqual(top[2].logprob);
        expect(e.logprob!).toBeLessThanOrEqual(top[0].logprob + 1e-6);
      }
    } finally {
      await engine.dispose();
    }
  });

  test('constrained decoding: a JSON schema holds the output to it', async () => {
    const engine = engineFor();
    try {
      const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
      await engine.checkConstraint('tiny', { kind: 'json_schema', schema });
      for (const seed of [1, 2, 3]) {
        const events = await collect(
          engine.generate(request(CHAT, { maxTokens: 40, sampling: { temperature: 1, top_p: 1, seed }, constraint: { kind: 'json_schema', schema } })),
        );
        const text = events.map((e) => (e.type === 'token' ? e.text : '')).join('');
        const done = doneOf(events);
        console.log(`json_schema seed ${seed}: ${done.finishReason} ${JSON.stringify(text)}`);
        // Seeded, so deterministic: these seeds all close the object within 40 tokens.
        expect(done.finishReason).toBe('stop');
        expect(JSON.parse(text)).toEqual({ ok: expect.any(Boolean) });
      }
    } finally {
      await engine.dispose();
    }
  });

  test('a consumer that aborts and stops pulling events does not block the next request', async () => {
    const engine = engineFor();
    try {
      const controller = new AbortController();
      const stalled = engine.generate(request(CHAT, { maxTokens: 50, signal: controller.signal }))[Symbol.asyncIterator]();
      let first = await stalled.next();
      while (!first.done && first.value.type !== 'token') first = await stalled.next();
      controller.abort();
      // No more next() calls on `stalled` for now: the next request must still run.
      const other = await collect(engine.generate(request([{ role: 'user', content: 'hi' }], { maxTokens: 3 })));
      expect(doneOf(other).usage.completionTokens).toBeGreaterThan(0);
      const rest: GenerationEvent[] = [];
      for (let r = await stalled.next(); !r.done; r = await stalled.next()) rest.push(r.value);
      expect(doneOf(rest).finishReason).toBe('abort');
    } finally {
      await engine.dispose();
    }
  });

  test('clear errors: unknown model 404, invalid schema 400, prompt longer than the context 400', async () => {
    const engine = engineFor({ contextLength: 32 });
    try {
      await expect(collect(engine.generate({ ...request(CHAT), model: 'nope' }))).rejects.toMatchObject({ name: 'EngineError', kind: 'not_found', param: 'model' });
      const badSchema = await engine.checkConstraint('tiny', { kind: 'json_schema', schema: { type: 'foo' } }).then(() => null, (e: unknown) => e);
      expect(badSchema).toMatchObject({ name: 'EngineError', kind: 'invalid_request', param: 'text.format.schema' });
      expect(toApiError(badSchema).status).toBe(400);
      await expect(engine.checkConstraint('tiny', { kind: 'json_schema', schema: null })).resolves.toBeUndefined();
      await expect(engine.checkConstraint('tiny', { kind: 'none' })).resolves.toBeUndefined();
      const long: ChatMessage[] = [{ role: 'user', content: 'word '.repeat(100) }];
      const error = await collect(engine.generate(request(long))).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect(error).toMatchObject({ kind: 'invalid_request', code: 'context_length_exceeded' });
      expect((error as Error).message).toMatch(/context is 32 tokens/);
      // The engine still serves requests that fit.
      const ok = await collect(engine.generate(request([{ role: 'user', content: 'hi' }], { maxTokens: 3 })));
      expect(doneOf(ok).finishReason).toMatch(/length|stop/);
      expect(doneOf(ok).usage.promptTokens + doneOf(ok).usage.completionTokens).toBeLessThanOrEqual(32);
    } finally {
      await engine.dispose();
    }
  });

  test('a lost device fails the request with an error (no hang), and the next request gets a new device', async () => {
    let device: GPUDevice | null = null;
    const gpu = {
      wgslLanguageFeatures: navigator.gpu.wgslLanguageFeatures,
      getPreferredCanvasFormat: () => navigator.gpu.getPreferredCanvasFormat(),
      requestAdapter: async (options?: GPURequestAdapterOptions) => {
        const adapter = await navigator.gpu.requestAdapter(options);
        if (!adapter) return null;
        return new Proxy(adapter, {
          get(target, prop) {
            if (prop === 'requestDevice') {
              return async (descriptor?: GPUDeviceDescriptor) => (device = await target.requestDevice(descriptor));
            }
            const value = Reflect.get(target, prop, target) as unknown;
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          },
        });
      },
    } as unknown as GPU;
    const engine = engineFor({ gpu });
    try {
      const events: GenerationEvent[] = [];
      const run = (async () => {
        for await (const e of engine.generate(request(CHAT, { maxTokens: 50 }))) {
          events.push(e);
          if (e.type === 'token' && events.filter((x) => x.type === 'token').length === 2) device!.destroy();
        }
      })();
      const error = await run.then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect((error as EngineError).message).toMatch(/lost|destroyed/i);
      const first = device;
      const after = await collect(engine.generate(request(CHAT, { maxTokens: 3 })));
      expect(doneOf(after).usage.completionTokens).toBeGreaterThan(0);
      expect(device).not.toBe(first);
    } finally {
      await engine.dispose();
    }
  });
});
