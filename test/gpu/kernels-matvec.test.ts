// matvec kernels (f32, f16 packed in u32, native f16) against the TypeScript reference on awkward sizes.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { Kernels, type KernelsOptions, type WeightType } from '../../src/gpu/kernels.ts';
import { createStorageBuffer, readBuffer } from '../../src/gpu/transfer.ts';
import {
  f16BitsToNumber,
  firstSumMismatch,
  GUARD_WORDS,
  guardViolation,
  matvecReference,
  packF16,
  randomF16Bits,
  randomF32,
  seededRandom,
  sentinelOutput,
} from '../support/kernel-reference.ts';

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.destroy());

/** Runs the matvec on random data and returns the first mismatch (or null). */
async function checkMatvec(kernels: Kernels, type: WeightType, n: number, k: number, seed: number): Promise<string | null> {
  const random = seededRandom(seed);
  let weights: GPUBuffer;
  let decoded: ArrayLike<number>;
  if (type === 'f32') {
    const w = randomF32(random, n * k);
    weights = createStorageBuffer(gpu.device, w);
    decoded = w;
  } else {
    const bits = randomF16Bits(random, n * k);
    weights = createStorageBuffer(gpu.device, packF16(bits));
    decoded = Array.from(bits, f16BitsToNumber);
  }
  const x = randomF32(random, k);
  const xBuffer = createStorageBuffer(gpu.device, x);
  const yBuffer = createStorageBuffer(gpu.device, sentinelOutput(n));
  const batch = new ComputeBatch(gpu, 'matvec test');
  kernels.matvec(batch, { type, weights, x: xBuffer, y: yBuffer, n, k });
  batch.submit();
  const words = new Uint32Array(await readBuffer(gpu.device, yBuffer, (n + GUARD_WORDS) * 4));
  const got = new Float32Array(words.buffer, 0, n);
  for (const b of [weights, xBuffer, yBuffer]) b.destroy();
  return guardViolation(words, n) ?? firstSumMismatch(got, matvecReference(decoded, x, n, k));
}

const SIZES: [n: number, k: number][] = [
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

async function kernelsFor(options: KernelsOptions): Promise<Kernels> {
  const kernels = new Kernels(gpu, options);
  await kernels.prepare();
  return kernels;
}

describe.each([
  { type: 'f32' as const, name: 'matvec_f32', options: { nativeF16: false } },
  { type: 'f16' as const, name: 'matvec_f16 (packed)', options: { nativeF16: false } },
])('$name', ({ type, options }) => {
  test.each(SIZES)('N=%i K=%i', async (n, k) => {
    const kernels = await kernelsFor(options);
    expect(await checkMatvec(kernels, type, n, k, n * 7919 + k)).toBeNull();
  });

  test('K split over several invocations per row (the GPU shape)', async () => {
    const kernels = await kernelsFor({ ...options, shapes: { matvec: { WORKGROUP_SIZE: 32, K_SPLIT: 8 } } });
    for (const [n, k] of [[5, 3], [129, 67], [33, 1000], [17, 64]] as const) {
      expect(await checkMatvec(kernels, type, n, k, n + k)).toBeNull();
    }
  });
});

describe('matvec_f16_native', () => {
  test.skipIf(!navigator.gpu)('matches the reference where the adapter has shader-f16', async (ctx) => {
    if (!gpu.features.f16) ctx.skip('this adapter has no shader-f16 (SwiftShader has none): the packed path above is what runs here');
    const kernels = await kernelsFor({ nativeF16: true });
    for (const [n, k] of SIZES) expect(await checkMatvec(kernels, 'f16', n, k, n * 31 + k)).toBeNull();
    const split = await kernelsFor({ nativeF16: true, shapes: { matvec: { WORKGROUP_SIZE: 32, K_SPLIT: 8 } } });
    for (const [n, k] of SIZES) expect(await checkMatvec(split, 'f16', n, k, n * 37 + k)).toBeNull();
  });
});

test('a workgroup count over the per-dimension limit (x/y split) covers every row', async () => {
  // One invocation per workgroup, 4 rows each: N rows need N/4 workgroups, more than 65535.
  const kernels = await kernelsFor({ nativeF16: false, shapes: { matvec: { WORKGROUP_SIZE: 1, K_SPLIT: 1 } } });
  const n = (gpu.limits.maxComputeWorkgroupsPerDimension + 2) * 4 + 1;
  expect(await checkMatvec(kernels, 'f32', n, 1, 99)).toBeNull();
});
