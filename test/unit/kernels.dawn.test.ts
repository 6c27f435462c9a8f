// The kernel checks of test/gpu/kernels-rows.test.ts and forward-kernels-matmul.test.ts in Node on Dawn (the `webgpu` package), for speed and for the
// Node host. Dawn needs a Vulkan driver: run with
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
// (SwiftShader from Debian's chromium); without an adapter these tests are skipped, saying why.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { create, globals } from 'webgpu';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { ForwardKernels, type ProductWeightType } from '../../src/gpu/forward-kernels.ts';
import { Kernels } from '../../src/gpu/kernels.ts';
import { checkProduct, checkRmsnorm, ROW_SIZES, type ProductCase } from '../support/kernel-checks.ts';
import type { QuantType } from '../support/forward-reference.ts';
import { needDawnAdapter } from '../support/dawn-adapter.ts';

Object.assign(globalThis, globals);
// Dawn's GPU object must outlive every device made from it (Node crashes if it is collected first).
const dawn = create([]);

let gpu: GpuContext | null = null;
let missing = '';
let kernels: Kernels;
let products: ForwardKernels;
beforeAll(async () => {
  try {
    gpu = await acquireGpu({ gpu: dawn });
  } catch (error) {
    missing = `no WebGPU adapter on Dawn (${error instanceof Error ? error.message : String(error)}); set LD_LIBRARY_PATH and VK_ICD_FILENAMES as this file's header says`;
    return;
  }
  kernels = new Kernels(gpu);
  products = new ForwardKernels(gpu);
  await kernels.prepare(); // the products compile what each check records (checkProduct)
});
afterAll(() => {
  products?.destroy();
  gpu?.destroy();
});

function need(ctx: { skip: (note?: string) => void }): GpuContext {
  return needDawnAdapter(ctx, gpu, missing);
}

const PRODUCT_TYPES: (ProductWeightType & QuantType)[] = ['F32', 'F16', 'Q8_0', 'Q4_K'];
const PRODUCT_CASES: ProductCase[] = [
  { m: 1, n: 67, blocks: 3 },
  { m: 1, n: 5, blocks: 2, bias: true, accumulate: true },
  { m: 17, n: 33, blocks: 2 },
  { m: 6, n: 9, blocks: 1, bias: true, accumulate: true, split: 4 },
  { m: 1, n: 21, blocks: 2, gated: true },
  { m: 9, n: 10, blocks: 1, gated: true, split: 4 },
  { m: 1, n: 21, blocks: 2, gated: true, activation: 'gelu' },
  { m: 9, n: 10, blocks: 1, gated: true, activation: 'gelu', split: 4 },
];

test.for(PRODUCT_TYPES)('%s products (decode and prefill) on Dawn', async (type, ctx) => {
  const g = need(ctx);
  for (const c of PRODUCT_CASES) expect(await checkProduct(g, products, type, c, c.m * 31 + c.n)).toBeNull();
});

test('rmsnorm on Dawn', async (ctx) => {
  const g = need(ctx);
  for (const [rows, n] of ROW_SIZES) {
    expect(await checkRmsnorm(g, kernels, rows, n, rows + n)).toBeNull();
  }
});
