// Quantized matmul/matvec kernels (matmul_q8_0, matmul_q4_0, matmul_q4_k, matmul_q6_k) against the f64
// reference on random blocks, awkward sizes (K one block and several, N = 1, 3, 67, M = 1, 5, 17), with bias,
// with the residual accumulated, split into row ranges, and in the GPU shape (K split over invocations).
// Tolerance: the f32 summation bound of kernel-reference.ts, |got - exact| <= (K + 4)·2⁻²⁴·Σ|terms|, where the
// terms of a Q4_K weight count its scale and min parts separately (the kernel sums them apart).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { ForwardKernels, type QuantWeightType } from '../../src/gpu/forward-kernels.ts';
import { createEmptyStorageBuffer, createStorageBuffer, readF32 } from '../../src/gpu/transfer.ts';
import { dequantizeGpuLayout } from '../../src/model/dequantize.ts';
import { firstSumMismatch, randomF32, seededRandom } from '../support/kernel-reference.ts';
import { QUANT_BLOCKS, dequantizeRows, quantMatmulReference, randomQuantRows } from '../support/forward-reference.ts';

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.destroy());

interface Case {
  m: number;
  n: number;
  blocks: number;
  bias?: boolean;
  accumulate?: boolean;
  /** Split W into two row ranges dispatched separately (rows [0, split) and [split, n)). */
  split?: number;
}

async function check(kernels: ForwardKernels, type: QuantWeightType, c: Case, seed: number): Promise<string | null> {
  const random = seededRandom(seed);
  const k = c.blocks * QUANT_BLOCKS[type].elements;
  const { m, n } = c;
  const w = randomQuantRows(random, type, n, k);
  const x = randomF32(random, m * k);
  const bias = c.bias ? randomF32(random, n) : undefined;
  const y0 = c.accumulate ? randomF32(random, m * n) : undefined;
  const rowBytes = (k / QUANT_BLOCKS[type].elements) * QUANT_BLOCKS[type].bytes;
  const ranges = c.split ? [[0, c.split], [c.split, n]] : [[0, n]];
  const weights = ranges.map(([from, to]) => createStorageBuffer(gpu.device, w.subarray(from * rowBytes, to * rowBytes)));
  const xBuffer = createStorageBuffer(gpu.device, x);
  const biasBuffer = bias ? createStorageBuffer(gpu.device, bias) : undefined;
  const yBuffer = y0 ? createStorageBuffer(gpu.device, y0) : createEmptyStorageBuffer(gpu.device, m * n * 4);
  const batch = new ComputeBatch(gpu, 'quant matmul test');
  ranges.forEach(([from, to], i) => {
    kernels.quantMatmul(batch, {
      type,
      weights: weights[i],
      x: xBuffer,
      y: yBuffer,
      m,
      n: to - from,
      k,
      bias: biasBuffer,
      accumulate: c.accumulate,
      yOffset: from,
      yStride: n,
    });
  });
  batch.submit();
  const got = await readF32(gpu.device, yBuffer, m * n);
  for (const b of [...weights, xBuffer, yBuffer, biasBuffer]) b?.destroy();
  gpu.throwIfFailed();
  return firstSumMismatch(got, quantMatmulReference(dequantizeRows(type, w, n, k), x, m, n, k, bias, y0));
}

const CASES: Case[] = [
  { m: 1, n: 1, blocks: 1 },
  { m: 1, n: 67, blocks: 3 },
  { m: 1, n: 3, blocks: 2, bias: true },
  { m: 1, n: 67, blocks: 2, accumulate: true },
  { m: 5, n: 3, blocks: 2 },
  { m: 17, n: 67, blocks: 3, bias: true },
  { m: 5, n: 20, blocks: 1, bias: true, accumulate: true },
  { m: 5, n: 67, blocks: 2, split: 30 },
];

const TYPES: QuantWeightType[] = ['Q8_0', 'Q4_0', 'Q4_K', 'Q6_K'];

describe.each(TYPES)('matmul %s', (type) => {
  let kernels: ForwardKernels;
  beforeAll(async () => {
    kernels = new ForwardKernels(gpu);
    await kernels.prepare({ quantTypes: [type], quantVariants: ['plain', 'bias', 'accumulate', 'bias+accumulate'] });
  });
  afterAll(() => kernels?.destroy());

  test('the test dequantizer agrees with the model loader one (src/model/dequantize.ts)', () => {
    const random = seededRandom(11);
    const k = 2 * QUANT_BLOCKS[type].elements;
    const w = randomQuantRows(random, type, 3, k);
    const mine = dequantizeRows(type, w, 3, k);
    const theirs = dequantizeGpuLayout(type, w, 3 * k);
    for (let i = 0; i < 3 * k; i++) expect(theirs[i]).toBe(Math.fround(mine.scaled[i] - mine.offset[i]));
  });

  test.each(CASES)('%o', async (c) => {
    expect(await check(kernels, type, c, c.m * 1000 + c.n * 10 + c.blocks)).toBeNull();
  });

  test.each([
    { WORKGROUP_SIZE: 16, K_SPLIT: 4, TILE_M: 3 },
    { WORKGROUP_SIZE: 64, K_SPLIT: 8, TILE_M: 4 }, // what forwardKernelShapesFor gives a GPU
  ])('GPU shapes: K split over invocations, %o', async (shape) => {
    const split = new ForwardKernels(gpu, { shapes: { quantMatmul: shape }, pipelines: kernels.pipelines });
    await split.prepare({ quantTypes: [type], quantVariants: ['bias+accumulate'] }); // compile time: one variant
    for (const c of [{ m: 1, n: 67, blocks: 3, bias: true, accumulate: true }, { m: 7, n: 9, blocks: 5, bias: true, accumulate: true }]) {
      expect(await check(split, type, c, c.n + c.blocks)).toBeNull();
    }
    split.destroy();
  });
});
