// matmul kernels (f32, f16 packed in u32) against the TypeScript reference on awkward sizes.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { Kernels, type WeightType } from '../../src/gpu/kernels.ts';
import { createStorageBuffer, readBuffer } from '../../src/gpu/transfer.ts';
import {
  f16BitsToNumber,
  firstSumMismatch,
  GUARD_WORDS,
  guardViolation,
  matmulReference,
  packF16,
  randomF16Bits,
  randomF32,
  seededRandom,
  sentinelOutput,
} from '../support/kernel-reference.ts';

let gpu: GpuContext;
let kernels: Kernels;
beforeAll(async () => {
  gpu = await acquireGpu();
  kernels = new Kernels(gpu, { nativeF16: false });
  await kernels.prepare();
});
afterAll(() => gpu?.destroy());

async function checkMatmul(
  using: Kernels,
  type: WeightType,
  m: number,
  n: number,
  k: number,
  seed: number,
): Promise<string | null> {
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
  const x = randomF32(random, m * k);
  const xBuffer = createStorageBuffer(gpu.device, x);
  const yBuffer = createStorageBuffer(gpu.device, sentinelOutput(m * n));
  const batch = new ComputeBatch(gpu, 'matmul test');
  using.matmul(batch, { type, weights, x: xBuffer, y: yBuffer, m, n, k });
  batch.submit();
  const words = new Uint32Array(await readBuffer(gpu.device, yBuffer, (m * n + GUARD_WORDS) * 4));
  const got = new Float32Array(words.buffer, 0, m * n);
  for (const b of [weights, xBuffer, yBuffer]) b.destroy();
  return guardViolation(words, m * n) ?? firstSumMismatch(got, matmulReference(x, decoded, m, n, k));
}

const SIZES: [m: number, n: number, k: number][] = [
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

describe.each(['f32', 'f16'] as const)('matmul_%s', (type) => {
  test.each(SIZES)('M=%i N=%i K=%i', async (m, n, k) => {
    expect(await checkMatmul(kernels, type, m, n, k, m * 1000 + n * 10 + k)).toBeNull();
  });

  test('one tile per workgroup over many workgroups', async () => {
    const small = new Kernels(gpu, { nativeF16: false, shapes: { matmul: { WORKGROUP_SIZE: 1 } } });
    await small.prepare();
    expect(await checkMatmul(small, type, 9, 13, 24, 5)).toBeNull();
  });
});
