// gpt-oss on Dawn (Node WebGPU) against llama.cpp (tools/llama-oracle: node-llama-cpp's CPU build, which has the
// gpt-oss architecture): generated models (tools/make-test-model --arch gpt-oss) of several shapes, F32 experts and
// MXFP4 experts (llama.cpp's own MXFP4_MOE quantizer), sliding windows shorter than the prompt, 2 and 4 experts used,
// YaRN on and off; prefill logits at every position and decode steps (m = 1) after it, split attention too, and
// experts split over several buffers. Dawn needs a Vulkan driver:
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
import { openAsBlob } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createWebGpuEngine } from '../../src/engine/webgpu-engine.ts';
import { type DecoderOptions, type DecoderWeights, type GpuExperts } from '../../src/model/decoder.ts';
import { readGguf } from '../../src/model/gguf.ts';
import { modelConfigFromGguf, type ModelConfig } from '../../src/model/model-config.ts';
import { ggufTensorSources } from '../../src/model/weight-loader.ts';
import { needDawnAdapter } from '../support/dawn-adapter.ts';
import { acquireDawn, dawn, decoderLogits, type DawnDevice } from '../support/dawn-decoder.ts';
import { llamaQuantize } from '../support/ggml-oracle.ts';
import { moeRouteReference, seededRandom } from '../support/kernel-reference.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { ForwardKernels } from '../../src/gpu/forward-kernels.ts';
import { createEmptyStorageBuffer, createStorageBuffer, readBuffer } from '../../src/gpu/transfer.ts';
import { runLlamaOracle, type LlamaOracleResult } from '../support/llama-oracle.ts';
import { makeTestModel, type TestModelOptions } from '../support/test-models.ts';
import { maxAbsDiff } from '../support/logit-diff.ts';

/**
 * Max |logit - llama.cpp| allowed: unquantized (both sides f32 arithmetic on the same weights); quantized (llama.cpp
 * quantizes the activations to Q8_0 for its MXFP4 and Q8_0 products, this runtime keeps them f32).
 */
const TOLERANCE = { exact: 1e-4, quantized: 0.15 };

interface Case {
  id: string;
  /** The model this runtime runs. */
  model: TestModelOptions;
  /** The model llama.cpp runs (default: the same file): an F32 twin holding the same values. */
  oracle?: TestModelOptions;
  /** Quantize the file with llama.cpp's quantizer first (both sides run the result). */
  quantize?: 'MXFP4_MOE';
  tolerance: keyof typeof TOLERANCE;
  /** Prompt length (prefill); then `decode` more tokens one step each. */
  prompt: number;
  decode: number;
  /** Decoder options: smaller parts (experts split over buffers), attention split into short chunks. */
  maxPartBytes?: number;
  shapes?: DecoderOptions['shapes'];
  /** Tokens per prefill step (default 16: one step). */
  maxBatch?: number;
}

const base = { arch: 'gpt-oss', type: 'F32', hidden: 128, heads: 4, kvHeads: 2, headDim: 32, intermediate: 64, layers: 2 } as const;
const wide = { ...base, hidden: 256, heads: 8, kvHeads: 1, headDim: 64, intermediate: 96, experts: 6, expertsUsed: 2, window: 3, yarnFactor: 8, yarnOriginalContext: 256 } as const;
const mxfp4 = { expertType: 'MXFP4' } as const;
const mxfp4Twin = { expertValuesOf: 'MXFP4' } as const;
const CASES: Case[] = [
  { id: 'F32 experts, 8 experts / 2 used, window 4, YaRN', model: { ...base, seed: 1, experts: 8, expertsUsed: 2, window: 4 }, tolerance: 'exact', prompt: 11, decode: 3 },
  {
    id: 'F32 experts, 16 experts / 4 used, window 5, 4 layers, no YaRN, prefill in steps of 5',
    model: { ...base, seed: 2, experts: 16, expertsUsed: 4, window: 5, layers: 4, yarnFactor: 0 },
    tolerance: 'exact',
    prompt: 13,
    decode: 2,
    maxBatch: 5,
  },
  {
    id: 'F32 experts, head dim 64, 8 heads / 1 KV head, window 3, experts split over buffers, split attention',
    model: { ...wide, seed: 3 },
    tolerance: 'exact',
    prompt: 9,
    decode: 4,
    maxPartBytes: 2 * 96 * 256 * 4 * 2,
    shapes: { forward: { attention: { WORKGROUP_SIZE: 4, SPLIT_POSITIONS: 4 } } },
  },
  // MXFP4 experts written directly against llama.cpp on an F32 file of the same (MXFP4-rounded) values: the MXFP4
  // decoding and expert products exactly, free of llama.cpp's activation quantization.
  { id: 'MXFP4 experts = their F32 twin, 8 experts / 2 used, window 4', model: { ...base, ...mxfp4, seed: 6, experts: 8, expertsUsed: 2, window: 4 }, oracle: { ...base, ...mxfp4Twin, seed: 6, experts: 8, expertsUsed: 2, window: 4 }, tolerance: 'exact', prompt: 11, decode: 3 },
  {
    id: 'MXFP4 experts = their F32 twin, 16 experts / 4 used, window 6, 4 layers, split over buffers',
    model: { ...base, ...mxfp4, seed: 7, experts: 16, expertsUsed: 4, window: 6, layers: 4 },
    oracle: { ...base, ...mxfp4Twin, seed: 7, experts: 16, expertsUsed: 4, window: 6, layers: 4 },
    tolerance: 'exact',
    prompt: 12,
    decode: 2,
    maxPartBytes: 5 * 64 * 20 * 2 * 4,
  },
  // The published way: llama.cpp's MXFP4_MOE quantizer (experts MXFP4, the other matrices Q8_0), both sides on its file.
  { id: 'MXFP4_MOE file, 8 experts / 2 used, window 4', model: { ...base, seed: 4, experts: 8, expertsUsed: 2, window: 4 }, quantize: 'MXFP4_MOE', tolerance: 'quantized', prompt: 11, decode: 3 },
  { id: 'MXFP4_MOE file, 16 experts / 4 used, window 6', model: { ...base, seed: 8, experts: 16, expertsUsed: 4, window: 6 }, quantize: 'MXFP4_MOE', tolerance: 'quantized', prompt: 12, decode: 2 },
];
// gpt-oss-20b's layer shapes (hidden 2880, 64 heads / 8 KV heads of 64, experts 2880 wide, window 128, YaRN 32 over
// 4096, theta 150000) with 2 layers and 4 experts (2 used) instead of 24 and 32 (4 used), MXFP4 experts against their
// F32 twin, a prompt past the window: opt-in (GPT_OSS_20B_SHAPE=1), as the twin is an 800 MB file.
const HEAVY = process.env.GPT_OSS_20B_SHAPE === '1';
if (HEAVY) {
  const shape = { ...base, hidden: 2880, heads: 64, kvHeads: 8, headDim: 64, intermediate: 2880, layers: 2, experts: 4, expertsUsed: 2, window: 128, ropeTheta: 150000, seed: 20 } as const;
  CASES.push({ id: "gpt-oss-20b's layer shapes, MXFP4 experts = their F32 twin, prompt past the window", model: { ...shape, ...mxfp4 }, oracle: { ...shape, ...mxfp4Twin }, tolerance: 'exact', prompt: 134, decode: 2 });
}

let device: DawnDevice = { gpu: null, pipelines: null, missing: 'not set up' };
const models = new Map<string, { path: string; tokens: number[]; llama: LlamaOracleResult }>();

beforeAll(async () => {
  const jobs: { id: string; path: string; oracle: string; tokens: number[] }[] = [];
  for (const c of CASES) {
    const model = await makeTestModel(c.model);
    const path = c.quantize ? llamaQuantize(model.ggufPath, c.quantize) : model.ggufPath;
    const oracle = c.oracle ? (await makeTestModel(c.oracle)).ggufPath : path;
    // Ordinary byte tokens and merges (ids below the special tokens), a fixed pseudo-random pattern per seed.
    const tokens = Array.from({ length: c.prompt + c.decode }, (_, i) => (37 + 53 * i + 11 * (c.model.seed ?? 1) * i * i) % 300);
    jobs.push({ id: c.id, path, oracle, tokens });
  }
  const results = runLlamaOracle(jobs.map((j) => ({ model: j.oracle, tokens: j.tokens })));
  jobs.forEach((j, i) => models.set(j.id, { path: j.path, tokens: j.tokens, llama: results[i] }));
  device = await acquireDawn();
}, HEAVY ? 1_800_000 : 300_000);
afterAll(() => device.gpu?.destroy());


/** Our logits for the case: prefill of the prompt (every position), then one decode step per further token. */
async function gptOssLogits(
  c: Case,
  path: string,
  tokens: number[],
  edit?: (config: ModelConfig) => ModelConfig,
  poke?: (weights: DecoderWeights) => void,
): Promise<Float32Array[]> {
  const file = await readGguf(await openAsBlob(path));
  const config = edit ? edit(modelConfigFromGguf(file)) : modelConfigFromGguf(file);
  return decoderLogits(device, config, ggufTensorSources(file), tokens, {
    prefill: c.prompt,
    maxPartBytes: c.maxPartBytes,
    decoder: { maxSeq: Math.max(64, tokens.length), maxBatch: c.maxBatch ?? 16, shapes: c.shapes },
    poke: (weights) => {
      if (c.maxPartBytes) expect(weights.layers[0].moe!.gateUp.parts.length, 'experts split over buffers').toBeGreaterThan(1);
      poke?.(weights);
    },
  });
}

describe('gpt-oss logits equal llama.cpp', () => {
  for (const c of CASES) test(c.id, async (ctx) => {
    needDawnAdapter(ctx, device.gpu, device.missing);
    const { path, tokens, llama } = models.get(c.id)!;
    const ours = await gptOssLogits(c, path, tokens);
    expect(ours.length).toBe(tokens.length);
    const prefill = maxAbsDiff(ours.slice(0, c.prompt), llama.logits.slice(0, c.prompt));
    const decode = maxAbsDiff(ours.slice(c.prompt), llama.logits.slice(c.prompt));
    console.log(`gpt-oss ${c.id}: max |logit - llama.cpp| prefill ${prefill.toExponential(2)}, decode ${decode.toExponential(2)}`);
    if (process.env.GPT_OSS_DEBUG) console.log(ours.map((row, p) => maxAbsDiff([row], [llama.logits[p]]).toExponential(1)).join(' '));
    const tolerance = TOLERANCE[c.tolerance];
    expect(prefill).toBeLessThan(tolerance);
    expect(decode).toBeLessThan(tolerance);
  }, HEAVY ? 1_800_000 : 300_000);
});

// Each gpt-oss feature this runtime implements, turned off in the config on an F32 case, misses llama.cpp by far
// more than the tolerance: the comparison above sees each of them.
describe('without a feature the logits miss llama.cpp', () => {
  const edits: [string, (c: ModelConfig) => ModelConfig][] = [
    ['no attention sinks', (c) => ({ ...c, attentionSinks: false })],
    ['no sliding window', (c) => ({ ...c, slidingWindow: undefined })],
    ['no YaRN', (c) => ({ ...c, ropeScaling: null })],
    ['the window on every layer (no full-attention layers)', (c) => ({ ...c, slidingWindow: { size: c.slidingWindow!.size, pattern: 1000 } })],
  ];
  for (const [what, edit] of edits) {
    test(what, async (ctx) => {
      needDawnAdapter(ctx, device.gpu, device.missing);
      const c = CASES[0];
      const { path, tokens, llama } = models.get(c.id)!;
      const ours = await gptOssLogits(c, path, tokens, edit);
      const diff = maxAbsDiff(ours, llama.logits);
      console.log(`gpt-oss ${c.id}, ${what}: max |logit - llama.cpp| ${diff.toExponential(2)}`);
      expect(diff).toBeGreaterThan(100 * TOLERANCE.exact);
    }, 300_000);
  }
});

describe('only the chosen experts are read', () => {
  test('experts the router never chooses, filled with NaN, leave the logits as they were', async (ctx) => {
    const g = needDawnAdapter(ctx, device.gpu, device.missing);
    const c = CASES[0];
    const { path, tokens } = models.get(c.id)!;
    const experts = c.model.experts!;
    const unused = experts / 2;
    // Experts unused .. experts - 1 get a router bias of -1e30 (never in the top 2 of 8), then NaN weights.
    const bar = (w: DecoderWeights) => {
      for (const L of w.layers) g.device.queue.writeBuffer(L.moe!.routerBias.buffer, unused * 4, new Float32Array(experts - unused).fill(-1e30));
    };
    const nan = (w: DecoderWeights) => {
      bar(w);
      const fill = (e: GpuExperts) => {
        const [part] = e.parts;
        const words = e.rows * e.cols;
        for (let m = 0; m < e.stacked; m++) g.device.queue.writeBuffer(part.buffer, ((m * e.experts + unused) * words) * 4, new Float32Array((experts - unused) * words).fill(NaN));
      };
      for (const L of w.layers) [L.moe!.gateUp, L.moe!.down].forEach(fill);
    };
    const barred = await gptOssLogits(c, path, tokens, undefined, bar);
    const poisoned = await gptOssLogits(c, path, tokens, undefined, nan);
    expect(barred.every((row) => row.every(Number.isFinite))).toBe(true);
    expect(maxAbsDiff(poisoned, barred)).toBe(0);
  }, 300_000);
});

describe('the engine serves a gpt-oss model', () => {
  test("its logits equal llama.cpp's; greedy generation from a chat prompt gives llama.cpp's greedy tokens", async (ctx) => {
    needDawnAdapter(ctx, device.gpu, device.missing);
    const c = CASES[0];
    const { path, tokens, llama } = models.get(c.id)!;
    const engine = createWebGpuEngine({ gpu: dawn, models: [{ id: 'gpt-oss-test', gguf: await openAsBlob(path), contextLength: 256 }] });
    try {
      const { logits } = await engine.logits('gpt-oss-test', tokens);
      expect(maxAbsDiff(logits, llama.logits)).toBeLessThan(TOLERANCE.exact);
      const messages = [{ role: 'user' as const, content: 'Say something.' }];
      const prompt = await engine.tokenizePrompt({ model: 'gpt-oss-test', messages, tools: [], enableThinking: false });
      const [oracle] = runLlamaOracle([{ model: path, tokens: prompt, greedy: 8 }]);
      const ids: number[] = [];
      for await (const ev of engine.generate({ model: 'gpt-oss-test', messages, tools: [], enableThinking: false, maxTokens: 8, sampling: { temperature: 0, top_p: 1 }, constraint: { kind: 'none' } })) {
        if (ev.type === 'token') ids.push(ev.id);
      }
      expect(ids.length).toBeGreaterThan(0);
      expect(ids).toEqual(oracle.greedy!.slice(0, ids.length));
    } finally {
      await engine.dispose();
    }
  }, 300_000);
});

describe('moe_route kernel', () => {
  test('top-k in descending order with ties to the lower expert id, softmax over the chosen', async (ctx) => {
    const g = needDawnAdapter(ctx, device.gpu, device.missing);
    const fk = new ForwardKernels(g, { pipelines: device.pipelines! });
    const random = seededRandom(17);
    for (const [m, experts, used] of [[1, 32, 4], [70, 8, 2], [5, 128, 16], [3, 4, 4]]) {
      // Logits on a coarse grid so that ties are common.
      const logits = Float32Array.from({ length: m * experts }, () => Math.round(random() * 8) / 4 - 1);
      const ids = createEmptyStorageBuffer(g.device, m * used * 4);
      const weights = createEmptyStorageBuffer(g.device, m * used * 4);
      const call = { logits: createStorageBuffer(g.device, logits), ids, weights, m, experts, used };
      await fk.compile(fk.moeRouteOps(call));
      const batch = new ComputeBatch(g, 'moe route test');
      fk.moeRoute(batch, call);
      batch.submit();
      const expected = moeRouteReference(logits, m, experts, used);
      expect(Array.from(new Uint32Array(await readBuffer(g.device, ids, m * used * 4))), `m ${m}, ${used} of ${experts}`).toEqual(expected.ids);
      const got = new Float32Array(await readBuffer(g.device, weights, m * used * 4));
      expect(Math.max(...got.map((w, i) => Math.abs(w - expected.weights[i])))).toBeLessThan(1e-6);
    }
    fk.destroy();
  }, 120_000);
});
