// One check per kernel, shared by the Chromium tests (test/gpu/kernels-rows.test.ts, forward-kernels-matmul.test.ts) and the Node-on-Dawn tests
// (test/unit/kernels.dawn.test.ts): run the kernel on seeded random data through the real WebGPU device,
// compare with the TypeScript reference, and check that nothing was written past the output.
// Each returns null when the kernel is right, else a message saying what is wrong.
import type { GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import type { ForwardKernels, ProductArgs, ProductWeightType } from '../../src/gpu/forward-kernels.ts';
import type { Kernels } from '../../src/gpu/kernels.ts';
import { createStorageBuffer, readBuffer } from '../../src/gpu/transfer.ts';
import {
  firstMismatch,
  firstSumMismatch,
  GUARD_WORDS,
  guardViolation,
  randomF32,
  rmsnormReference,
  seededRandom,
  sentinelOutput,
  type Reference,
} from './kernel-reference.ts';
import { QUANT_BLOCKS, dequantizeRows, quantMatmulReference, randomQuantRows, type QuantType } from './forward-reference.ts';

const U = 2 ** -24;

export const ROW_SIZES: [rows: number, n: number][] = [
  [1, 1],
  [1, 1000],
  [5, 3],
  [7, 67],
  [33, 129],
  [130, 2],
];

/** Runs `record` with a fresh output of `length` f32s followed by guard words; returns the outputs or a guard message. */
async function runWithGuardedOutput(
  gpu: GpuContext,
  length: number,
  initial: Uint32Array,
  record: (batch: ComputeBatch, output: GPUBuffer) => void | Promise<void>,
): Promise<Float32Array | string> {
  const output = createStorageBuffer(gpu.device, initial);
  const batch = new ComputeBatch(gpu, 'kernel check');
  await record(batch, output);
  batch.submit();
  const words = new Uint32Array(await readBuffer(gpu.device, output, (length + GUARD_WORDS) * 4));
  output.destroy();
  gpu.throwIfFailed();
  return guardViolation(words, length) ?? new Float32Array(words.buffer, 0, length);
}

/** One product case: m tokens, n rows, k = blocks·(the type's block), with bias / accumulate / split rows. */
export interface ProductCase {
  m: number;
  n: number;
  blocks: number;
  bias?: boolean;
  accumulate?: boolean;
  /** Split W into two row ranges dispatched separately (rows [0, split) and [split, n)). */
  split?: number;
  /** SwiGLU: W is a gate and an up matrix of n rows each, stacked per row range; Y = silu(gate·x)·(up·x). */
  gated?: boolean;
  /** With gated: GeGLU, Y = gelu_tanh(gate·x)·(up·x) (Gemma 3). */
  activation?: 'gelu';
}

/**
 * ForwardKernels.product against the f64 reference on random weights of `type` (every byte random for the
 * quantized types), written into an output followed by guard words (or accumulated onto random values).
 * Tolerance: the f32 summation bound, |got - exact| <= (K + 4)·2⁻²⁴·Σ|terms|, where the terms of a Q4_K weight
 * count its scale and min parts separately (the kernel sums them apart).
 */
export async function checkProduct(gpu: GpuContext, kernels: ForwardKernels, type: QuantType, c: ProductCase, seed: number): Promise<string | null> {
  const random = seededRandom(seed);
  const k = c.blocks * QUANT_BLOCKS[type].elements;
  const { m, n } = c;
  const w = randomQuantRows(random, type, n, k);
  const wUp = c.gated ? randomQuantRows(random, type, n, k) : undefined;
  const x = randomF32(random, m * k);
  const bias = c.bias ? randomF32(random, n) : undefined;
  const y0 = c.accumulate ? randomF32(random, m * n) : undefined;
  const rowBytes = (k / QUANT_BLOCKS[type].elements) * QUANT_BLOCKS[type].bytes;
  const ranges = c.split ? [[0, c.split], [c.split, n]] : [[0, n]];
  // A row range's buffer: its rows of W (gated: then the same rows of the up matrix, as the weight loader stacks them).
  const weights = ranges.map(([from, to]) => {
    const rows = w.subarray(from * rowBytes, to * rowBytes);
    if (!wUp) return createStorageBuffer(gpu.device, rows);
    const stacked = new Uint8Array(2 * rows.byteLength);
    stacked.set(rows);
    stacked.set(wUp.subarray(from * rowBytes, to * rowBytes), rows.byteLength);
    return createStorageBuffer(gpu.device, stacked);
  });
  const xBuffer = createStorageBuffer(gpu.device, x);
  const biasBuffer = bias ? createStorageBuffer(gpu.device, bias) : undefined;
  const initial = sentinelOutput(m * n);
  if (y0) initial.set(new Uint32Array(y0.buffer, y0.byteOffset, y0.length));
  const got = await runWithGuardedOutput(gpu, m * n, initial, async (batch, y) => {
    const calls = ranges.map(([from, to], i): ProductArgs => ({
      type, weights: weights[i], x: xBuffer, y, m, n: to - from, k, bias: biasBuffer, accumulate: c.accumulate, gated: c.gated, activation: c.activation, yOffset: from, yStride: n,
    }));
    await kernels.compile(calls.flatMap((a) => kernels.productOps(a))); // the pipelines of what the calls record
    for (const a of calls) kernels.product(batch, a);
  });
  for (const b of [...weights, xBuffer, biasBuffer]) b?.destroy();
  if (typeof got === 'string') return got;
  const reference = quantMatmulReference(dequantizeRows(type, w, n, k), x, m, n, k, bias, y0);
  return firstSumMismatch(got, wUp ? swigluOfProducts(reference, quantMatmulReference(dequantizeRows(type, wUp, n, k), x, m, n, k), c.activation) : reference);
}

/**
 * Y of a product of the weights (GPU-layout bytes, n rows of k) with m one-hot tokens (token t's x is 1 at column t):
 * Y[t, r] is weight (r, t) exactly, whatever the decoder does with the bits. Returns Y [m, n].
 */
export async function oneHotProduct(gpu: GpuContext, kernels: ForwardKernels, type: ProductWeightType, weightBytes: Uint8Array, n: number, k: number, m: number): Promise<Float32Array> {
  const weights = createStorageBuffer(gpu.device, weightBytes);
  const x = new Float32Array(m * k);
  for (let t = 0; t < m; t++) x[t * k + t] = 1;
  const xBuffer = createStorageBuffer(gpu.device, x);
  const y = createStorageBuffer(gpu.device, new Float32Array(m * n).fill(NaN));
  try {
    const args: ProductArgs = { type, weights, x: xBuffer, y, m, n, k };
    await kernels.compile(kernels.productOps(args));
    const batch = new ComputeBatch(gpu, `${type} one-hot product`);
    kernels.product(batch, args);
    batch.submit();
    return new Float32Array(await readBuffer(gpu.device, y, m * n * 4));
  } finally {
    for (const b of [weights, xBuffer, y]) b.destroy();
  }
}

/**
 * silu(gate)·up of two product references, with the error bound carried through: the products' errors
 * (γ·magnitude each) scaled by |silu'(gate)| ≤ 1.1 and |silu(gate)|, plus 64 f32 ulps of the result for the
 * activation itself (exp and the division).
 */
function swigluOfProducts(gate: Reference, up: Reference, activation?: 'gelu'): Reference {
  const gamma = (gate.terms + 2) * 2 ** -24;
  const values = new Float64Array(gate.values.length);
  const magnitude = new Float64Array(gate.values.length);
  for (let i = 0; i < values.length; i++) {
    const g = gate.values[i];
    const u = up.values[i];
    // GeGLU: the tanh-approximated GELU (|gelu'| <= 1.13 too).
    const silu = activation === 'gelu' ? 0.5 * g * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (g + 0.044715 * g ** 3))) : g / (1 + Math.exp(-g));
    values[i] = silu * u;
    magnitude[i] = 1.13 * Math.abs(u) * gate.magnitude[i] + Math.abs(silu) * up.magnitude[i] + (Math.abs(values[i]) * 64 * 2 ** -24) / gamma;
  }
  return { values, magnitude, terms: gate.terms };
}

export async function checkRmsnorm(gpu: GpuContext, kernels: Kernels, rows: number, n: number, seed: number): Promise<string | null> {
  const random = seededRandom(seed);
  const x = randomF32(random, rows * n, 3);
  const weight = randomF32(random, n, 2);
  const eps = 1e-5;
  const xBuffer = createStorageBuffer(gpu.device, x);
  const wBuffer = createStorageBuffer(gpu.device, weight);
  const got = await runWithGuardedOutput(gpu, rows * n, sentinelOutput(rows * n), (batch, y) =>
    kernels.rmsnorm(batch, { x: xBuffer, weight: wBuffer, y, rows, n, eps }),
  );
  xBuffer.destroy();
  wBuffer.destroy();
  if (typeof got === 'string') return got;
  // Σx² has relative error ≤ (n+1)u (all terms positive); the square root halves it; inverseSqrt (2 ulp in WGSL)
  // and two products add a few u: (n + 16)u relative covers it.
  return firstMismatch(got, rmsnormReference(x, weight, rows, n, eps), (n + 16) * U, 1e-30);
}

