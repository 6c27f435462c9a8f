// matmul kernels (f32, f16 packed in u32) against the TypeScript reference on awkward sizes, in Chromium.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { Kernels } from '../../src/gpu/kernels.ts';
import { kernelShapesFor } from '../../src/gpu/kernel-shapes.ts';
import { checkMatmul, MATMUL_SIZES } from '../support/kernel-checks.ts';

let gpu: GpuContext;
let kernels: Kernels;
let pipelines: PipelineCache;
beforeAll(async () => {
  gpu = await acquireGpu();
  pipelines = new PipelineCache(gpu.device);
  kernels = new Kernels(gpu, { nativeF16: false, pipelines });
  await kernels.prepare();
});
afterAll(() => gpu?.destroy());

describe.each(['f32', 'f16'] as const)('matmul_%s', (type) => {
  test.each(MATMUL_SIZES)('M=%i N=%i K=%i', async (m, n, k) => {
    expect(await checkMatmul(gpu, kernels, type, m, n, k, m * 1000 + n * 10 + k)).toBeNull();
  });

  test('one tile per workgroup over many workgroups', async () => {
    const small = new Kernels(gpu, { pipelines, nativeF16: false, shapes: { matmul: { WORKGROUP_SIZE: 1 } } });
    await small.prepare();
    expect(await checkMatmul(gpu, small, type, 9, 13, 24, 5)).toBeNull();
  });
});

test('the shapes picked for a hardware GPU work here too', async () => {
  const gpuShapes = kernelShapesFor({ ...gpu.adapterInfo, vendor: 'nvidia', architecture: '', description: '', isFallbackAdapter: false }, gpu.limits);
  const onGpuShapes = new Kernels(gpu, { pipelines, nativeF16: false, shapes: gpuShapes });
  await onGpuShapes.prepare();
  for (const type of ['f32', 'f16'] as const) {
    for (const [m, n, k] of [[7, 5, 67], [33, 129, 64]] as const) {
      expect(await checkMatmul(gpu, onGpuShapes, type, m, n, k, m + n + k)).toBeNull();
    }
  }
});
