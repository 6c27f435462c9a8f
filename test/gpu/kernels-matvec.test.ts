// matvec kernels (f32, f16 packed in u32, native f16) against the TypeScript reference on awkward sizes,
// in Chromium on its WebGPU adapter.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { Kernels, type KernelsOptions } from '../../src/gpu/kernels.ts';
import { kernelShapesFor } from '../../src/gpu/kernel-shapes.ts';
import type { KernelSource } from '../../src/gpu/pipeline-cache.ts';
import * as shaders from '../../src/gpu/shaders.ts';
import { createStorageBuffer, readBuffer } from '../../src/gpu/transfer.ts';
import { checkMatvec, MATVEC_SIZES } from '../support/kernel-checks.ts';
import {
  firstSumMismatch,
  GUARD_WORDS,
  guardViolation,
  matvecReference,
  randomF32,
  seededRandom,
  sentinelOutput,
} from '../support/kernel-reference.ts';

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
  // No adapter here has shader-f16, so the native kernel's logic (indexing, K tails, K split, row bounds) is also
  // checked with its f16 type replaced by f32: its weights are then read exactly like matvec_f32's.
  test.each(MATVEC_SIZES)('with f16 read as f32: N=%i K=%i', async (n, k) => {
    const code = shaders.matvecF16Native.code.replace(/^enable f16;$/m, '').replaceAll('f16', 'f32');
    expect(code).not.toContain('f16');
    const asF32: KernelSource = { name: 'matvec_f16_native as f32', code };
    for (const shape of [{ WORKGROUP_SIZE: 16, K_SPLIT: 1 }, GPU_SHAPE.matvec]) {
      const pipeline = await pipelines.get(asF32, shape);
      const random = seededRandom(n * 3 + k);
      const w = randomF32(random, n * k);
      const x = randomF32(random, k);
      const buffers = [createStorageBuffer(gpu.device, w), createStorageBuffer(gpu.device, x)];
      const y = createStorageBuffer(gpu.device, sentinelOutput(n));
            const uniform = gpu.device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      gpu.device.queue.writeBuffer(uniform, 0, new Uint32Array([n, k, 0, 0]));
      const batch = new ComputeBatch(gpu, 'native f16 as f32');
      batch.dispatch(pipeline, [...buffers, y, uniform], Math.ceil(n / ((4 * shape.WORKGROUP_SIZE) / shape.K_SPLIT)));
      batch.submit();
      const words = new Uint32Array(await readBuffer(gpu.device, y, (n + GUARD_WORDS) * 4));
      expect(guardViolation(words, n)).toBeNull();
      expect(firstSumMismatch(new Float32Array(words.buffer, 0, n), matvecReference(w, x, n, k))).toBeNull();
      for (const b of [...buffers, y, uniform]) b.destroy();
    }
  });

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

test('the shapes picked for a hardware GPU work here too', async () => {
  const gpuShapes = kernelShapesFor({ ...gpu.adapterInfo, vendor: 'nvidia', architecture: '', description: '', isFallbackAdapter: false }, gpu.limits);
  const kernels = await kernelsFor({ nativeF16: false, shapes: gpuShapes });
  for (const type of ['f32', 'f16'] as const) {
    for (const [n, k] of [[5, 3], [129, 67], [33, 1000], [300, 64]] as const) {
      expect(await checkMatvec(gpu, kernels, type, n, k, n * 5 + k)).toBeNull();
    }
  }
});
