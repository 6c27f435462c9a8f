// The kernel checks of test/gpu/kernels-*.test.ts in Node on Dawn (the `webgpu` package), for speed and for the
// Node host. Dawn needs a Vulkan driver: run with
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
// (SwiftShader from Debian's chromium); without an adapter these tests are skipped, saying why.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { create, globals } from 'webgpu';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { Kernels } from '../../src/gpu/kernels.ts';
import {
  checkMatmul,
  checkMatvec,
  checkRmsnorm,
  checkSoftmax,
  MATMUL_SIZES,
  MATVEC_SIZES,
  ROW_SIZES,
} from '../support/kernel-checks.ts';

Object.assign(globalThis, globals);
// Dawn's GPU object must outlive every device made from it (Node crashes if it is collected first).
const dawn = create([]);

let gpu: GpuContext | null = null;
let missing = '';
let kernels: Kernels;
beforeAll(async () => {
  try {
    gpu = await acquireGpu({ gpu: dawn });
  } catch (error) {
    missing = `no WebGPU adapter on Dawn (${error instanceof Error ? error.message : String(error)}); set LD_LIBRARY_PATH and VK_ICD_FILENAMES as this file's header says`;
    return;
  }
  kernels = new Kernels(gpu, { nativeF16: false });
  await kernels.prepare();
});
afterAll(() => gpu?.destroy());

function need(ctx: { skip: (note?: string) => void }): GpuContext {
  if (!gpu) ctx.skip(missing);
  return gpu as GpuContext;
}

describe.each(['f32', 'f16'] as const)('%s weights on Dawn', (type) => {
  test('matvec', async (ctx) => {
    const g = need(ctx);
    for (const [n, k] of MATVEC_SIZES) expect(await checkMatvec(g, kernels, type, n, k, n * 13 + k)).toBeNull();
  });
  test('matmul', async (ctx) => {
    const g = need(ctx);
    for (const [m, n, k] of MATMUL_SIZES) expect(await checkMatmul(g, kernels, type, m, n, k, m + n * 3 + k)).toBeNull();
  });
});

test('native f16 matvec on Dawn', async (ctx) => {
  const g = need(ctx);
  if (!g.features.f16) ctx.skip(`this Dawn adapter (${g.adapterInfo.description || g.adapterInfo.architecture}) has no shader-f16`);
  const native = new Kernels(g, { nativeF16: true });
  await native.prepare();
  for (const [n, k] of MATVEC_SIZES) expect(await checkMatvec(g, native, 'f16', n, k, n * 17 + k)).toBeNull();
});

test('rmsnorm and softmax on Dawn', async (ctx) => {
  const g = need(ctx);
  for (const [rows, n] of ROW_SIZES) {
    expect(await checkRmsnorm(g, kernels, rows, n, rows + n)).toBeNull();
    expect(await checkSoftmax(g, kernels, rows, n, rows * 5 + n)).toBeNull();
  }
});
