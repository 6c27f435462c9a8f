// One attention_prefill case (ForwardKernels.attentionPrefill, a prefill chunk of m > 1 queries over the KV cache)
// run on the kernels' device against the f64 attentionReference: the cases and the check that
// test/gpu/forward-kernels-attention.test.ts (Chromium) and test/unit/gpu/attention-prefill.dawn.test.ts (Dawn, per
// composed shape) share. q comes from packed qkv rows (the decoder's layout: q stride > nHeads·headDim); K/V
// caches and sinks are seeded-random (max|v| = 1, so the tolerance of the tests is absolute).
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import type { ForwardKernels } from '../../src/gpu/forward-kernels.ts';
import { createStorageBuffer, readF32 } from '../../src/gpu/transfer.ts';
import { attentionReference } from './forward-reference.ts';
import { randomF32, seededRandom } from './kernel-reference.ts';

export interface AttentionPrefillCase {
  headDim: number;
  nHeads: number;
  nKvHeads: number;
  m: number;
  pos0: number;
  window?: number;
  sinks?: boolean;
}

/** The cases both tests run (each adds its own): groups 1-4, head dims 32/64/128, windows, sinks. */
export const ATTENTION_PREFILL_CASES: readonly AttentionPrefillCase[] = [
  { headDim: 32, nHeads: 4, nKvHeads: 2, m: 7, pos0: 0 }, // fewer rows than a workgroup's (or an invocation's)
  { headDim: 32, nHeads: 4, nKvHeads: 2, m: 64, pos0: 0 }, // the bundled model's chunk, from empty
  { headDim: 32, nHeads: 4, nKvHeads: 2, m: 37, pos0: 61 }, // after a cached prefix, m not a multiple of any tile
  { headDim: 64, nHeads: 4, nKvHeads: 1, m: 13, pos0: 65 }, // group 4
  { headDim: 64, nHeads: 6, nKvHeads: 3, m: 33, pos0: 17 }, // group 2 of 3 KV heads
  { headDim: 128, nHeads: 2, nKvHeads: 2, m: 19, pos0: 5 }, // no grouping, the Llama head size
  { headDim: 64, nHeads: 8, nKvHeads: 2, m: 30, pos0: 40, window: 20 }, // window cuts into the cached prefix
  { headDim: 32, nHeads: 4, nKvHeads: 1, m: 70, pos0: 0, window: 3 }, // window shorter than a tile
  { headDim: 64, nHeads: 4, nKvHeads: 2, m: 45, pos0: 9, window: 16, sinks: true }, // gpt-oss's sliding layers
];

/** A case's inputs (seeded by its shape) and the f64 reference output [m, nHeads, headDim]. */
export function attentionReferenceCase(c: AttentionPrefillCase) {
  const random = seededRandom(c.headDim * 7 + c.m * 31 + c.pos0 + (c.window ?? 0));
  const maxSeq = c.pos0 + c.m + 3;
  const qStride = (c.nHeads + 2 * c.nKvHeads) * c.headDim;
  const q = randomF32(random, c.m * c.nHeads * c.headDim, 2);
  const qkv = new Float32Array(c.m * qStride); // each token's q heads, then its (unread, zero) k and v heads
  for (let t = 0; t < c.m; t++) qkv.set(q.subarray(t * c.nHeads * c.headDim, (t + 1) * c.nHeads * c.headDim), t * qStride);
  const kCache = randomF32(random, c.nKvHeads * maxSeq * c.headDim, 2);
  const vCache = randomF32(random, c.nKvHeads * maxSeq * c.headDim);
  const sinks = randomF32(random, c.nHeads, 3);
  const expected = attentionReference(q, kCache, vCache, { ...c, maxSeq, scale: 1 / Math.sqrt(c.headDim), sinks: c.sinks ? sinks : undefined });
  return { maxSeq, qStride, qkv, kCache, vCache, sinks, expected };
}

/**
 * Runs the case through `fk.attentionPrefill` (compiling only its pipeline: composed kernels take seconds each on
 * SwiftShader) and returns the largest |got - reference| (NaN where an output was left unwritten, which fails every
 * comparison) and the name of the kernel that ran.
 */
export async function attentionPrefillError(fk: ForwardKernels, c: AttentionPrefillCase): Promise<{ error: number; kernel: string }> {
  const { device } = fk.gpu;
  const { maxSeq, qStride, qkv, kCache, vCache, sinks, expected } = attentionReferenceCase(c);
  const buffers = [qkv, kCache, vCache, sinks].map((d) => createStorageBuffer(device, d));
  const out = createStorageBuffer(device, new Float32Array(expected.length).fill(NaN));
  const args = { q: buffers[0]!, qStride, kCache: buffers[1]!, vCache: buffers[2]!, out, ...c, maxSeq, sinks: c.sinks ? buffers[3] : undefined };
  const ops = fk.attentionPrefillOps({ ...args, partials: out });
  await fk.compile(ops);
  const batch = new ComputeBatch(fk.gpu, 'attention prefill test');
  fk.attentionPrefill(batch, args);
  batch.submit();
  const got = await readF32(device, out, expected.length);
  for (const b of [...buffers, out]) b.destroy();
  fk.gpu.throwIfFailed();
  let error = 0;
  for (let i = 0; i < expected.length; i++) error = Math.max(error, Math.abs(got[i]! - expected[i]!));
  return { error, kernel: ops[0]!.kernel.name };
}
