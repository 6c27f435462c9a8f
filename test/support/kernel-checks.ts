// One check per kernel, shared by the Chromium tests (test/gpu/kernels-*.test.ts) and the Node-on-Dawn tests
// (test/unit/kernels.dawn.test.ts): run the kernel on seeded random data through the real WebGPU device,
// compare with the TypeScript reference, and check that nothing was written past the output.
// Each returns null when the kernel is right, else a message saying what is wrong.
import type { GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import type { Kernels, WeightType } from '../../src/gpu/kernels.ts';
import { createStorageBuffer, readBuffer } from '../../src/gpu/transfer.ts';
import {
  f16BitsToNumber,
  firstMismatch,
  firstSumMismatch,
  GUARD_WORDS,
  guardViolation,
  matmulReference,
  matvecReference,
  packF16,
  randomF16Bits,
  randomF32,
  rmsnormReference,
  seededRandom,
  sentinelOutput,
  softmaxReference,
} from './kernel-reference.ts';

const U = 2 ** -24;

/** Awkward matvec sizes: no multiple of any tile, K odd/even/multiple of 4 and 8, one row, one column. */
export const MATVEC_SIZES: [n: number, k: number][] = [
  [1, 1],
  [1, 1000],
  [5, 3],
  [129, 67],
  [129, 64],
  [33, 1000],
  [7, 8],
  [1000, 1],
  [130, 2],
  [67, 5],
];

export const MATMUL_SIZES: [m: number, n: number, k: number][] = [
  [1, 1, 1],
  [1, 5, 3],
  [7, 5, 67],
  [33, 129, 67],
  [33, 129, 64],
  [7, 1, 1000],
  [2, 130, 8],
  [5, 6, 2],
  [33, 31, 16],
];

export const ROW_SIZES: [rows: number, n: number][] = [
  [1, 1],
  [1, 1000],
  [5, 3],
  [7, 67],
  [33, 129],
  [130, 2],
];

function randomWeights(gpu: GpuContext, type: WeightType, random: () => number, count: number): { buffer: GPUBuffer; values: ArrayLike<number> } {
  if (type === 'f32') {
    const w = randomF32(random, count);
    return { buffer: createStorageBuffer(gpu.device, w), values: w };
  }
  const bits = randomF16Bits(random, count);
  return { buffer: createStorageBuffer(gpu.device, packF16(bits)), values: Array.from(bits, f16BitsToNumber) };
}

/** Runs `record` with a fresh output of `length` f32s followed by guard words; returns the outputs or a guard message. */
async function runWithGuardedOutput(
  gpu: GpuContext,
  length: number,
  record: (batch: ComputeBatch, output: GPUBuffer) => void,
): Promise<Float32Array | string> {
  const output = createStorageBuffer(gpu.device, sentinelOutput(length));
  const batch = new ComputeBatch(gpu, 'kernel check');
  record(batch, output);
  batch.submit();
  const words = new Uint32Array(await readBuffer(gpu.device, output, (length + GUARD_WORDS) * 4));
  output.destroy();
  gpu.throwIfFailed();
  return guardViolation(words, length) ?? new Float32Array(words.buffer, 0, length);
}

export async function checkMatvec(gpu: GpuContext, kernels: Kernels, type: WeightType, n: number, k: number, seed: number): Promise<string | null> {
  const random = seededRandom(seed);
  const w = randomWeights(gpu, type, random, n * k);
  const x = randomF32(random, k);
  const xBuffer = createStorageBuffer(gpu.device, x);
  const got = await runWithGuardedOutput(gpu, n, (batch, y) => kernels.matvec(batch, { type, weights: w.buffer, x: xBuffer, y, n, k }));
  w.buffer.destroy();
  xBuffer.destroy();
  return typeof got === 'string' ? got : firstSumMismatch(got, matvecReference(w.values, x, n, k));
}

export async function checkMatmul(
  gpu: GpuContext,
  kernels: Kernels,
  type: WeightType,
  m: number,
  n: number,
  k: number,
  seed: number,
): Promise<string | null> {
  const random = seededRandom(seed);
  const w = randomWeights(gpu, type, random, n * k);
  const x = randomF32(random, m * k);
  const xBuffer = createStorageBuffer(gpu.device, x);
  const got = await runWithGuardedOutput(gpu, m * n, (batch, y) => kernels.matmul(batch, { type, weights: w.buffer, x: xBuffer, y, m, n, k }));
  w.buffer.destroy();
  xBuffer.destroy();
  return typeof got === 'string' ? got : firstSumMismatch(got, matmulReference(x, w.values, m, n, k));
}

export async function checkRmsnorm(gpu: GpuContext, kernels: Kernels, rows: number, n: number, seed: number): Promise<string | null> {
  const random = seededRandom(seed);
  const x = randomF32(random, rows * n, 3);
  const weight = randomF32(random, n, 2);
  const eps = 1e-5;
  const xBuffer = createStorageBuffer(gpu.device, x);
  const wBuffer = createStorageBuffer(gpu.device, weight);
  const got = await runWithGuardedOutput(gpu, rows * n, (batch, y) =>
    kernels.rmsnorm(batch, { x: xBuffer, weight: wBuffer, y, rows, n, eps }),
  );
  xBuffer.destroy();
  wBuffer.destroy();
  if (typeof got === 'string') return got;
  // Σx² has relative error ≤ (n+1)u (all terms positive); the square root halves it; inverseSqrt (2 ulp in WGSL)
  // and two products add a few u: (n + 16)u relative covers it.
  return firstMismatch(got, rmsnormReference(x, weight, rows, n, eps), (n + 16) * U, 1e-30);
}

export async function checkSoftmax(gpu: GpuContext, kernels: Kernels, rows: number, n: number, seed: number): Promise<string | null> {
  const random = seededRandom(seed);
  const scale = 8;
  const x = randomF32(random, rows * n, scale);
  // A masked entry (large negative) and, in the last row, values so large that a naive exp would overflow.
  if (n > 2) x[1] = -1e30;
  for (let i = 0; i < n; i++) x[(rows - 1) * n + i] += 1000;
  const xBuffer = createStorageBuffer(gpu.device, x);
  const got = await runWithGuardedOutput(gpu, rows * n, (batch, y) => kernels.softmax(batch, { x: xBuffer, y, rows, n }));
  xBuffer.destroy();
  if (typeof got === 'string') return got;
  // exp(d) is within 3 + 2|d| ulp in WGSL, |d| ≤ 2·scale here; the sum adds n·u relative; the division 2.5 ulp.
  const relative = (n + 2 * (3 + 4 * scale) + 8) * U;
  const mismatch = firstMismatch(got, softmaxReference(x, rows, n), relative, 1e-30);
  if (mismatch) return mismatch;
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += got[r * n + i];
    if (!(Math.abs(sum - 1) < 2 * relative + 1e-6)) return `row ${r} sums to ${sum}, not 1`;
  }
  return null;
}
