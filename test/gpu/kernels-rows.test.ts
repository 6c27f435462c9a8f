// RMSNorm and softmax kernels against the TypeScript reference, one invocation per row (CPU shape) and many
// invocations per row (GPU shape).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { Kernels } from '../../src/gpu/kernels.ts';
import type { RowReduceShape } from '../../src/gpu/kernel-shapes.ts';
import { createStorageBuffer, readBuffer } from '../../src/gpu/transfer.ts';
import {
  firstMismatch,
  GUARD_WORDS,
  guardViolation,
  randomF32,
  rmsnormReference,
  seededRandom,
  sentinelOutput,
  softmaxReference,
} from '../support/kernel-reference.ts';

const U = 2 ** -24;

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.destroy());

const SHAPES: { name: string; shape?: RowReduceShape }[] = [
  { name: 'adapter shape' },
  { name: 'one invocation per row', shape: { WORKGROUP_SIZE: 4, ROW_THREADS: 1 } },
  { name: '16 invocations per row', shape: { WORKGROUP_SIZE: 32, ROW_THREADS: 16 } },
];

const SIZES: [rows: number, n: number][] = [
  [1, 1],
  [1, 1000],
  [5, 3],
  [7, 67],
  [33, 129],
  [130, 2],
];

async function kernelsWith(shape: RowReduceShape | undefined): Promise<Kernels> {
  const kernels = new Kernels(gpu, { nativeF16: false, ...(shape ? { shapes: { rowReduce: shape } } : {}) });
  await kernels.prepare();
  return kernels;
}

describe.each(SHAPES)('rmsnorm, $name', ({ shape }) => {
  test.each(SIZES)('rows=%i n=%i', async (rows, n) => {
    const kernels = await kernelsWith(shape);
    const random = seededRandom(rows * 100 + n);
    const x = randomF32(random, rows * n, 3);
    const weight = randomF32(random, n, 2);
    const eps = 1e-5;
    const [xb, wb, yb] = [createStorageBuffer(gpu.device, x), createStorageBuffer(gpu.device, weight), createStorageBuffer(gpu.device, sentinelOutput(rows * n))];
    const batch = new ComputeBatch(gpu, 'rmsnorm test');
    kernels.rmsnorm(batch, { x: xb, weight: wb, y: yb, rows, n, eps });
    batch.submit();
    const words = new Uint32Array(await readBuffer(gpu.device, yb, (rows * n + GUARD_WORDS) * 4));
    expect(guardViolation(words, rows * n)).toBeNull();
    const got = new Float32Array(words.buffer, 0, rows * n);
    // Σx² has relative error ≤ (n+1)u (all terms positive); the square root halves it; inverseSqrt (2 ulp)
    // and two products add a few u: (n + 16)u relative covers it.
    expect(firstMismatch(got, rmsnormReference(x, weight, rows, n, eps), (n + 16) * U, 1e-30)).toBeNull();
  });
});

describe.each(SHAPES)('softmax, $name', ({ shape }) => {
  test.each(SIZES)('rows=%i n=%i', async (rows, n) => {
    const kernels = await kernelsWith(shape);
    const random = seededRandom(rows * 77 + n);
    const scale = 8;
    const x = randomF32(random, rows * n, scale);
    // A masked entry (large negative) and, in the last row, large values a naive exp would overflow on.
    if (n > 2) x[1] = -1e30;
    for (let i = 0; i < n; i++) x[(rows - 1) * n + i] += 1000;
    const [xb, yb] = [createStorageBuffer(gpu.device, x), createStorageBuffer(gpu.device, sentinelOutput(rows * n))];
    const batch = new ComputeBatch(gpu, 'softmax test');
    kernels.softmax(batch, { x: xb, y: yb, rows, n });
    batch.submit();
    const words = new Uint32Array(await readBuffer(gpu.device, yb, (rows * n + GUARD_WORDS) * 4));
    expect(guardViolation(words, rows * n)).toBeNull();
    const got = new Float32Array(words.buffer, 0, rows * n);
    // exp(d) is within 3 + 2|d| ulp (WGSL), |d| ≤ 2·scale here; the sum adds n·u relative; the division 2.5 ulp.
    const relative = (n + 2 * (3 + 4 * scale) + 8) * U;
    expect(firstMismatch(got, softmaxReference(x, rows, n), relative, 1e-30)).toBeNull();
    for (let r = 0; r < rows; r++) {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += got[r * n + i];
      expect(Math.abs(sum - 1)).toBeLessThan(relative * 2 + 1e-6);
    }
  });
});
