// embedding (every table type, whole and split into row ranges), swiglu, argmax
// (one and two passes, ties, -inf and NaN) and the Qwen3 q/k norm as kernels.ts's rmsnorm over rows of head_dim,
// against the TypeScript references.
// Tolerances: embedding is exact (a dequantized weight is exact in f32); swiglu within 2e-6 relative (exp and one
// division in f32); argmax exact.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { ForwardKernels, type EmbeddingArgs, type EmbeddingTableType } from '../../src/gpu/forward-kernels.ts';
import { Kernels } from '../../src/gpu/kernels.ts';
import { createStorageBuffer, readBuffer, readF32 } from '../../src/gpu/transfer.ts';
import { firstMismatch, randomF32, rmsnormReference, seededRandom } from '../support/kernel-reference.ts';
import { QUANT_BLOCKS, argmaxReference, dequantizeRows, halfBitsToNumber, randomQuantRows, swigluReference, type QuantType } from '../support/forward-reference.ts';
import { randomGpuRows } from './weight-format-blocks.ts';

let gpu: GpuContext;
let kernels: ForwardKernels;
beforeAll(async () => {
  gpu = await acquireGpu();
  kernels = new ForwardKernels(gpu); // each test compiles the ops it records (their …Ops description)
});
afterAll(() => {
  kernels?.destroy();
  gpu?.destroy();
});

/** A random table [vocab, dim] in the GPU layout, its f32 values, and the bytes of one row. */
function randomTable(type: EmbeddingTableType, vocab: number, dim: number, seed: number): { bytes: Uint8Array; values: Float32Array; rowBytes: number } {
  const random = seededRandom(seed);
  if (type === 'F32') {
    const values = randomF32(random, vocab * dim);
    return { bytes: new Uint8Array(values.buffer), values, rowBytes: dim * 4 };
  }
  if (type === 'F16') {
    const bits = new Uint16Array(vocab * dim + 1); // + 1: whole u32 words
    for (let i = 0; i < vocab * dim; i++) bits[i] = Math.floor(random() * 0x7c00) | (random() < 0.5 ? 0x8000 : 0);
    const values = Float32Array.from(bits.subarray(0, vocab * dim), halfBitsToNumber);
    return { bytes: new Uint8Array(bits.buffer), values, rowBytes: dim * 2 };
  }
  if (!(type in QUANT_BLOCKS)) return randomGpuRows(type, vocab, dim, random);
  const bytes = randomQuantRows(random, type as QuantType, vocab, dim);
  const { scaled, offset } = dequantizeRows(type as QuantType, bytes, vocab, dim);
  const values = Float32Array.from(scaled, (s, i) => s - offset[i]);
  return { bytes, values, rowBytes: bytes.length / vocab };
}

describe('embedding', () => {
  const cases: [EmbeddingTableType, number][] = [
    ['F32', 7],
    ['F16', 7],
    ['Q8_0', 64],
    ['Q4_0', 96],
    ['Q4_K', 256],
    ['Q6_K', 512],
    ['Q4_1', 64],
    ['Q5_0', 96],
    ['Q5_1', 32],
    ['Q2_K', 256],
    ['Q3_K', 512],
    ['Q5_K', 256],
    ['IQ4_NL', 64],
    ['IQ4_XS', 256],
    ['MXFP4', 64],
  ];
  const vocab = 13;
  const tokens = new Uint32Array([12, 0, 5, 5, 12, 3, 7]);

  test.each(cases)('%s table, dim %i, whole and split into two row ranges', async (type, dim) => {
    const table = randomTable(type, vocab, dim, dim + type.length);
    const expected = new Float32Array(tokens.length * dim);
    tokens.forEach((token, t) => expected.set(table.values.subarray(token * dim, (token + 1) * dim), t * dim));
    const tokenBuffer = createStorageBuffer(gpu.device, tokens);
    for (const ranges of [[[0, vocab]], [[0, 6], [6, vocab]]]) {
      // F16 ranges must start on a whole word: 6 rows of 7 halves do not, so F16 splits at row 4 instead.
      const bounds = type === 'F16' && ranges.length > 1 ? [[0, 4], [4, vocab]] : ranges;
      const out = createStorageBuffer(gpu.device, new Float32Array(tokens.length * dim).fill(NaN));
      const buffers = bounds.map(([from, to]) => createStorageBuffer(gpu.device, table.bytes.subarray(from * table.rowBytes, to * table.rowBytes)));
      const calls = bounds.map(([from, to], i): EmbeddingArgs => ({ type, table: buffers[i], tokens: tokenBuffer, out, tokenCount: tokens.length, dim, rowOffset: from, rowCount: to - from }));
      await kernels.compile(calls.flatMap((a) => kernels.embeddingOps(a)));
      const batch = new ComputeBatch(gpu, 'embedding test');
      for (const a of calls) kernels.embedding(batch, a);
      batch.submit();
      const got = await readF32(gpu.device, out, tokens.length * dim);
      for (const b of [...buffers, out]) b.destroy();
      expect(Array.from(got)).toEqual(Array.from(expected));
    }
    tokenBuffer.destroy();
    gpu.throwIfFailed();
  });
});

describe('swiglu', () => {
  test('m = 5, width = 67, gates from -100 to 50', async () => {
    const [m, width] = [5, 67];
    const random = seededRandom(1);
    const gate = randomF32(random, m * width, 8);
    gate[3] = -100;
    gate[4] = -90;
    gate[5] = 50;
    gate[6] = 0;
    const up = randomF32(random, m * width, 2);
    const out = createStorageBuffer(gpu.device, new Float32Array(m * width).fill(NaN));
    const inputs = [createStorageBuffer(gpu.device, gate), createStorageBuffer(gpu.device, up)];
    const call = { gate: inputs[0], up: inputs[1], out, m, width };
    await kernels.compile(kernels.swigluOps(call));
    const batch = new ComputeBatch(gpu, 'swiglu test');
    kernels.swiglu(batch, call);
    batch.submit();
    const got = await readF32(gpu.device, out, m * width);
    for (const b of [...inputs, out]) b.destroy();
    gpu.throwIfFailed();
    expect(firstMismatch(got, swigluReference(gate, up), 2e-6, 1e-30)).toBeNull();
  });
});

describe('argmax', () => {
  async function gpuArgmax(fk: ForwardKernels, values: Float32Array): Promise<{ index: number; value: number }> {
    const input = createStorageBuffer(gpu.device, values);
    const out = createStorageBuffer(gpu.device, new Uint32Array([0xdeadbeef, 0]));
    const scratch = createStorageBuffer(gpu.device, new Uint8Array(fk.argmaxScratchBytes(values.length)));
    const call = { values: input, out, scratch, count: values.length };
    await fk.compile(fk.argmaxOps(call));
    const batch = new ComputeBatch(gpu, 'argmax test');
    fk.argmax(batch, call);
    batch.submit();
    const words = new Uint32Array(await readBuffer(gpu.device, out, 8));
    for (const b of [input, out, scratch]) b.destroy();
    gpu.throwIfFailed();
    return { index: words[0], value: new Float32Array(words.buffer)[1] };
  }

  const cases: { count: number; name: string }[] = [
    { count: 1, name: 'one value' },
    { count: 7, name: 'less than a workgroup' },
    { count: 1024, name: 'exactly one stage-0 chunk on CPU adapters' },
    { count: 5000, name: 'two passes' },
    { count: 151936, name: 'a Qwen vocabulary' },
  ];
  test.each(cases)('$count values ($name), ties to the lowest index', async ({ count }) => {
    const random = seededRandom(count);
    const values = randomF32(random, count, 10);
    if (count > 10) {
      // The maximum twice (the lower index must win), -inf (masked logits) and a NaN around it.
      const [first, second] = [Math.floor(count * 0.6), Math.floor(count * 0.3)];
      values[first] = 20;
      values[second] = 20;
      values[count - 1] = -Infinity;
      values[1] = NaN;
    }
    const { index, value } = await gpuArgmax(kernels, values);
    expect(index).toBe(argmaxReference(values));
    expect(value).toBe(values[index]);
  });

  test('all values -inf: index 0', async () => {
    expect((await gpuArgmax(kernels, new Float32Array(3000).fill(-Infinity))).index).toBe(0);
  });

  test('GPU-like shape: 16-value chunks, 63 partial results reduced by 8 invocations', async () => {
    const small = new ForwardKernels(gpu, { shapes: { argmax: { WORKGROUP_SIZE: 8, ITEMS_PER_INVOCATION: 2 } } });
    const values = randomF32(seededRandom(3), 1000);
    values[999] = 5;
    values[17] = 5;
    expect((await gpuArgmax(small, values)).index).toBe(17);
    values[17] = 0;
    expect((await gpuArgmax(small, values)).index).toBe(999);
    small.destroy();
  });
});

describe('Qwen3 q/k norm is rmsnorm over rows of head_dim', () => {
  test.each([
    { m: 5, heads: 4, headDim: 32 },
    { m: 1, heads: 2, headDim: 64 },
  ])('%o', async ({ m, heads, headDim }) => {
    const basic = new Kernels(gpu);
    await basic.prepare();
    const random = seededRandom(m * heads + headDim);
    const q = randomF32(random, m * heads * headDim, 3);
    const weight = randomF32(random, headDim, 2);
    const [qb, wb, yb] = [q, weight, new Float32Array(q.length)].map((d) => createStorageBuffer(gpu.device, d));
    const batch = new ComputeBatch(gpu, 'qk norm');
    basic.rmsnorm(batch, { x: qb, weight: wb, y: yb, rows: m * heads, n: headDim, eps: 1e-6 });
    batch.submit();
    const got = await readF32(gpu.device, yb, q.length);
    for (const b of [qb, wb, yb]) b.destroy();
    basic.destroy();
    gpu.throwIfFailed();
    expect(firstMismatch(got, rmsnormReference(q, weight, m * heads, headDim, 1e-6), (headDim + 16) * 2 ** -24, 1e-30)).toBeNull();
  });
});
