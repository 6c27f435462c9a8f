// The RMSNorm kernel against the TypeScript reference in Chromium, one invocation per row (the CPU
// shape) and many invocations per row (the GPU shape).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext, type GpuLimits } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { Kernels } from '../../src/gpu/kernels.ts';
import { kernelShapesFor, type RowReduceShape } from '../../src/gpu/kernel-shapes.ts';
import { checkRmsnorm, ROW_SIZES } from '../support/kernel-checks.ts';

let gpu: GpuContext;
// One pipeline cache for the file: each Kernels below compiles only the pipelines it has not seen.
let pipelines: PipelineCache;
beforeAll(async () => {
  gpu = await acquireGpu();
  pipelines = new PipelineCache(gpu.device);
});
afterAll(() => gpu?.destroy());

const SHAPES: { name: string; shape?: RowReduceShape }[] = [
  { name: 'adapter shape' },
  {
    name: 'hardware-GPU shape',
    shape: kernelShapesFor(
      { vendor: 'nvidia', architecture: '', device: '', description: '', isFallbackAdapter: false },
      { maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupSizeX: 256 } as GpuLimits,
    ).rowReduce,
  },
  { name: 'one invocation per row', shape: { WORKGROUP_SIZE: 4, ROW_THREADS: 1 } },
  { name: '16 invocations per row', shape: { WORKGROUP_SIZE: 32, ROW_THREADS: 16 } },
];

async function kernelsWith(shape: RowReduceShape | undefined): Promise<Kernels> {
  const kernels = new Kernels(gpu, { pipelines, ...(shape ? { shapes: { rowReduce: shape } } : {}) });
  await kernels.prepare();
  return kernels;
}

describe.each(SHAPES)('rmsnorm, $name', ({ shape }) => {
  test.each(ROW_SIZES)('rows=%i n=%i', async (rows, n) => {
    expect(await checkRmsnorm(gpu, await kernelsWith(shape), rows, n, rows * 100 + n)).toBeNull();
  });
});

