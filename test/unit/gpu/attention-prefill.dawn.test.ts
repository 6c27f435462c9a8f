// attention_prefill.wgsl as composed per (head dim, rows, lanes) (src/gpu/attention-prefill-kernel.ts) on Dawn's
// SwiftShader, which has subgroups of exactly 4 lanes: the lane-shared K/V loads (LANES 4, the CPU adapters'
// shape), each lane loading whole rows (LANES 1) and a real GPU's shape (workgroup-memory tiles) against the f64
// reference: causal, after a cached prefix, sliding windows, sinks, groups 1-4, head dims 32/64/128 (and 40: no
// lane sharing, head dim not a multiple of 16). Tolerance as test/gpu/forward-kernels-attention.test.ts:
// |got - ref| <= 1e-6 · max|v| (max|v| = 1). Dawn needs a Vulkan driver: LD_LIBRARY_PATH=/usr/lib/chromium
// VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { attentionPrefillSource, unrollLoops } from '../../../src/gpu/attention-prefill-kernel.ts';
import { ComputeBatch } from '../../../src/gpu/dispatch.ts';
import { ForwardKernels } from '../../../src/gpu/forward-kernels.ts';
import type { ForwardKernelShapes } from '../../../src/gpu/kernel-shapes.ts';
import { createStorageBuffer, readF32 } from '../../../src/gpu/transfer.ts';
import { acquireDawn, type DawnDevice } from '../../support/dawn-decoder.ts';
import { needDawnAdapter } from '../../support/dawn-adapter.ts';
import { attentionReference } from '../../support/forward-reference.ts';
import { randomF32, seededRandom } from '../../support/kernel-reference.ts';

interface Case {
  headDim: number;
  nHeads: number;
  nKvHeads: number;
  m: number;
  pos0: number;
  window?: number;
  sinks?: boolean;
}

const CASES: Case[] = [
  { headDim: 32, nHeads: 4, nKvHeads: 2, m: 7, pos0: 0 }, // fewer rows than one invocation's
  { headDim: 32, nHeads: 4, nKvHeads: 2, m: 64, pos0: 0 }, // the bundled model's chunk, from empty
  { headDim: 32, nHeads: 4, nKvHeads: 2, m: 37, pos0: 61 }, // after a cached prefix, no tile multiple
  { headDim: 64, nHeads: 4, nKvHeads: 1, m: 13, pos0: 65 }, // group 4
  { headDim: 64, nHeads: 6, nKvHeads: 3, m: 33, pos0: 17 }, // group 2 of 3 KV heads
  { headDim: 128, nHeads: 2, nKvHeads: 2, m: 19, pos0: 5 }, // no grouping
  { headDim: 64, nHeads: 8, nKvHeads: 2, m: 30, pos0: 40, window: 20 }, // window cuts into the prefix
  { headDim: 32, nHeads: 4, nKvHeads: 1, m: 70, pos0: 0, window: 3 }, // window shorter than a step
  { headDim: 64, nHeads: 4, nKvHeads: 2, m: 45, pos0: 9, window: 16, sinks: true }, // gpt-oss's sliding layers
  { headDim: 40, nHeads: 4, nKvHeads: 2, m: 21, pos0: 30, sinks: true }, // head dim not a multiple of 16
];

const SHAPES: Record<string, ForwardKernelShapes['attentionPrefill']> = {
  'lanes 4, 8 rows': { WORKGROUP_SIZE: 4, KV_TILE: 16, ROWS: 8, SHARED_KV: false, LANES: 4 },
  'lanes 4, 3 rows, 2 subgroups': { WORKGROUP_SIZE: 8, KV_TILE: 8, ROWS: 3, SHARED_KV: false, LANES: 4 },
  'lanes 1, 4 rows': { WORKGROUP_SIZE: 8, KV_TILE: 16, ROWS: 4, SHARED_KV: false, LANES: 1 },
  'GPU: workgroup-memory tiles': { WORKGROUP_SIZE: 64, KV_TILE: 16, ROWS: 1, SHARED_KV: true },
};

let dawn: DawnDevice = { gpu: null, pipelines: null, missing: 'not acquired' };
const kernels = new Map<string, ForwardKernels>();
beforeAll(async () => {
  dawn = await acquireDawn('attention prefill test');
  if (!dawn.gpu) return;
  for (const [name, shape] of Object.entries(SHAPES)) kernels.set(name, new ForwardKernels(dawn.gpu, { pipelines: dawn.pipelines!, shapes: { attentionPrefill: shape } }));
});
afterAll(() => {
  for (const fk of kernels.values()) fk.destroy();
  dawn.gpu?.destroy();
});

async function prefillError(fk: ForwardKernels, c: Case): Promise<{ error: number; kernel: string }> {
  const gpu = fk.gpu;
  const random = seededRandom(c.headDim * 7 + c.m * 31 + c.pos0 + (c.window ?? 0));
  const maxSeq = c.pos0 + c.m + 3;
  const qStride = (c.nHeads + 2 * c.nKvHeads) * c.headDim; // q in the decoder's packed qkv rows
  const q = randomF32(random, c.m * c.nHeads * c.headDim, 2);
  const qkv = new Float32Array(c.m * qStride);
  for (let t = 0; t < c.m; t++) qkv.set(q.subarray(t * c.nHeads * c.headDim, (t + 1) * c.nHeads * c.headDim), t * qStride);
  const kCache = randomF32(random, c.nKvHeads * maxSeq * c.headDim, 2);
  const vCache = randomF32(random, c.nKvHeads * maxSeq * c.headDim);
  const sinks = randomF32(random, c.nHeads, 3);
  const buffers = [qkv, kCache, vCache, sinks].map((d) => createStorageBuffer(gpu.device, d));
  const out = createStorageBuffer(gpu.device, new Float32Array(q.length).fill(NaN));
  const args = { q: buffers[0]!, qStride, kCache: buffers[1]!, vCache: buffers[2]!, out, ...c, maxSeq, sinks: c.sinks ? buffers[3] : undefined };
  const ops = fk.attentionPrefillOps({ ...args, partials: buffers[3]! });
  await fk.compile(ops); // only this case's pipeline (the composed kernels take seconds each on SwiftShader)
  const batch = new ComputeBatch(gpu, 'attention prefill test');
  fk.attentionPrefill(batch, args);
  batch.submit();
  const got = await readF32(gpu.device, out, q.length);
  for (const b of [...buffers, out]) b.destroy();
  gpu.throwIfFailed();
  const expected = attentionReference(q, kCache, vCache, { ...c, maxSeq, scale: 1 / Math.sqrt(c.headDim), sinks: c.sinks ? sinks : undefined });
  let error = 0;
  for (let i = 0; i < expected.length; i++) error = Math.max(error, Math.abs(got[i]! - expected[i]!));
  return { error, kernel: ops[0]!.kernel.name };
}

describe('attention_prefill composed per head dim, rows and lanes (Dawn)', () => {
  // Every case on the CPU adapters' shape; the others on a few (each composed kernel takes seconds to compile here).
  const few = [CASES[2]!, CASES[4]!, CASES[8]!];
  for (const name of Object.keys(SHAPES)) test(name, { timeout: 600_000 }, async (ctx) => {
    needDawnAdapter(ctx, dawn.gpu, dawn.missing);
    const fk = kernels.get(name)!;
    for (const c of name === 'lanes 4, 8 rows' ? CASES : few) {
      const { error, kernel } = await prefillError(fk, c);
      const lanes = SHAPES[name]!.LANES === 4 && c.headDim % 16 === 0;
      // SwiftShader's subgroups are 4 lanes: the lane-shared kernel is the one that ran where asked.
      expect(kernel.includes('4 lanes'), `${name} ${JSON.stringify(c)}: ${kernel}`).toBe(lanes);
      expect(error, `${name} ${JSON.stringify(c)}`).toBeLessThanOrEqual(1e-6);
    }
  });
});

describe('unrollLoops', () => {
  test('writes out marked loops (nested too) with a const per copy and leaves others', () => {
    const code = ['fn f() {', '  // unroll', '  for (var i = 0u; i < N; i++) {', '    // unroll', '    for (var r = 0u; r < 2u; r++) {', '      a[i * 2u + r] = 1.0;', '    }', '  }', '  for (var j = 0u; j < 3u; j++) {', '  }', '}', ''].join('\n');
    const out = unrollLoops(code, { N: 3 });
    expect(out).not.toContain('for (var i');
    expect(out).not.toContain('for (var r');
    expect(out).toContain('for (var j = 0u; j < 3u; j++) {');
    expect(out.match(/const i = \du;/g)).toEqual(['const i = 0u;', 'const i = 1u;', 'const i = 2u;']);
    expect(out.match(/const r = \du;/g)?.length).toBe(6);
    expect(out.match(/a\[i \* 2u \+ r\] = 1\.0;/g)?.length).toBe(6);
  });

  test('the composed kernel has no marked loop left and its consts set', () => {
    const { code } = attentionPrefillSource(64, 3, 4);
    expect(code.split('\n').some((line) => line.trim() === '// unroll')).toBe(false);
    expect(code.startsWith('enable subgroups;')).toBe(true);
    expect(code).toContain('const HEAD_DIM: u32 = 64u;');
    expect(code).toContain('const ROWS: u32 = 3u;');
    expect(code).toContain('subgroupShuffle(x, lane)');
    expect(() => attentionPrefillSource(40, 2, 4)).toThrow(RangeError);
  });
});
