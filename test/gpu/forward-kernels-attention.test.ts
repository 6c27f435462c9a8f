// RoPE (interleaved and NEOX, plain theta and Llama-3 scaling, with the KV-cache store) and causal GQA attention
// over the KV cache (decode: one query; prefill: many; prefill through attention_prefill too: below) against the f64 references, on head dims 32/64 with
// 4 query heads over 2 or 1 KV heads and context lengths 1, 7, 70.
// Tolerances (f32 on SwiftShader against f64):
//   RoPE: |got - ref| <= 5e-7 · (|a| + |b|) of the rotated pair (the angle is rounded to f32 in both, as llama.cpp
//     does; what is left is the kernel's own cos/sin, a few ulps, and two products); the V copy and the untouched
//     cache positions are exact.
//   attention: |got - ref| <= 1e-6 · max|v| (an f32 online softmax over <= 70 positions: each score carries
//     ~head_dim·2⁻²⁴ relative error, exp a few ulps, and the output is a convex combination of V rows;
//     measured <= 2.2e-7).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { ForwardKernels, type AttentionArgs, type RopeArgs, type RopeStyle } from '../../src/gpu/forward-kernels.ts';
import { createStorageBuffer, readF32 } from '../../src/gpu/transfer.ts';
import { ropeInverseFrequencies } from '../../src/model/rope-frequencies.ts';
import { randomF32, seededRandom } from '../support/kernel-reference.ts';
import { attentionReference, ropeReference } from '../support/forward-reference.ts';
import { ATTENTION_PREFILL_CASES, attentionPrefillError, attentionReferenceCase, type AttentionPrefillCase } from '../support/attention-prefill-case.ts';

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

const ROPE_TOLERANCE = 5e-7; // measured on SwiftShader: < 1e-7 up to position 76, < 4e-7 at positions 3000-5002

function firstPairMismatch(got: Float32Array, expected: Float64Array, input: Float32Array, headDim: number, neox: boolean): string | null {
  const pairs = headDim / 2;
  for (let i = 0; i < expected.length; i++) {
    const within = i % headDim;
    const p = neox ? within % pairs : within >> 1;
    const base = i - within;
    const a = input[base + (neox ? p : 2 * p)];
    const b = input[base + (neox ? p + pairs : 2 * p + 1)];
    const error = Math.abs(got[i] - expected[i]);
    if (!(error <= ROPE_TOLERANCE * (Math.abs(a) + Math.abs(b)))) {
      return `element ${i}: got ${got[i]}, expected ${expected[i]} (error ${error.toExponential(2)})`;
    }
  }
  return null;
}

/** Records attention for this call into `batch`, having compiled what it records (attention.wgsl composed per head dim). */
async function recordAttention(fk: ForwardKernels, batch: ComputeBatch, a: AttentionArgs & { pos0: number }): Promise<null> {
  await fk.compile(fk.attentionOps({ ...a, partials: a.out }));
  fk.attention(batch, a);
  return null;
}

function packQkv(q: Float32Array, k: Float32Array, v: Float32Array | null, m: number, nHeads: number, nKvHeads: number, headDim: number): Float32Array {
  const qn = nHeads * headDim;
  const kn = nKvHeads * headDim;
  const out = new Float32Array(m * (qn + 2 * kn));
  for (let t = 0; t < m; t++) {
    const row = t * (qn + 2 * kn);
    out.set(q.subarray(t * qn, (t + 1) * qn), row);
    out.set(k.subarray(t * kn, (t + 1) * kn), row + qn);
    if (v) out.set(v.subarray(t * kn, (t + 1) * kn), row + qn + kn);
  }
  return out;
}

/** The q, k and v parts of packed qkv rows. */
function unpackQkv(qkv: Float32Array, m: number, nHeads: number, nKvHeads: number, headDim: number): { q: Float32Array; k: Float32Array; v: Float32Array } {
  const qn = nHeads * headDim;
  const kn = nKvHeads * headDim;
  const [q, k, v] = [new Float32Array(m * qn), new Float32Array(m * kn), new Float32Array(m * kn)];
  for (let t = 0; t < m; t++) {
    const row = t * (qn + 2 * kn);
    q.set(qkv.subarray(row, row + qn), t * qn);
    k.set(qkv.subarray(row + qn, row + qn + kn), t * kn);
    v.set(qkv.subarray(row + qn + kn, row + qn + 2 * kn), t * kn);
  }
  return { q, k, v };
}

interface RopeCase {
  style: RopeStyle;
  headDim: number;
  nHeads: number;
  nKvHeads: number;
  m: number;
  pos0: number;
  llama3?: boolean;
  /** Qwen3: RMS-normalise each q and k head (random weights) before rotating. */
  qkNorm?: boolean;
}

/** Each head of x [rows of headDim] RMS-normalised with weights w, in f64 (the q/k norm of Qwen3). */
function headNormReference(x: Float32Array, headDim: number, w: Float32Array, eps: number): Float64Array {
  const out = new Float64Array(x.length);
  for (let base = 0; base < x.length; base += headDim) {
    let squares = 0;
    for (let i = 0; i < headDim; i++) squares += x[base + i] * x[base + i];
    const scale = 1 / Math.sqrt(squares / headDim + eps);
    for (let i = 0; i < headDim; i++) out[base + i] = x[base + i] * scale * w[i];
  }
  return out;
}

describe('rope', () => {
  const cases: RopeCase[] = [
    { style: 'interleaved', headDim: 32, nHeads: 4, nKvHeads: 2, m: 1, pos0: 0 },
    { style: 'interleaved', headDim: 64, nHeads: 4, nKvHeads: 1, m: 5, pos0: 7 },
    { style: 'neox', headDim: 32, nHeads: 4, nKvHeads: 2, m: 7, pos0: 0 },
    { style: 'neox', headDim: 64, nHeads: 4, nKvHeads: 1, m: 1, pos0: 69 },
    { style: 'neox', headDim: 64, nHeads: 4, nKvHeads: 2, m: 3, pos0: 3000 },
    { style: 'interleaved', headDim: 64, nHeads: 4, nKvHeads: 2, m: 3, pos0: 5000, llama3: true },
    { style: 'neox', headDim: 32, nHeads: 4, nKvHeads: 2, m: 1, pos0: 9, qkNorm: true },
    { style: 'neox', headDim: 128, nHeads: 2, nKvHeads: 1, m: 5, pos0: 300, qkNorm: true },
  ];
  test.each(cases)('%o', async (c) => {
    const random = seededRandom(c.headDim * 100 + c.m + c.pos0);
    const maxSeq = c.pos0 + c.m + 2;
    const invFreq = ropeInverseFrequencies({
      headDim: c.headDim,
      theta: c.llama3 ? 500000 : 10000,
      llama3: c.llama3 ? { factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositions: 64 } : undefined,
    });
    const q = randomF32(random, c.m * c.nHeads * c.headDim);
    const k = randomF32(random, c.m * c.nKvHeads * c.headDim);
    const v = randomF32(random, c.m * c.nKvHeads * c.headDim);
    const qNorm = randomF32(random, c.headDim, 2);
    const kNorm = randomF32(random, c.headDim, 2);
    const cacheSize = c.nKvHeads * maxSeq * c.headDim;
    const sentinel = new Float32Array(cacheSize).fill(-7);
    const buffers = {
      qNorm: createStorageBuffer(gpu.device, qNorm),
      kNorm: createStorageBuffer(gpu.device, kNorm),
      invFreq: createStorageBuffer(gpu.device, invFreq),
      qkv: createStorageBuffer(gpu.device, packQkv(q, k, v, c.m, c.nHeads, c.nKvHeads, c.headDim)),
      kCache: createStorageBuffer(gpu.device, sentinel),
      vCache: createStorageBuffer(gpu.device, sentinel),
    };
    const call: RopeArgs & { pos0: number } = {
      style: c.style,
      invFreq: buffers.invFreq,
      qkv: buffers.qkv,
      m: c.m,
      nHeads: c.nHeads,
      nKvHeads: c.nKvHeads,
      headDim: c.headDim,
      pos0: c.pos0,
      kvCache: { kCache: buffers.kCache, vCache: buffers.vCache, maxSeq },
      qkNorm: c.qkNorm ? { q: buffers.qNorm, k: buffers.kNorm, eps: 1e-6 } : undefined,
    };
    await kernels.compile(kernels.ropeOps(call));
    const batch = new ComputeBatch(gpu, 'rope test');
    kernels.rope(batch, call);
    batch.submit();
    const got = unpackQkv(await readF32(gpu.device, buffers.qkv, c.m * (c.nHeads + 2 * c.nKvHeads) * c.headDim), c.m, c.nHeads, c.nKvHeads, c.headDim);
    const [gotQ, gotK] = [got.q, got.k];
    expect(Array.from(got.v), 'v is left as it was').toEqual(Array.from(v));
    const kCache = await readF32(gpu.device, buffers.kCache, cacheSize);
    const vCache = await readF32(gpu.device, buffers.vCache, cacheSize);
    for (const b of Object.values(buffers)) b.destroy();
    gpu.throwIfFailed();

    const neox = c.style === 'neox';
    // With the norm, the rotation's input is the normalised head (rounded to f32, as the kernel holds it).
    const qIn = c.qkNorm ? Float32Array.from(headNormReference(q, c.headDim, qNorm, 1e-6)) : q;
    const kIn = c.qkNorm ? Float32Array.from(headNormReference(k, c.headDim, kNorm, 1e-6)) : k;
    expect(firstPairMismatch(gotQ, ropeReference(qIn, c.m, c.nHeads, c.headDim, c.pos0, invFreq, neox), qIn, c.headDim, neox)).toBeNull();
    expect(firstPairMismatch(gotK, ropeReference(kIn, c.m, c.nKvHeads, c.headDim, c.pos0, invFreq, neox), kIn, c.headDim, neox)).toBeNull();
    // The cache holds exactly the rotated k and the v at positions pos0.., and nothing else changed.
    let cacheMismatch: string | null = null;
    for (let h = 0; h < c.nKvHeads && !cacheMismatch; h++) {
      for (let p = 0; p < maxSeq && !cacheMismatch; p++) {
        const t = p - c.pos0;
        for (let i = 0; i < c.headDim; i++) {
          const at = (h * maxSeq + p) * c.headDim + i;
          const from = (t * c.nKvHeads + h) * c.headDim + i;
          const [wantK, wantV] = t >= 0 && t < c.m ? [gotK[from], v[from]] : [-7, -7];
          if (kCache[at] !== wantK || vCache[at] !== wantV) {
            cacheMismatch = `kv head ${h} position ${p} element ${i}: K ${kCache[at]} (want ${wantK}), V ${vCache[at]} (want ${wantV})`;
            break;
          }
        }
      }
    }
    expect(cacheMismatch).toBeNull();
  });

  test('without the KV cache store, q and k are rotated and nothing else is bound', async () => {
    const random = seededRandom(5);
    const invFreq = ropeInverseFrequencies({ headDim: 32, theta: 1000000 });
    const q = randomF32(random, 2 * 4 * 32);
    const k = randomF32(random, 2 * 2 * 32);
    const [qkvb, fb] = [packQkv(q, k, null, 2, 4, 2, 32), invFreq].map((d) => createStorageBuffer(gpu.device, d));
    const call = { style: 'neox', invFreq: fb, qkv: qkvb, m: 2, nHeads: 4, nKvHeads: 2, headDim: 32, pos0: 11 } as const;
    await kernels.compile(kernels.ropeOps(call));
    const batch = new ComputeBatch(gpu, 'rope test');
    kernels.rope(batch, call);
    batch.submit();
    const { q: gotQ, k: gotK } = unpackQkv(await readF32(gpu.device, qkvb, 2 * 8 * 32), 2, 4, 2, 32);
    for (const b of [qkvb, fb]) b.destroy();
    gpu.throwIfFailed();
    expect(firstPairMismatch(gotQ, ropeReference(q, 2, 4, 32, 11, invFreq, true), q, 32, true)).toBeNull();
    expect(firstPairMismatch(gotK, ropeReference(k, 2, 2, 32, 11, invFreq, true), k, 32, true)).toBeNull();
  });
});

test('params uniforms of many positions are recycled: 700 positions, then an early one again', async () => {
  const random = seededRandom(9);
  const invFreq = ropeInverseFrequencies({ headDim: 32, theta: 10000 });
  const scratch = createStorageBuffer(gpu.device, randomF32(random, 8 * 32));
  const freq = createStorageBuffer(gpu.device, invFreq);
  await kernels.compile(kernels.ropeOps({ style: 'neox', invFreq: freq, qkv: scratch, m: 1, nHeads: 4, nKvHeads: 2, headDim: 32 }));
  for (let start = 0; start < 700; start += 100) {
    const batch = new ComputeBatch(gpu, 'many positions');
    for (let pos0 = start; pos0 < start + 100; pos0++) {
      kernels.rope(batch, { style: 'neox', invFreq: freq, qkv: scratch, m: 1, nHeads: 4, nKvHeads: 2, headDim: 32, pos0 });
    }
    batch.submit();
  }
  const q = randomF32(random, 4 * 32);
  const k = randomF32(random, 2 * 32);
  const qkvb = createStorageBuffer(gpu.device, packQkv(q, k, null, 1, 4, 2, 32));
  const batch = new ComputeBatch(gpu, 'early position again');
  kernels.rope(batch, { style: 'neox', invFreq: freq, qkv: qkvb, m: 1, nHeads: 4, nKvHeads: 2, headDim: 32, pos0: 3 });
  batch.submit();
  const gotQ = unpackQkv(await readF32(gpu.device, qkvb, 8 * 32), 1, 4, 2, 32).q;
  for (const b of [scratch, freq, qkvb]) b.destroy();
  gpu.throwIfFailed();
  expect(firstPairMismatch(gotQ, ropeReference(q, 1, 4, 32, 3, invFreq, true), q, 32, true)).toBeNull();
});

interface AttentionCase {
  headDim: number;
  nHeads: number;
  nKvHeads: number;
  m: number;
  pos0: number;
}

describe('attention', () => {
  const cases: AttentionCase[] = [
    { headDim: 32, nHeads: 4, nKvHeads: 2, m: 1, pos0: 0 }, // decode, context 1
    { headDim: 64, nHeads: 4, nKvHeads: 1, m: 1, pos0: 6 }, // decode, context 7
    { headDim: 64, nHeads: 4, nKvHeads: 2, m: 1, pos0: 69 }, // decode, context 70
    { headDim: 32, nHeads: 4, nKvHeads: 1, m: 7, pos0: 0 }, // prefill from empty
    { headDim: 64, nHeads: 4, nKvHeads: 2, m: 5, pos0: 65 }, // prefill after a cached prefix, context 70
    { headDim: 32, nHeads: 4, nKvHeads: 4, m: 17, pos0: 3 },
    { headDim: 128, nHeads: 4, nKvHeads: 1, m: 2, pos0: 68 }, // the Llama head size
  ];
  async function worstError(fk: ForwardKernels, c: AttentionCase): Promise<number> {
    const random = seededRandom(c.headDim + c.m * 31 + c.pos0);
    const maxSeq = 80;
    const q = randomF32(random, c.m * c.nHeads * c.headDim, 2);
    const kCache = randomF32(random, c.nKvHeads * maxSeq * c.headDim, 2);
    const vCache = randomF32(random, c.nKvHeads * maxSeq * c.headDim);
    const buffers = [q, kCache, vCache].map((d) => createStorageBuffer(gpu.device, d));
    const out = createStorageBuffer(gpu.device, new Float32Array(q.length).fill(NaN));
    const call = { q: buffers[0], kCache: buffers[1], vCache: buffers[2], out, ...c, maxSeq };
    const batch = new ComputeBatch(gpu, 'attention test');
    const partials = await recordAttention(fk, batch, call);
    batch.submit();
    const got = await readF32(gpu.device, out, q.length);
    for (const b of [...buffers, out, partials]) b?.destroy();
    gpu.throwIfFailed();
    const expected = attentionReference(q, kCache, vCache, { ...c, maxSeq, scale: 1 / Math.sqrt(c.headDim) });
    let worst = 0;
    for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(got[i] - expected[i]));
    return worst; // NaN (an unwritten output) fails every comparison
  }

  test.each(cases)('%o', async (c) => {
    expect(await worstError(kernels, c)).toBeLessThanOrEqual(1e-6); // max |v| = 1; measured <= 2.2e-7 on SwiftShader
  });

  test('decode split over positions (flash-decoding) and merged by attention_combine', async () => {
    const split = new ForwardKernels(gpu, { shapes: { attention: { WORKGROUP_SIZE: 4, SPLIT_POSITIONS: 8 } }, pipelines: kernels.pipelines });
    for (const c of [
      { headDim: 64, nHeads: 4, nKvHeads: 2, m: 1, pos0: 69 }, // 9 splits, the last of 6 positions
      { headDim: 32, nHeads: 4, nKvHeads: 1, m: 1, pos0: 7 }, // exactly one split's worth: not split
      { headDim: 32, nHeads: 4, nKvHeads: 2, m: 1, pos0: 8 }, // 2 splits, the second of 1 position
      { headDim: 128, nHeads: 4, nKvHeads: 4, m: 1, pos0: 40 },
      { headDim: 64, nHeads: 4, nKvHeads: 2, m: 3, pos0: 60 }, // prefill: never split
    ]) {
      expect(await worstError(split, c)).toBeLessThanOrEqual(1e-6);
    }
    split.destroy();
  });

  // A decode step's query heads taken up to HEADS at a time per invocation (each K/V read serving them all): groups
  // that split evenly and unevenly (7 -> 4 + 3, 5 -> 3 + 2), one head per invocation (GPUs' shape), whole and split
  // over positions, with a window and sinks; the decoder's packed qkv rows as q.
  test('decode with a KV group\'s query heads per invocation (HEADS 1-4, 8) or per workgroup (COOPERATIVE), whole, split and capped splits, window and sinks', async () => {
    const cases: AttentionPrefillCase[] = [
      { headDim: 64, nHeads: 14, nKvHeads: 2, m: 1, pos0: 69 }, // Qwen2.5-0.5B's group of 7
      { headDim: 32, nHeads: 5, nKvHeads: 1, m: 1, pos0: 30 },
      { headDim: 32, nHeads: 6, nKvHeads: 2, m: 1, pos0: 3 },
      { headDim: 128, nHeads: 16, nKvHeads: 1, m: 1, pos0: 21 },
      { headDim: 64, nHeads: 14, nKvHeads: 2, m: 1, pos0: 50, window: 20, sinks: true },
      { headDim: 32, nHeads: 4, nKvHeads: 4, m: 1, pos0: 0, sinks: true },
    ];
    const failures: object[] = [];
    // attention.wgsl (an invocation per chunk of HEADS heads and split) and attention_decode.wgsl (COOPERATIVE: a
    // workgroup of 32 or 64, positions in tiles of that many; head dim 128 has 4 value groups in 64, 1 in 32).
    const layouts = [
      ...[1, 2, 3, 4, 8].map((HEADS) => ({ WORKGROUP_SIZE: 4, HEADS })),
      { WORKGROUP_SIZE: 32, HEADS: 8, COOPERATIVE: true },
      { WORKGROUP_SIZE: 64, HEADS: 3, COOPERATIVE: true },
    ];
    for (const layout of layouts) {
      // Whole; splits of 8 positions; at most 3 splits (longer ones, of ceil(positions / 3)).
      for (const split of [{ SPLIT_POSITIONS: 0 }, { SPLIT_POSITIONS: 8 }, { SPLIT_POSITIONS: 8, MAX_SPLITS: 3 }]) {
        const fk = new ForwardKernels(gpu, { shapes: { attention: { ...layout, ...split } }, pipelines: kernels.pipelines });
        for (const c of cases) {
          const { maxSeq, qStride, qkv, kCache, vCache, sinks, expected } = attentionReferenceCase(c);
          const buffers = [qkv, kCache, vCache, sinks].map((d) => createStorageBuffer(gpu.device, d));
          const out = createStorageBuffer(gpu.device, new Float32Array(expected.length).fill(NaN));
          const args = { q: buffers[0]!, qStride, kCache: buffers[1]!, vCache: buffers[2]!, out, ...c, maxSeq, sinks: c.sinks ? buffers[3] : undefined };
          await fk.compile(fk.attentionOps({ ...args, partials: out }));
          const batch = new ComputeBatch(gpu, 'grouped decode attention test');
          fk.attention(batch, args);
          batch.submit();
          const got = await readF32(gpu.device, out, expected.length);
          for (const b of [...buffers, out]) b.destroy();
          gpu.throwIfFailed();
          let worst = 0;
          for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(got[i]! - expected[i]!));
          if (!(worst <= 1e-6)) failures.push({ ...layout, ...split, ...c, worst }); // NaN: an output left unwritten
        }
        fk.destroy();
      }
    }
    expect(failures).toEqual([]);
  });

  test('prefill of 7 then decode of 1 through rope + attention equals prefill of 8 (the KV cache path)', async () => {
    const random = seededRandom(77);
    const [headDim, nHeads, nKvHeads, maxSeq] = [32, 4, 2, 16];
    const invFreq = ropeInverseFrequencies({ headDim, theta: 10000 });
    const q = randomF32(random, 8 * nHeads * headDim);
    const k = randomF32(random, 8 * nKvHeads * headDim);
    const v = randomF32(random, 8 * nKvHeads * headDim);
    const slice = (a: Float32Array, from: number, to: number, heads: number) => a.slice(from * heads * headDim, to * heads * headDim);
    const run = async (steps: [number, number][]) => {
      const kCache = createStorageBuffer(gpu.device, new Float32Array(nKvHeads * maxSeq * headDim));
      const vCache = createStorageBuffer(gpu.device, new Float32Array(nKvHeads * maxSeq * headDim));
      const freq = createStorageBuffer(gpu.device, invFreq);
      const outputs: Float32Array[] = [];
      for (const [from, to] of steps) {
        const m = to - from;
        // The decoder's layout: q, k, v heads of a token in one row; attention reads the q part of each row.
        const qkvb = createStorageBuffer(gpu.device, packQkv(slice(q, from, to, nHeads), slice(k, from, to, nKvHeads), slice(v, from, to, nKvHeads), m, nHeads, nKvHeads, headDim));
        const out = createStorageBuffer(gpu.device, new Float32Array(m * nHeads * headDim));
        const shape = { m, nHeads, nKvHeads, headDim, pos0: from };
        const rope = { style: 'interleaved', invFreq: freq, qkv: qkvb, ...shape, kvCache: { kCache, vCache, maxSeq } } as const;
        const attention = { q: qkvb, qStride: (nHeads + 2 * nKvHeads) * headDim, kCache, vCache, out, ...shape, maxSeq };
        await Promise.all([kernels.compile(kernels.ropeOps(rope)), kernels.compile(kernels.attentionOps({ ...attention, partials: attention.out }))]);
        const batch = new ComputeBatch(gpu, 'rope + attention');
        kernels.rope(batch, rope);
        kernels.attention(batch, attention);
        batch.submit();
        outputs.push(await readF32(gpu.device, out, m * nHeads * headDim));
        for (const b of [qkvb, out]) b.destroy();
      }
      for (const b of [kCache, vCache, freq]) b.destroy();
      gpu.throwIfFailed();
      return outputs;
    };
    const [whole] = await run([[0, 8]]);
    const [prefix, last] = await run([[0, 7], [7, 8]]);
    // The same f32 operations in the same order: bit-identical.
    expect(Array.from(prefix)).toEqual(Array.from(whole.subarray(0, prefix.length)));
    expect(Array.from(last)).toEqual(Array.from(whole.subarray(prefix.length)));
  });
});

// attention_prefill.wgsl (ForwardKernels.attentionPrefill, prefill chunks m > 1): KV-tiled, each K/V tile shared
// by a workgroup's query rows of one KV head, with the online softmax, causal mask, window and sinks of attention.wgsl.
// q comes from packed qkv rows (the decoder's layout, q stride > nHeads·headDim). Against the f64 reference:
// |got - ref| <= 1e-6 · max|v| as above (measured <= 3e-7 on SwiftShader).
describe('attention_prefill (KV-tiled prefill)', () => {
  // The shared cases (test/support/attention-prefill-case.ts), and gpt-oss's sinks without a window.
  const cases: AttentionPrefillCase[] = [...ATTENTION_PREFILL_CASES, { headDim: 64, nHeads: 8, nKvHeads: 1, m: 21, pos0: 50, sinks: true }];
  let cpuShapes: ForwardKernels; // this adapter's shapes (SwiftShader: ROWS rows per invocation, KV read directly)
  let gpuShapes: ForwardKernels; // a real GPU's: one row per invocation, K/V tiles staged in workgroup memory
  beforeAll(() => {
    cpuShapes = new ForwardKernels(gpu, { pipelines: kernels.pipelines });
    gpuShapes = new ForwardKernels(gpu, { pipelines: kernels.pipelines, shapes: { attentionPrefill: { WORKGROUP_SIZE: 64, KV_TILE: 16, ROWS: 1, SHARED_KV: true } } });
  });
  afterAll(() => {
    cpuShapes?.destroy();
    gpuShapes?.destroy();
  });

  const prefillError = async (fk: ForwardKernels, c: AttentionPrefillCase) => (await attentionPrefillError(fk, c)).error;

  test.each(cases)('%o', async (c) => {
    expect(await prefillError(cpuShapes, c)).toBeLessThanOrEqual(1e-6);
    expect(await prefillError(gpuShapes, c)).toBeLessThanOrEqual(1e-6);
  });

  test('head dim 256 (8-position tiles in 16 KiB of workgroup memory), with the window and sinks', async () => {
    expect(await prefillError(gpuShapes, { headDim: 256, nHeads: 2, nKvHeads: 1, m: 11, pos0: 30, window: 25, sinks: true })).toBeLessThanOrEqual(1e-6);
  });
});
