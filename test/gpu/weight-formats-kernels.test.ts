// The block decoders of every GPU weight format (src/common/weight-formats.ts; shaders/decode_*.wgsl) as the
// products compose them (decode m = 1 and prefill m > 1, bias + accumulate, gated SwiGLU, split into row ranges,
// the GPU shape with K split over invocations) against the CPU reference (src/model/dequantize.ts, which
// test/unit/model/weight-formats.test.ts checks against ggml) on random blocks (every byte random, f16 fields
// finite). The embedding lookup of every format is in forward-kernels-elementwise.test.ts.
// Tolerance: 1e-4 · (Σ|w·x| + max|w| · Σ|x|) per output (f32 sums over K; the offset formats sum their
// scale and offset parts apart); a wrong nibble, high bit or scale is off by O(Σ|w·x|).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GPU_WEIGHT_FORMAT_NAMES, IQ4_VALUES, WEIGHT_FORMAT, type GpuWeightFormatName } from '../../src/common/weight-formats.ts';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { ForwardKernels, PRODUCT_BLOCK_ELEMENTS, type ForwardKernelShapes, type ProductArgs } from '../../src/gpu/forward-kernels.ts';
import { createStorageBuffer, readF32 } from '../../src/gpu/transfer.ts';
import { toGpuLayout } from '../../src/model/dequantize.ts';
import { oneHotProduct } from '../support/kernel-checks.ts';
import { randomF32, seededRandom } from '../support/kernel-reference.ts';
import { randomGpuRows } from './weight-format-blocks.ts';

/** The formats whose product is not one of the pre-table tuned bodies, and the tuned ones (checked too, briefly). */
const FORMATS: GpuWeightFormatName[] = GPU_WEIGHT_FORMAT_NAMES.filter((f) => WEIGHT_FORMAT[f].blockElements > 1);

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.destroy());

interface Case {
  m: number;
  n: number;
  blocks: number;
  biasAccumulate?: boolean;
  gated?: boolean;
  split?: number;
}
const CASES: Case[] = [
  { m: 1, n: 67, blocks: 3 },
  { m: 5, n: 9, blocks: 2, biasAccumulate: true },
  { m: 1, n: 6, blocks: 2, gated: true, split: 4 },
];

async function checkCase(kernels: ForwardKernels, type: GpuWeightFormatName, c: Case, seed: number): Promise<string | null> {
  const random = seededRandom(seed);
  const k = c.blocks * PRODUCT_BLOCK_ELEMENTS[type];
  const { m, n } = c;
  const matrices = c.gated ? 2 : 1;
  const w = Array.from({ length: matrices }, () => randomGpuRows(type, n, k, random));
  const x = randomF32(random, m * k);
  const bias = c.biasAccumulate ? randomF32(random, n) : undefined;
  const y0 = c.biasAccumulate ? randomF32(random, m * n) : new Float32Array(m * n).fill(NaN);
  const ranges = c.split ? [[0, c.split], [c.split, n]] : [[0, n]];
  const buffers = ranges.map(([from, to]) => {
    const parts = w.map((mat) => mat.bytes.subarray(from * mat.rowBytes, to * mat.rowBytes));
    const bytes = new Uint8Array(parts.reduce((s, p) => s + p.byteLength, 0));
    let at = 0;
    for (const p of parts) {
      bytes.set(p, at);
      at += p.byteLength;
    }
    return createStorageBuffer(gpu.device, bytes);
  });
  const xBuffer = createStorageBuffer(gpu.device, x);
  const biasBuffer = bias ? createStorageBuffer(gpu.device, bias) : undefined;
  const y = createStorageBuffer(gpu.device, y0);
  const calls = ranges.map(([from, to], i): ProductArgs => ({ type, weights: buffers[i], x: xBuffer, y, m, n: to - from, k, bias: biasBuffer, accumulate: c.biasAccumulate, gated: c.gated, yOffset: from, yStride: n }));
  await kernels.compile(calls.flatMap((a) => kernels.productOps(a))); // the pipelines of what the calls record
  const batch = new ComputeBatch(gpu, `${type} product check`);
  for (const a of calls) kernels.product(batch, a);
  batch.submit();
  const got = await readF32(gpu.device, y, m * n);
  for (const b of [...buffers, xBuffer, biasBuffer, y]) b?.destroy();
  gpu.throwIfFailed();
  for (let t = 0; t < m; t++) {
    for (let r = 0; r < n; r++) {
      const dots = w.map((mat) => {
        let sum = 0;
        let magnitude = 0;
        let maxW = 0;
        let sumX = 0;
        for (let j = 0; j < k; j++) {
          const wv = mat.values[r * k + j];
          const xv = x[t * k + j];
          sum += wv * xv;
          magnitude += Math.abs(wv * xv);
          maxW = Math.max(maxW, Math.abs(wv));
          sumX += Math.abs(xv);
        }
        return { sum, tolerance: 1e-4 * (magnitude + maxW * sumX) };
      });
      let expected = dots[0].sum;
      let tolerance = dots[0].tolerance;
      if (c.gated) {
        const g = dots[0].sum;
        expected = (g / (1 + Math.exp(-g))) * dots[1].sum;
        tolerance = 1.1 * dots[0].tolerance * Math.abs(dots[1].sum) + Math.abs(g) * dots[1].tolerance + 1e-5 * Math.abs(expected);
      }
      if (c.biasAccumulate) expected += bias![r] + y0[t * n + r];
      const value = got[t * n + r];
      if (!(Math.abs(value - expected) <= tolerance + 1e-6)) {
        return `${type} ${JSON.stringify(c)}: token ${t} row ${r}: got ${value}, expected ${expected} (tolerance ${tolerance.toExponential(2)})`;
      }
    }
  }
  return null;
}

const GPU_SHAPE: Partial<ForwardKernelShapes> = { product: { WORKGROUP_SIZE: 16, K_SPLIT: 4, TILE_M: 3 } };

describe.each(FORMATS)('%s products', (type) => {
  let kernels: ForwardKernels;
  let split: ForwardKernels;
  let subgroupSplit: ForwardKernels | null = null;
  beforeAll(() => {
    kernels = new ForwardKernels(gpu);
    split = new ForwardKernels(gpu, { shapes: GPU_SHAPE, productSplit: 'workgroup' });
    // Where subgroups hold K_SPLIT invocations, the lanes are also summed by subgroup shuffles.
    if (gpu.features.subgroups && (gpu.adapterInfo.subgroupMinSize ?? 0) >= 4) subgroupSplit = new ForwardKernels(gpu, { shapes: GPU_SHAPE, productSplit: 'subgroup' });
  });
  afterAll(() => {
    kernels?.destroy();
    split?.destroy();
    subgroupSplit?.destroy();
  });

  test.each(CASES)('%o', async (c) => {
    expect(await checkCase(kernels, type, c, c.m * 100 + c.n + type.length)).toBeNull();
  });

  test('K split over 4 invocations, 3 tokens a tile (m = 7), summed in workgroup memory and by subgroup shuffles', async () => {
    expect(await checkCase(split, type, { m: 7, n: 13, blocks: 5 }, 99)).toBeNull();
    if (subgroupSplit) expect(await checkCase(subgroupSplit, type, { m: 7, n: 13, blocks: 5 }, 98)).toBeNull();
  });
});

test('IQ4_NL: every code at every place of a block is its codebook value, exactly (decode and prefill)', async () => {
  // 16 rows of one block (d = 1): row r's byte j holds codes (r + j) % 16 (low nibble, weight j) and (r + j + 7) % 16
  // (high nibble, weight j + 16); one-hot tokens read y[t, r] = IQ4_VALUES[code of weight t of row r].
  const n = 16;
  const k = 32;
  const file = new Uint8Array(n * 18);
  const codes: number[][] = [];
  for (let r = 0; r < n; r++) {
    file[r * 18 + 1] = 0x3c; // f16 1.0
    const row = new Array<number>(k);
    for (let j = 0; j < 16; j++) {
      row[j] = (r + j) % 16;
      row[j + 16] = (r + j + 7) % 16;
      file[r * 18 + 2 + j] = row[j] | (row[j + 16] << 4);
    }
    codes.push(row);
  }
  const kernels = new ForwardKernels(gpu);
  for (const m of [1, k]) {
    const got = await oneHotProduct(gpu, kernels, 'IQ4_NL', toGpuLayout('IQ4_NL', file), n, k, m);
    const want = Float32Array.from({ length: m * n }, (_, i) => IQ4_VALUES[codes[i % n][Math.floor(i / n)]]);
    expect(Array.from(got), `m = ${m}`).toEqual(Array.from(want));
  }
  kernels.destroy();
});
