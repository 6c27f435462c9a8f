// matvec kernels (f32, f16 packed in u32, native f16) against the TypeScript reference on awkward sizes,
// in Chromium on its WebGPU adapter.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { Kernels, type KernelsOptions } from '../../src/gpu/kernels.ts';
import { checkMatvec, MATVEC_SIZES } from '../support/kernel-checks.ts';

let gpu: GpuContext;
// One pipeline cache for the file: each Kernels below compiles only the pipelines it has not seen.
let pipelines: PipelineCache;
beforeAll(async () => {
  gpu = await acquireGpu();
  pipelines = new PipelineCache(gpu.device);
});
afterAll(() => gpu?.destroy());

async function kernelsFor(options: KernelsOptions): Promise<Kernels> {
  const kernels = new Kernels(gpu, { ...options, pipelines });
  await kernels.prepare();
  return kernels;
}

const GPU_SHAPE = { matvec: { WORKGROUP_SIZE: 32, K_SPLIT: 8 } };

describe.each([
  { type: 'f32' as const, name: 'matvec_f32' },
  { type: 'f16' as const, name: 'matvec_f16 (packed)' },
])('$name', ({ type }) => {
  test.each(MATVEC_SIZES)('N=%i K=%i', async (n, k) => {
    const kernels = await kernelsFor({ nativeF16: false });
    expect(await checkMatvec(gpu, kernels, type, n, k, n * 7919 + k)).toBeNull();
  });

  test('K split over several invocations per row (the GPU shape)', async () => {
    const kernels = await kernelsFor({ nativeF16: false, shapes: GPU_SHAPE });
    for (const [n, k] of [[5, 3], [129, 67], [33, 1000], [17, 64]] as const) {
      expect(await checkMatvec(gpu, kernels, type, n, k, n + k)).toBeNull();
    }
  });
});

describe('matvec_f16_native', () => {
  test('matches the reference where the adapter has shader-f16', async (ctx) => {
    if (!gpu.features.f16) ctx.skip('this adapter has no shader-f16 (SwiftShader has none): the packed kernel runs here');
    const kernels = await kernelsFor({ nativeF16: true });
    for (const [n, k] of MATVEC_SIZES) expect(await checkMatvec(gpu, kernels, 'f16', n, k, n * 31 + k)).toBeNull();
    const split = await kernelsFor({ nativeF16: true, shapes: GPU_SHAPE });
    for (const [n, k] of MATVEC_SIZES) expect(await checkMatvec(gpu, split, 'f16', n, k, n * 37 + k)).toBeNull();
  });
});

test('a workgroup count over the per-dimension limit (x/y split) covers every row', async () => {
  // One invocation per workgroup, 4 rows each: N rows need N/4 workgroups, more than 65535.
  const kernels = await kernelsFor({ nativeF16: false, shapes: { matvec: { WORKGROUP_SIZE: 1, K_SPLIT: 1 } } });
  const n = (gpu.limits.maxComputeWorkgroupsPerDimension + 2) * 4 + 1;
  expect(await checkMatvec(gpu, kernels, 'f32', n, 1, 99)).toBeNull();
});

test('a binding smaller than the sizes say is a clear error, before anything is recorded', async () => {
  const kernels = await kernelsFor({ nativeF16: false });
  const small = gpu.device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE });
  const big = gpu.device.createBuffer({ size: 4096, usage: GPUBufferUsage.STORAGE });
  const batch = new ComputeBatch(gpu, 'bad sizes');
  expect(() => kernels.matvec(batch, { type: 'f32', weights: small, x: big, y: big, n: 4, k: 4 })).toThrow(
    'matvec: weights has 16 bytes, needs 64',
  );
  expect(() => kernels.matvec(batch, { type: 'f16', weights: big, x: { buffer: big, offset: 4080 }, y: big, n: 4, k: 8 })).toThrow(
    'matvec: x has 16 bytes, needs 32',
  );
  small.destroy();
  big.destroy();
});
