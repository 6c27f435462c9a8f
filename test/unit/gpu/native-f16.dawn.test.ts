// The native `shader-f16` path of the F16 weight products on Mesa's lavapipe (Node, Dawn): the adapter has
// `shader-f16`, the device gets it, ForwardKernels picks the native F16 kernel (shaders/decode_f16_native.wgsl
// swapped into the F16 decoder, src/gpu/shaders.ts nativeF16Kernel) and the forward plan compiles that kernel and never
// the packed one; the logits of a generated F16 model (one token a step) are within llama.cpp's F16
// tolerance 1e-2 of llama.cpp's. One F16 product equals the packed path's bit for bit (a device on the same adapter
// without `shader-f16`: both widen each half exactly and accumulate in f32 in the same order) and a CPU reference,
// and the native kernel's other forms (m > 1 tiles, bias, residual, split rows, SwiGLU, GeGLU) match kernel-checks'.
// Only one pipeline runs on the packed device and the model runs one token a step: on lavapipe a pipeline new to
// Mesa's shader cache (~/.cache/mesa_shader_cache) took seconds to first run on this shared 2-core machine.
// This file runs on lavapipe, not SwiftShader (test/support/lavapipe.ts sets VK_ICD_FILENAMES, so it is imported
// first); without lavapipe, or with a lavapipe that lacks shader-f16, it fails and says how to install it.
import { LAVAPIPE_INSTALL, lavapipeIcd } from '../../support/lavapipe.ts';
import { openAsBlob } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../../src/gpu/device.ts';
import { ComputeBatch } from '../../../src/gpu/dispatch.ts';
import { ForwardKernels } from '../../../src/gpu/forward-kernels.ts';
import { PipelineCache, type KernelSource, type OverrideConstants } from '../../../src/gpu/pipeline-cache.ts';
import { createEmptyStorageBuffer, createStorageBuffer, readF32 } from '../../../src/gpu/transfer.ts';
import { BlobSource } from '../../../src/model/byte-source.ts';
import { readGguf } from '../../../src/model/gguf.ts';
import { modelConfigFromGguf, type ModelConfig } from '../../../src/model/model-config.ts';
import { ggufTensorSources, type TensorSource } from '../../../src/model/weight-loader.ts';
import { needDawnAdapter } from '../../support/dawn-adapter.ts';
import { checkProduct, type ProductCase } from '../../support/kernel-checks.ts';
import { dawn, decoderLogits, modelsWithOracle } from '../../support/dawn-decoder.ts';
import type { LlamaOracleResult } from '../../support/llama-oracle.ts';
import { maxAbsDiff } from '../../support/logit-diff.ts';
import type { TestModel } from '../../support/test-models.ts';

const F16_TOLERANCE = 1e-2;
const PROMPT = [11, 300, 42, 7, 99, 250, 3, 180, 64, 12];
const GREEDY = 6;
const CASE = {
  name: 'qwen3 F16, 128 wide, 4:2 GQA, 2 layers',
  options: { arch: 'qwen3' as const, type: 'F16' as const, seed: 61, hidden: 128, heads: 4, kvHeads: 2, intermediate: 256, layers: 2 },
};

/** A pipeline cache that records the name of every kernel asked for. */
class RecordingPipelines extends PipelineCache {
  readonly names = new Set<string>();
  override get(kernel: KernelSource, constants?: OverrideConstants, entryPoint?: string): Promise<GPUComputePipeline> {
    this.names.add(kernel.name);
    return super.get(kernel, constants, entryPoint);
  }
}

let native: GpuContext | null = null;
let packed: GpuContext | null = null;
let missing = 'not set up';
let model: { model: TestModel; oracle: LlamaOracleResult };
let config: ModelConfig;
let sources: TensorSource[];

beforeAll(async () => {
  if (!lavapipeIcd) {
    missing = `no lavapipe Vulkan driver under /usr/share/vulkan/icd.d. ${LAVAPIPE_INSTALL}`;
    return;
  }
  try {
    native = await acquireGpu({ gpu: dawn, label: 'native f16' });
    packed = await acquireGpu({ gpu: dawn, label: 'packed f16', forceFallbackF32: true });
  } catch (error) {
    missing = `no WebGPU adapter on Dawn over lavapipe (${lavapipeIcd}: ${error instanceof Error ? error.message : String(error)}). ${LAVAPIPE_INSTALL}`;
    return;
  }
  model = (await modelsWithOracle([CASE], (m) => ({ model: m.ggufPath, tokens: PROMPT, greedy: GREEDY }))).get(CASE.name)!;
  const file = await readGguf(new BlobSource(await openAsBlob(model.model.ggufPath), 'model.gguf'));
  config = modelConfigFromGguf(file);
  sources = ggufTensorSources(file);
}, 600_000);
afterAll(() => {
  native?.destroy();
  packed?.destroy();
});

/** Logits at every position of the prompt and its greedy continuation, one token a step. */
async function logitsOn(gpu: GpuContext): Promise<{ logits: Float32Array[]; kernels: Set<string> }> {
  const pipelines = new RecordingPipelines(gpu.device);
  const sequence = [...PROMPT, ...model.oracle.greedy!.slice(0, -1)];
  // maxBatch 1: every step is m = 1, so only the decode pipelines are made (fewer first runs, see the header); the
  // native kernel is the same text for m > 1 (TILE_M is an override).
  const logits = await decoderLogits({ gpu, pipelines, missing: '' }, config, sources, sequence, { prefill: PROMPT.length, decoder: { maxBatch: 1 } });
  return { logits, kernels: pipelines.names };
}

/** An f16 value from its bits. */
function halfValue(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  return sign * (exponent === 0 ? mantissa * 2 ** -24 : (1 + mantissa / 1024) * 2 ** (exponent - 15));
}

/** One F16 product y = W·x (n rows of k halves, random) on `gpu`, and its f64 CPU reference. */
async function f16ProductOn(gpu: GpuContext, n: number, k: number): Promise<{ got: Float32Array; reference: Float64Array; kernel: string }> {
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  // Halves of magnitude 2^-4 .. 2^2 with random signs and mantissas: the low and high half of a word differ.
  const halves = Uint16Array.from({ length: n * k }, () => ((random() < 0.5 ? 0x8000 : 0) | ((11 + Math.floor(random() * 6)) << 10) | Math.floor(random() * 1024)));
  const x = Float32Array.from({ length: k }, () => random() * 2 - 1);
  const reference = new Float64Array(n);
  for (let r = 0; r < n; r++) for (let i = 0; i < k; i++) reference[r]! += halfValue(halves[r * k + i]!) * x[i]!;
  const fk = new ForwardKernels(gpu);
  const w = createStorageBuffer(gpu.device, halves);
  const xb = createStorageBuffer(gpu.device, x);
  const y = createEmptyStorageBuffer(gpu.device, n * 4);
  try {
    const args = { type: 'F16' as const, weights: w, x: xb, y, m: 1, n, k };
    const ops = fk.productOps(args);
    await fk.compile(ops);
    const batch = new ComputeBatch(gpu, 'f16 product');
    fk.product(batch, args);
    batch.submit();
    return { got: await readF32(gpu.device, y, n), reference, kernel: ops[0]!.kernel.name };
  } finally {
    for (const b of [w, xb, y]) b.destroy();
    fk.destroy();
  }
}

describe('native shader-f16 on lavapipe', () => {
  test('the adapter is lavapipe with shader-f16; the native F16 kernel is chosen by the feature', (ctx) => {
    const g = needDawnAdapter(ctx, native, missing);
    const p = needDawnAdapter(ctx, packed, missing);
    const info = g.adapterInfo;
    console.log(`lavapipe adapter: ${info.vendor} / ${info.architecture} / ${info.device} / ${info.description}`);
    expect(`${info.vendor} ${info.architecture} ${info.device} ${info.description}`, 'not lavapipe: VK_ICD_FILENAMES was not honoured').toMatch(/llvmpipe|lavapipe|mesa/i);
    expect(g.adapter.features.has('shader-f16'), `lavapipe without shader-f16. ${LAVAPIPE_INSTALL}`).toBe(true);
    expect(g.features.f16).toBe(true);
    expect(p.features.f16).toBe(false);
    const fk = new ForwardKernels(g);
    const fkPacked = new ForwardKernels(p);
    try {
      expect(fk.f16Weights).toBe('native');
      expect(fkPacked.f16Weights).toBe('packed');
    } finally {
      fk.destroy();
      fkPacked.destroy();
    }
  });

  test('an F16 product on the native path equals the packed path bit for bit and the CPU reference', async (ctx) => {
    const g = needDawnAdapter(ctx, native, missing);
    const p = needDawnAdapter(ctx, packed, missing);
    const n = await f16ProductOn(g, 64, 256);
    const q = await f16ProductOn(p, 64, 256);
    // The same product split on both (subgroups where lavapipe's are of one size), the native form only with the feature.
    expect(q.kernel).toMatch(/^matmul_f16( \(subgroups\))?$/);
    expect(n.kernel).toBe(`${q.kernel} (shader-f16)`);
    let worst = 0;
    for (let r = 0; r < 64; r++) worst = Math.max(worst, Math.abs(n.got[r]! - n.reference[r]!) / (1 + Math.abs(n.reference[r]!)));
    expect(worst, 'native F16 product vs the f64 reference').toBeLessThan(1e-5);
    expect(Array.from(n.got)).toEqual(Array.from(q.got));
  }, 300_000);

  test('the native F16 product in every form (prefill tiles, bias, residual, split rows, SwiGLU, GeGLU) matches the reference', async (ctx) => {
    const g = needDawnAdapter(ctx, native, missing);
    const cases: ProductCase[] = [
      // m = 1 plain, residual and SwiGLU run in the model below; these two: 4-token tiles with a partial last tile.
      { m: 6, n: 9, blocks: 1, bias: true, accumulate: true, split: 4 },
      { m: 9, n: 10, blocks: 1, gated: true, activation: 'gelu', split: 4 },
    ];
    const fk = new ForwardKernels(g);
    try {
      expect(fk.f16Weights).toBe('native');
      for (const c of cases) expect(await checkProduct(g, fk, 'F16', c, c.m * 31 + c.n), JSON.stringify(c)).toBeNull();
    } finally {
      fk.destroy();
    }
  }, 300_000);

  test("an F16 model's logits on the native path: within 1e-2 of llama.cpp's", async (ctx) => {
    const g = needDawnAdapter(ctx, native, missing);
    const theirs = [...model.oracle.logits, ...model.oracle.greedyLogits!];
    const n = await logitsOn(g);
    const f16Kernels = [...n.kernels].filter((name) => name.startsWith('matmul_f16')).sort();
    expect(f16Kernels.length).toBeGreaterThan(0);
    expect(f16Kernels.filter((name) => !name.endsWith(' (shader-f16)')), 'packed F16 kernels compiled on a shader-f16 device').toEqual([]);
    const diff = maxAbsDiff(n.logits, theirs);
    console.log(`${CASE.name}: max |native - llama.cpp| = ${diff.toExponential(2)} over ${n.logits.length} positions (${f16Kernels.join(', ')})`);
    expect(diff).toBeLessThan(F16_TOLERANCE);
  }, 300_000);
});
