// The weight product kernels (matmul_f32, matmul_f16, matmul_q8_0, matmul_q4_0, matmul_q4_k, matmul_q6_k: one
// skeleton, shaders/matmul.wgsl, with each type's block decoding) against the f64 reference on random blocks,
// awkward sizes (K one block and several, N = 1, 3, 67, M = 1, 5, 17), with bias, with the residual accumulated,
// gated (SwiGLU of stacked gate and up matrices),
// split into row ranges, in the GPU shape (K split over invocations), through the GPU prefill's workgroup-memory tiles
// (matmul_tiled), past the per-dimension workgroup limit;
// nothing is written past the output (guard words). See test/support/kernel-checks.ts for the tolerance.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { ForwardKernels } from '../../src/gpu/forward-kernels.ts';
import { dequantizeGpuLayout } from '../../src/model/dequantize.ts';
import { halfToFloat } from '../../src/model/tensor-types.ts';
import { checkProduct, oneHotProduct, type ProductCase } from '../support/kernel-checks.ts';
import { seededRandom } from '../support/kernel-reference.ts';
import { QUANT_BLOCKS, dequantizeRows, randomQuantRows, type QuantType } from '../support/forward-reference.ts';

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.destroy());

const CASES: ProductCase[] = [
  { m: 1, n: 1, blocks: 1 },
  { m: 1, n: 67, blocks: 3 },
  { m: 1, n: 3, blocks: 2, bias: true },
  { m: 1, n: 67, blocks: 2, accumulate: true },
  { m: 5, n: 3, blocks: 2 },
  { m: 17, n: 67, blocks: 3, bias: true },
  { m: 5, n: 20, blocks: 1, bias: true, accumulate: true },
  { m: 5, n: 67, blocks: 2, split: 30 },
  { m: 1, n: 67, blocks: 3, gated: true },
  { m: 17, n: 9, blocks: 2, gated: true, split: 4 },
];

const TYPES: QuantType[] = ['F32', 'F16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K'];

describe.each(TYPES)('matmul %s', (type) => {
  let kernels: ForwardKernels;
  beforeAll(async () => {
    kernels = new ForwardKernels(gpu); // each check compiles the products it records
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
    expect(await checkProduct(gpu, kernels, type, c, c.m * 1000 + c.n * 10 + c.blocks)).toBeNull();
  });

  test.each([
    { WORKGROUP_SIZE: 16, K_SPLIT: 4, TILE_M: 3 },
    { WORKGROUP_SIZE: 64, K_SPLIT: 8, TILE_M: 4 }, // what forwardKernelShapesFor gives a GPU
  ])('GPU shapes: K split over invocations, %o, summed in workgroup memory and (where subgroups hold K_SPLIT) by subgroup shuffles', async (shape) => {
    const subgroupsFit = gpu.features.subgroups && (gpu.adapterInfo.subgroupMinSize ?? 0) >= shape.K_SPLIT;
    for (const productSplit of subgroupsFit ? (['workgroup', 'subgroup'] as const) : (['workgroup'] as const)) {
      const split = new ForwardKernels(gpu, { shapes: { product: shape }, pipelines: kernels.pipelines, productSplit });
      for (const c of [{ m: 1, n: 67, blocks: 3, bias: true, accumulate: true }, { m: 7, n: 9, blocks: 5, bias: true, accumulate: true }, { m: 6, n: 13, blocks: 3, gated: true }]) {
        expect(await checkProduct(gpu, split, type, c, c.n + c.blocks), productSplit).toBeNull();
      }
      split.destroy();
    }
  });

  test('GPU prefill through workgroup-memory tiles (PREFILL_TILED, matmul_tiled): two token tiles, rows past a tile, bias and accumulate, gated (SwiGLU and GeGLU), row ranges', async () => {
    const tiled = new ForwardKernels(gpu, { shapes: { product: { WORKGROUP_SIZE: 64, K_SPLIT: 8, TILE_M: 4, PREFILL_TILED: true } }, pipelines: kernels.pipelines });
    const big = gpu.device.createBuffer({ size: 1 << 22, usage: GPUBufferUsage.STORAGE });
    const per32 = Math.max(1, 32 / QUANT_BLOCKS[type].elements); // k whole steps of 32
    const cases: ProductCase[] = [
      { m: 70, n: 67, blocks: 2 * per32, bias: true, accumulate: true },
      { m: 65, n: 33, blocks: per32, gated: true },
      { m: 3, n: 5, blocks: per32, gated: true, activation: 'gelu', split: 2 },
      { m: 5, n: 130, blocks: per32, split: 70, bias: true },
    ];
    for (const c of cases) {
      const k = c.blocks * QUANT_BLOCKS[type].elements;
      const [op] = tiled.productOps({ type, weights: big, x: big, y: big, m: c.m, n: c.n, k, gated: c.gated });
      expect(op!.kernel.name).toBe(`matmul_tiled_${type.toLowerCase()}`);
      expect(await checkProduct(gpu, tiled, type, c, c.m * 7 + c.n), JSON.stringify(c)).toBeNull();
    }
    // Decode (m = 1) keeps matmul.wgsl.
    expect(tiled.productOps({ type, weights: big, x: big, y: big, m: 1, n: 8, k: per32 * QUANT_BLOCKS[type].elements })[0]!.kernel.name).not.toMatch(/tiled/);
    big.destroy();
    tiled.destroy();
  });
});

test('this adapter runs the subgroup reduction in the K_SPLIT 4 shape above (SwiftShader: subgroups of 4)', () => {
  console.log(`subgroups: ${gpu.features.subgroups}, sizes ${gpu.adapterInfo.subgroupMinSize}..${gpu.adapterInfo.subgroupMaxSize}`);
  if (!gpu.features.subgroups) return;
  const kernels = new ForwardKernels(gpu, { shapes: { product: { WORKGROUP_SIZE: 16, K_SPLIT: 4, TILE_M: 3 } } });
  expect(kernels.productSplit).toBe((gpu.adapterInfo.subgroupMinSize ?? 0) >= 4 ? 'subgroup' : 'workgroup');
  kernels.destroy();
});

test('F16: every finite half is the weight it encodes (zeros, subnormals, the largest, both signs; decode and prefill)', async () => {
  // Rows of k = 64 halves through all 63,488 finite bit patterns, times one-hot tokens: y[t, r] = w[r, t] exactly,
  // however the decoder widens the bits (shaders/decode_f16.wgsl; SwiftShader flushes f32 subnormals, so a decoder
  // that puts a half's bits into an f32's place and scales by 2^112 loses the f16 subnormals: tried, this fails).
  const k = 64;
  const patterns = Array.from({ length: 0x10000 }, (_, h) => h).filter((h) => (h & 0x7c00) !== 0x7c00);
  const n = patterns.length / k;
  const halves = Uint16Array.from(patterns);
  const kernels = new ForwardKernels(gpu);
  for (const m of [1, 64]) {
    const got = await oneHotProduct(gpu, kernels, 'F16', new Uint8Array(halves.buffer), n, k, m);
    const wrong: string[] = [];
    for (let t = 0; t < m; t++) {
      for (let r = 0; r < n; r++) {
        const h = halves[r * k + t];
        const want = halfToFloat(h);
        // 0 · -0 terms: a -0 weight may sum to +0.
        if (got[t * n + r] !== want && !(want === 0 && got[t * n + r] === 0)) wrong.push(`0x${h.toString(16)}: ${got[t * n + r]} (want ${want})`);
      }
    }
    expect(wrong.slice(0, 8), `m = ${m}: ${wrong.length} halves wrong`).toEqual([]);
  }
  kernels.destroy();
});

test('a workgroup count over the per-dimension limit (x/y split) covers every row', async () => {
  // One invocation per workgroup, 4 rows each: N rows need N/4 workgroups, more than 65535.
  const kernels = new ForwardKernels(gpu, { shapes: { product: { WORKGROUP_SIZE: 1, K_SPLIT: 1, TILE_M: 1 } } });
  const n = (gpu.limits.maxComputeWorkgroupsPerDimension + 2) * 4 + 1;
  expect(await checkProduct(gpu, kernels, 'F32', { m: 1, n, blocks: 1 }, 99)).toBeNull();
  kernels.destroy();
});

test('a binding smaller than the sizes say, or k not whole blocks, is a clear error before anything is recorded', async () => {
  const kernels = new ForwardKernels(gpu);
  const small = gpu.device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE });
  const big = gpu.device.createBuffer({ size: 4096, usage: GPUBufferUsage.STORAGE });
  const batch = new ComputeBatch(gpu, 'bad sizes');
  expect(() => kernels.product(batch, { type: 'F32', weights: small, x: big, y: big, m: 1, n: 4, k: 4 })).toThrow('F32 product: weights has 16 bytes, needs 64');
  expect(() => kernels.product(batch, { type: 'F16', weights: big, x: { buffer: big, offset: 4080 }, y: big, m: 1, n: 4, k: 8 })).toThrow('F16 product: x has 16 bytes, needs 32');
  expect(() => kernels.product(batch, { type: 'Q8_0', weights: big, x: big, y: small, m: 1, n: 8, k: 32 })).toThrow('Q8_0 product: y has 16 bytes, needs 32');
  expect(() => kernels.product(batch, { type: 'Q8_0', weights: big, x: big, y: big, m: 1, n: 4, k: 48 })).toThrow('k = 48 is not a multiple of the block size 32');
  small.destroy();
  big.destroy();
  kernels.destroy();
});
