// The int8-activation products (issue 19) on Dawn: shaders/quantize_activations.wgsl against llama.cpp's q8_0
// quantization with a d per 16 values (ggml's quantize_row_q8_0 per half block: test/support/cpu-forward.ts's
// quantizeInt8Activations, the forward tests' reference) in both its layouts; a product's QUANT_OUT (the next
// product's int8 activations written by the product itself) bit for bit against the quantizer on its output; and the
// Q8_0 / Q4_0 int8 products (matmul_q8_0_int8.wgsl's unpack4x8snorm body, matmul_q4_0_int8.wgsl's two products per
// 32-bit multiply) against the exact product of the dequantized weights with the dequantized int8 activations the
// GPU made, within the f32 summation bound. Decode (m = 1) and prefill tiles, bias, residual, SwiGLU/GeGLU, split
// rows, the CPU adapters' and the GPUs' shapes (K_SPLIT 8). Fails without an adapter as the other Dawn tests do.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { ForwardKernels, type ForwardKernelShapes } from '../../src/gpu/forward-kernels.ts';
import { recordOps } from '../../src/gpu/kernel-op.ts';
import { INT8_ACTIVATION_PAIRS } from '../../src/gpu/shaders.ts';
import { createEmptyStorageBuffer, createStorageBuffer, readBuffer } from '../../src/gpu/transfer.ts';
import { acquireDawn, dawn, type DawnDevice } from '../support/dawn-decoder.ts';
import { needDawnAdapter } from '../support/dawn-adapter.ts';
import { dequantizeRows, quantMatmulReference, randomQuantRows } from '../support/forward-reference.ts';
import { firstSumMismatch, randomF32, seededRandom, type Reference } from '../support/kernel-reference.ts';
import { INT8_ACTIVATION_BLOCK, quantizeInt8Activations, type Int8ActivationRow } from '../support/cpu-forward.ts';

type Format = 'Q8_0' | 'Q4_0';
const FORMATS: Format[] = ['Q8_0', 'Q4_0'];
const ON = { Q8_0: true, Q4_0: true, prefill: true };
const GPU_SHAPE: Partial<ForwardKernelShapes> = { product: { WORKGROUP_SIZE: 64, K_SPLIT: 8, TILE_M: 4 }, int8Activations: ON };

let device: DawnDevice = { gpu: null, pipelines: null, missing: 'not acquired' };
let cpuShapes: ForwardKernels;
let gpuShapes: ForwardKernels;
let plain: ForwardKernels;
beforeAll(async () => {
  device = await acquireDawn('int8 activations test');
  const gpu = device.gpu;
  if (!gpu) return;
  cpuShapes = new ForwardKernels(gpu, { pipelines: device.pipelines!, shapes: { product: { WORKGROUP_SIZE: 16, K_SPLIT: 1, TILE_M: 4 }, int8Activations: ON } });
  gpuShapes = new ForwardKernels(gpu, { pipelines: device.pipelines!, shapes: GPU_SHAPE, productSplit: 'workgroup' });
  plain = new ForwardKernels(gpu, { pipelines: device.pipelines!, shapes: { int8Activations: { Q8_0: false, Q4_0: false, prefill: false } } });
});
afterAll(() => {
  for (const k of [cpuShapes, gpuShapes, plain]) k?.destroy();
  device.gpu?.destroy();
});

function need(ctx: { skip: (note?: string) => void }): GpuContext {
  return needDawnAdapter(ctx, device.gpu, device.missing);
}

/**
 * ggml's quantize_row_q8_0_ref of one row per half block (test/support/cpu-forward.ts's quantizeInt8Activations, the
 * forward tests' reference), and which values sit within 1e-4 of a rounding tie (where 1/d on the GPU, within 2.5
 * ulp in WGSL, may take the other side).
 */
function quantizeReference(x: Float32Array): Int8ActivationRow & { nearTie: Uint8Array } {
  const B = INT8_ACTIVATION_BLOCK;
  const nearTie = new Uint8Array(x.length);
  for (let b = 0; b < x.length / B; b++) {
    let amax = 0;
    for (let j = 0; j < B; j++) amax = Math.max(amax, Math.abs(x[b * B + j]));
    const scale = Math.fround(amax / 127);
    const id = scale ? Math.fround(1 / scale) : 0;
    for (let j = 0; j < B; j++) {
      const v = Math.fround(x[b * B + j] * id);
      nearTie[b * B + j] = Math.abs(Math.abs(v - Math.trunc(v)) - 0.5) < 1e-4 ? 1 : 0;
    }
  }
  return { ...quantizeInt8Activations(x), nearTie };
}

/** The GPU's int8 blocks of x [m, k] (quantize_activations' quads or pairs layout) as codes, d and Σq per block. */
async function quantizeOnGpu(gpu: GpuContext, fk: ForwardKernels, x: Float32Array, m: number, k: number, pairs = false): Promise<{ codes: Int8Array; d: Float32Array; sums: Int32Array }> {
  const xBuffer = createStorageBuffer(gpu.device, x);
  const out = createEmptyStorageBuffer(gpu.device, m * k * 4);
  const batch = new ComputeBatch(gpu, 'quantize check');
  const ops = fk.quantizeOps(xBuffer, out, m, k, pairs);
  await fk.compile(ops);
  recordOps(batch, fk.pipelines, fk.uniforms, ops, { m, pos0: 0, splits: 1 });
  batch.submit();
  const words = new Uint32Array(await readBuffer(gpu.device, out, m * k * 4));
  xBuffer.destroy();
  out.destroy();
  gpu.throwIfFailed();
  return unpackBlocks(words, m, k, pairs);
}

/** Pair word c of vec4 j (PAIRS layout): the elements in its high (a_h, the low 16 bits) and low (a_l) halves. */
const PAIR_ELEMENTS = (j: number, c: number): [high: number, low: number] => [[4 * j + 2, 4 * j], [18 + 4 * j, 16 + 4 * j], [4 * j + 3, 4 * j + 1], [19 + 4 * j, 17 + 4 * j]][c] as [number, number];

function unpackBlocks(words: Uint32Array, m: number, k: number, pairs = false): { codes: Int8Array; d: Float32Array; sums: Int32Array } {
  const blocks = k / 32;
  const codes = new Int8Array(m * k);
  const d = new Float32Array(m * blocks * 2);
  const sums = new Int32Array(m * blocks * 2);
  const f = new Float32Array(words.buffer);
  const i32 = new Int32Array(words.buffer);
  for (let t = 0; t < m; t++) {
    for (let b = 0; b < blocks; b++) {
      const at = t * k + (pairs ? 20 : 12) * b;
      if (pairs) {
        for (let j = 0; j < 4; j++) {
          for (let c = 0; c < 4; c++) {
            // v = a_h + a_l·65536 in i32: a_h is the sign-extended low half, a_l what is left.
            const v = i32[at + 4 * j + c];
            const high = (v << 16) >> 16;
            const [h, l] = PAIR_ELEMENTS(j, c);
            codes[t * k + 32 * b + h] = high;
            codes[t * k + 32 * b + l] = (v - high) / 65536;
          }
        }
      } else {
        codes.set(new Int8Array(words.buffer, at * 4, 32), t * k + 32 * b);
      }
      // The tail: (d_lo, d_hi, Σq_lo, Σq_hi).
      const tail = at + (pairs ? 16 : 8);
      for (let h = 0; h < 2; h++) {
        d[(t * blocks + b) * 2 + h] = f[tail + h];
        sums[(t * blocks + b) * 2 + h] = i32[tail + 2 + h];
      }
    }
  }
  return { codes, d, sums };
}

describe('quantize_activations', () => {
  test('matches ggml quantize_row_q8_0 per half block (codes, f16 scale, sums) on random rows, zero and one-hot blocks', async (ctx) => {
    const gpu = need(ctx);
    const random = seededRandom(11);
    const m = 3;
    const k = 32 * 9;
    const x = randomF32(random, m * k, 4);
    x.fill(0, 32, 64); // an all-zero block: d 0, codes 0
    x.fill(0, 64, 96);
    x[70] = -3.25; // one value: its code is -127
    for (let i = 96; i < 128; i++) x[i] *= 1e-6; // tiny values
    // Exact ties (d = 1): roundf takes halves away from zero (WGSL's round() would take them to even).
    const TIES = [127, 0.5, 1.5, 2.5, -2.5, -0.5, 126.5];
    x.set(TIES, 128);
    const got = await quantizeOnGpu(gpu, cpuShapes, x, m, k);
    let ties = 0;
    for (let t = 0; t < m; t++) {
      const ref = quantizeReference(x.subarray(t * k, (t + 1) * k));
      for (let j = 0; j < k; j++) {
        const g = got.codes[t * k + j];
        if (ref.nearTie[j]) {
          ties++;
          expect(Math.abs(g - ref.codes[j]), `token ${t} value ${j} (near a tie)`).toBeLessThanOrEqual(1);
        } else {
          expect(g, `token ${t} value ${j}: x ${x[t * k + j]}`).toBe(ref.codes[j]);
        }
      }
      for (let b = 0; b < k / 16; b++) {
        expect(got.d[t * (k / 16) + b], `token ${t} half block ${b} d`).toBe(ref.d[b]);
        let sum = 0;
        for (let j = 0; j < 16; j++) sum += got.codes[t * k + 16 * b + j];
        expect(got.sums[t * (k / 16) + b], `token ${t} half block ${b} sum`).toBe(sum);
      }
    }
    expect(ties).toBeLessThan(4 + TIES.length);
    expect(Array.from(got.codes.subarray(128, 128 + TIES.length))).toEqual([127, 1, 2, 3, -3, -1, 127]);
    expect(got.d[2]).toBe(0);
    expect(got.d[3]).toBe(0);
    expect(got.codes[70]).toBe(-127);
    // The PAIRS layout (Q4_0's pair products) holds the same codes, d and sums, every code in range.
    const paired = await quantizeOnGpu(gpu, cpuShapes, x, m, k, true);
    expect(Array.from(paired.codes)).toEqual(Array.from(got.codes));
    expect(Array.from(paired.d)).toEqual(Array.from(got.d));
    expect(Array.from(paired.sums)).toEqual(Array.from(got.sums));
  });
});

/** A product that writes the next product's int8 activations (QUANT_OUT), as a forward plan hands them off. */
interface HandOffCase {
  m: number;
  /** Output columns: [from, to) of each part (one dispatch each), the row width the last `to`. */
  parts: [number, number][];
  gated?: boolean;
  activation?: 'gelu';
  /** Residual with the fused norm (the int8 blocks are those of Y·g). */
  normOut?: boolean;
  pairs: boolean;
}

const HAND_OFF_CASES: HandOffCase[] = [
  { m: 1, parts: [[0, 96]], pairs: true },
  { m: 1, parts: [[0, 64]], pairs: false },
  { m: 1, parts: [[0, 64]], gated: true, pairs: true },
  { m: 1, parts: [[0, 128]], normOut: true, pairs: true },
  { m: 1, parts: [[0, 32], [32, 96]], gated: true, pairs: false },
  { m: 6, parts: [[0, 64]], normOut: true, pairs: false },
  { m: 5, parts: [[0, 160]], gated: true, pairs: true },
  { m: 1, parts: [[0, 96]], gated: true, activation: 'gelu', pairs: true },
];

/**
 * One hand-off case: the product (Q4_0 weights, f32 x) with quantizeOut, against shaders/quantize_activations.wgsl
 * run on what the product wrote (Y, or Y·g with the fused norm): null when every word is the same.
 */
async function checkHandOff(gpu: GpuContext, fk: ForwardKernels, c: HandOffCase, seed: number): Promise<string | null> {
  const random = seededRandom(seed);
  const k = 64;
  const { m } = c;
  const width = c.parts[c.parts.length - 1][1];
  const rowBytes = (k / 32) * 20;
  const w = randomQuantRows(random, 'Q4_0', (c.gated ? 2 : 1) * width, k);
  const x = randomF32(random, m * k, 2);
  const buffers: GPUBuffer[] = [];
  const keep = <T extends GPUBuffer>(b: T): T => (buffers.push(b), b);
  const xBuffer = keep(createStorageBuffer(gpu.device, x));
  const y = keep(createStorageBuffer(gpu.device, randomF32(random, m * width, 1)));
  const norm = c.normOut
    ? { weight: keep(createStorageBuffer(gpu.device, randomF32(random, width, 1))), normed: keep(createEmptyStorageBuffer(gpu.device, m * width * 4)), sums: keep(createEmptyStorageBuffer(gpu.device, m * fk.normGroups(width) * 4)) }
    : undefined;
  const handed = keep(createEmptyStorageBuffer(gpu.device, m * width * 4));
  const quantized = keep(createEmptyStorageBuffer(gpu.device, m * width * 4));
  const ops = c.parts.flatMap(([from, to]) => {
    if (!fk.quantizesOut(to - from, from, width)) throw new Error(`quantizesOut refused ${from}..${to}`);
    // A gated part's rows: its gate rows, then its up rows (the loader's stacking of a row range).
    const rows = w.subarray(from * rowBytes, to * rowBytes);
    const up = w.subarray((width + from) * rowBytes, (width + to) * rowBytes);
    const bytes = c.gated ? Uint8Array.from([...rows, ...up]) : rows;
    return fk.productOps({ type: 'Q4_0', weights: keep(createStorageBuffer(gpu.device, bytes)), x: xBuffer, y, m, n: to - from, k, yOffset: from, yStride: width, gated: c.gated, activation: c.activation, accumulate: c.normOut, normOut: norm, quantizeOut: { into: handed, pairs: c.pairs } });
  });
  if (ops.some((o) => o.kernel.name.includes('int8') || o.kernel.name.includes('quantize'))) return 'the producer read int8 activations';
  const batch = new ComputeBatch(gpu, 'hand-off check');
  await fk.compile(ops);
  recordOps(batch, fk.pipelines, fk.uniforms, ops, { m, pos0: 0, splits: 1 });
  batch.submit();
  const again = new ComputeBatch(gpu, 'hand-off quantizer');
  const quantize = fk.quantizeOps(norm ? norm.normed : y, quantized, m, width, c.pairs);
  await fk.compile(quantize);
  recordOps(again, fk.pipelines, fk.uniforms, quantize, { m, pos0: 0, splits: 1 });
  again.submit();
  const got = new Uint32Array(await readBuffer(gpu.device, handed, m * width * 4));
  const want = new Uint32Array(await readBuffer(gpu.device, quantized, m * width * 4));
  for (const b of buffers) b.destroy();
  gpu.throwIfFailed();
  // The blocks take 3/8 (quads) or 5/8 (pairs) of each row's words; the rest is not written by either.
  const used = (width / 32) * (c.pairs ? 20 : 12);
  for (let t = 0; t < m; t++) {
    for (let i = 0; i < used; i++) {
      const at = t * width + i;
      if (got[at] !== want[at]) return `token ${t} word ${i}: ${got[at].toString(16)} against the quantizer's ${want[at].toString(16)}`;
    }
  }
  return null;
}

describe('QUANT_OUT: a product writes the next product\'s int8 activations', () => {
  test('bit for bit what quantize_activations makes of its output: the CPU adapter\'s shapes (subgroups of 4)', { timeout: 300_000 }, async (ctx) => {
    const gpu = need(ctx);
    const fk = new ForwardKernels(gpu, { pipelines: device.pipelines! });
    try {
      expect(fk.productSplit).toBe('subgroup');
      expect(fk.shapes.product.NORM_SUBGROUP).toBe(4);
      for (const c of HAND_OFF_CASES) expect(await checkHandOff(gpu, fk, c, c.m * 41 + c.parts.length), JSON.stringify(c)).toBeNull();
    } finally {
      fk.destroy();
    }
  });

  test('through workgroup memory (the workgroup split), and refused where blocks would be cut', { timeout: 300_000 }, async (ctx) => {
    const gpu = need(ctx);
    const fk = new ForwardKernels(gpu, { pipelines: device.pipelines!, productSplit: 'workgroup' });
    try {
      for (const c of HAND_OFF_CASES) expect(await checkHandOff(gpu, fk, c, c.m * 43 + c.parts.length), JSON.stringify(c)).toBeNull();
      expect(fk.quantizesOut(64, 16, 96)).toBe(false);
      expect(fk.quantizesOut(48, 0, 48)).toBe(false);
      expect(gpuShapes.quantizesOut(64, 0, 64)).toBe(false); // K_SPLIT 8
      const small = [48 * 20, 32 * 4, 48 * 4, 48 * 4].map((bytes) => createEmptyStorageBuffer(gpu.device, bytes));
      const [weights, x, y, into] = small;
      expect(() => fk.productOps({ type: 'Q4_0', weights, x, y, m: 1, n: 48, k: 32, quantizeOut: { into, pairs: true } })).toThrow(/cannot write int8 activations/);
      for (const b of small) b.destroy();
    } finally {
      fk.destroy();
    }
  });
});

interface Case {
  m: number;
  n: number;
  blocks: number;
  bias?: boolean;
  accumulate?: boolean;
  split?: number;
  gated?: boolean;
  activation?: 'gelu';
  /** Every weight code at its format's extreme (Q8_0 -128, Q4_0 15) and every activation code ±127: Q4_0's pair bounds. */
  extreme?: boolean;
}

const CASES: Case[] = [
  { m: 1, n: 67, blocks: 3 },
  { m: 1, n: 5, blocks: 2, bias: true, accumulate: true },
  { m: 1, n: 21, blocks: 2, gated: true },
  { m: 1, n: 21, blocks: 2, gated: true, activation: 'gelu' },
  { m: 1, n: 40, blocks: 9, bias: true, accumulate: true, split: 12 },
  { m: 6, n: 9, blocks: 1, bias: true, accumulate: true, split: 4 },
  { m: 17, n: 33, blocks: 2 },
  { m: 9, n: 10, blocks: 1, gated: true, split: 4 },
  { m: 1, n: 8, blocks: 4, extreme: true },
  { m: 5, n: 8, blocks: 2, extreme: true },
];

function gatedReference(gate: Reference, up: Reference, activation?: 'gelu'): Reference {
  const values = new Float64Array(gate.values.length);
  const magnitude = new Float64Array(gate.values.length);
  const gamma = (gate.terms + 2) * 2 ** -24;
  for (let i = 0; i < values.length; i++) {
    const g = gate.values[i];
    const u = up.values[i];
    const act = activation === 'gelu' ? 0.5 * g * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (g + 0.044715 * g ** 3))) : g / (1 + Math.exp(-g));
    values[i] = act * u;
    magnitude[i] = 1.13 * Math.abs(u) * gate.magnitude[i] + Math.abs(act) * up.magnitude[i] + (Math.abs(values[i]) * 64 * 2 ** -24) / gamma;
  }
  return { values, magnitude, terms: gate.terms };
}

/**
 * The int8 product of one case through ForwardKernels.productOps (quantize, then the int8 body): the output, and
 * the reference from the dequantized weights and the GPU's own dequantized activations (null: the f32 path ran).
 */
async function checkInt8Product(gpu: GpuContext, fk: ForwardKernels, type: Format, c: Case, seed: number): Promise<string | null> {
  const random = seededRandom(seed);
  const k = 32 * c.blocks;
  const { m, n } = c;
  const w = randomQuantRows(random, type, n, k);
  const wUp = c.gated ? randomQuantRows(random, type, n, k) : undefined;
  const x = randomF32(random, m * k, 2);
  if (c.extreme) {
    // Q8_0 codes -128 (bytes 4..35 of a 36-byte block), Q4_0 nibbles 15 (bytes 4..19 of 20); x ±1 a block, so
    // every activation code is ±127: the largest terms, of both signs.
    const [from, stride, code] = type === 'Q8_0' ? [4, 36, 0x80] : [4, 20, 0xff];
    for (let at = 0; at < w.length; at += stride) w.fill(code, at + from, at + stride);
    for (let i = 0; i < m * k; i++) x[i] = (Math.floor(i / 32) + Math.floor(i / k)) % 2 ? 1 : -1;
  }
  const bias = c.bias ? randomF32(random, n) : undefined;
  const y0 = c.accumulate ? randomF32(random, m * n) : new Float32Array(m * n).fill(Number.NaN);
  const rowBytes = c.blocks * (type === 'Q8_0' ? 36 : 20);
  const ranges = c.split ? [[0, c.split], [c.split, n]] : [[0, n]];
  const weights = ranges.map(([from, to]) => {
    const rows = w.subarray(from * rowBytes, to * rowBytes);
    if (!wUp) return createStorageBuffer(gpu.device, rows);
    const stacked = new Uint8Array(2 * rows.byteLength);
    stacked.set(rows);
    stacked.set(wUp.subarray(from * rowBytes, to * rowBytes), rows.byteLength);
    return createStorageBuffer(gpu.device, stacked);
  });
  const xBuffer = createStorageBuffer(gpu.device, x);
  const scratch = createEmptyStorageBuffer(gpu.device, m * k * 4);
  const biasBuffer = bias ? createStorageBuffer(gpu.device, bias) : undefined;
  const y = createStorageBuffer(gpu.device, y0);
  const batch = new ComputeBatch(gpu, 'int8 product check');
  // Only the pipelines a case runs are compiled (seconds each on SwiftShader).
  const ops = ranges.map(([from, to], i) => fk.productOps({ type, weights: weights[i], x: xBuffer, y, m, n: to - from, k, bias: biasBuffer, accumulate: c.accumulate, gated: c.gated, activation: c.activation, yOffset: from, yStride: n, quantizeInto: scratch }));
  const int8 = ops.every((o) => o.length === 2 && o[1].kernel.name.includes('int8'));
  await fk.compile(ops.flat());
  recordOps(batch, fk.pipelines, fk.uniforms, ops.flat(), { m, pos0: 0, splits: 1 });
  batch.submit();
  const got = new Float32Array(await readBuffer(gpu.device, y, m * n * 4));
  const quantized = unpackBlocks(new Uint32Array(await readBuffer(gpu.device, scratch, m * k * 4)), m, k, INT8_ACTIVATION_PAIRS[type]);
  for (const b of [...weights, xBuffer, scratch, biasBuffer, y]) b?.destroy();
  gpu.throwIfFailed();
  if (!int8) return 'the product did not take the int8 path';
  // The activations the int8 body multiplied: d·q, exact in f32.
  const xq = new Float32Array(m * k);
  for (let i = 0; i < m * k; i++) xq[i] = quantized.d[Math.floor(i / 16)] * quantized.codes[i];
  const reference = quantMatmulReference(dequantizeRows(type, w, n, k), xq, m, n, k, bias, c.accumulate ? y0 : undefined);
  return firstSumMismatch(got, wUp ? gatedReference(reference, quantMatmulReference(dequantizeRows(type, wUp, n, k), xq, m, n, k), c.activation) : reference);
}

describe.for(FORMATS)('%s int8-activation products', (type) => {
  test('CPU adapters\' shape (4 rows an invocation, prefill tiles of 4 tokens): exact integer sums, f32 scaling', { timeout: 300_000 }, async (ctx) => {
    const gpu = need(ctx);
    for (const c of CASES) expect(await checkInt8Product(gpu, cpuShapes, type, c, c.m * 31 + c.n), JSON.stringify(c)).toBeNull();
  });

  test('GPUs\' shape (K_SPLIT 8 through workgroup memory)', { timeout: 300_000 }, async (ctx) => {
    const gpu = need(ctx);
    for (const c of CASES) expect(await checkInt8Product(gpu, gpuShapes, type, c, c.m * 37 + c.n), JSON.stringify(c)).toBeNull();
  });

  test('int8 only for Q8_0 / Q4_0, for m > 1 only with prefill, and only where the shapes ask: never by default', (ctx) => {
    const gpu = need(ctx);
    expect(cpuShapes.int8Product(type, 1)).toBe(true);
    expect(cpuShapes.int8Product(type, 5)).toBe(true);
    expect(cpuShapes.int8Product('F16', 1)).toBe(false);
    expect(cpuShapes.int8Product('Q4_K', 1)).toBe(false);
    const decodeOnly = new ForwardKernels(gpu, { pipelines: device.pipelines!, shapes: { int8Activations: { ...ON, prefill: false } } });
    expect(decodeOnly.int8Product(type, 1)).toBe(true);
    expect(decodeOnly.int8Product(type, 2)).toBe(false);
    decodeOnly.destroy();
    expect(plain.int8Product(type, 1)).toBe(false);
    // No adapter takes int8 activations by default: on CPU adapters the f32 bodies with their codes in place are the
    // faster ones (kernel-shapes.ts, bench/README.md "Shifts"); no language feature is needed where a shape asks.
    const byDefault = new ForwardKernels(gpu, { pipelines: device.pipelines! });
    expect(byDefault.shapes.int8Activations[type]).toBe(false);
    expect(byDefault.int8Product(type, 1)).toBe(false);
    expect(byDefault.int8Product(type, 2)).toBe(false);
    byDefault.destroy();
  });
});
