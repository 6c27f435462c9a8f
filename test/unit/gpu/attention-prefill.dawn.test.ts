// attention_prefill.wgsl as composed per (head dim, rows, lanes) (src/gpu/attention-compose.ts) on Dawn's
// SwiftShader, which has subgroups of exactly 4 lanes: the lane-shared K/V loads (LANES 4, the CPU adapters'
// shape), each lane loading whole rows (LANES 1) and a real GPU's shape (workgroup-memory tiles) against the f64
// reference: causal, after a cached prefix, sliding windows, sinks, groups 1-4, head dims 32/64/128 (and 40: no
// lane sharing, head dim not a multiple of 16). Tolerance as test/gpu/forward-kernels-attention.test.ts:
// |got - ref| <= 1e-6 · max|v| (max|v| = 1). Cases and check: test/support/attention-prefill-case.ts. Dawn needs a Vulkan driver: LD_LIBRARY_PATH=/usr/lib/chromium
// VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { attentionDecodeSharedBytes, attentionDecodeSource, attentionPrefillSource, attentionSource, keepLoops, unrollLoops } from '../../../src/gpu/attention-compose.ts';
import { ForwardKernels } from '../../../src/gpu/forward-kernels.ts';
import type { ForwardKernelShapes } from '../../../src/gpu/kernel-shapes.ts';
import { acquireDawn, type DawnDevice } from '../../support/dawn-decoder.ts';
import { needDawnAdapter } from '../../support/dawn-adapter.ts';
import { ATTENTION_PREFILL_CASES, attentionPrefillError, type AttentionPrefillCase } from '../../support/attention-prefill-case.ts';

// The shared cases, and head dim 40 (no lane sharing, not a multiple of 16).
const CASES: AttentionPrefillCase[] = [...ATTENTION_PREFILL_CASES, { headDim: 40, nHeads: 4, nKvHeads: 2, m: 21, pos0: 30, sinks: true }];

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

describe('attention_prefill composed per head dim, rows and lanes (Dawn)', () => {
  // Every case on the CPU adapters' shape; the others on a few (each composed kernel takes seconds to compile here).
  const few = [CASES[2]!, CASES[4]!, CASES[8]!];
  for (const name of Object.keys(SHAPES)) test(name, { timeout: 600_000 }, async (ctx) => {
    needDawnAdapter(ctx, dawn.gpu, dawn.missing);
    const fk = kernels.get(name)!;
    for (const c of name === 'lanes 4, 8 rows' ? CASES : few) {
      const { error, kernel } = await attentionPrefillError(fk, c);
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

  test('keepLoops takes the marks off the loops over the named bounds only', () => {
    const code = ['  // unroll', '  for (var i = 0u; i < HD4; i++) {', '  }', '  // unroll', '  for (var g = 0u; g < HEADS; g++) {', '  }', ''].join('\n');
    const out = unrollLoops(keepLoops(code, ['HD4']), { HEADS: 2 });
    expect(out).toContain('for (var i = 0u; i < HD4; i++) {');
    expect(out).not.toContain('// unroll');
    expect(out.match(/const g = \du;/g)).toEqual(['const g = 0u;', 'const g = 1u;']);
  });

  test('decode attention: heads written out always, the head dim up to 64 only (RoPE\'s loops, head_at\'s two, never)', () => {
    const headLoops = (code: string) => code.split('for (var i = 0u; i < HD4; i++)').length - 1;
    const small = attentionSource(64, 64, 7).code;
    expect(small).toContain('const HEADS: u32 = 7u;');
    expect(headLoops(small)).toBe(2);
    expect(small).toContain('for (var j = 0u; j < HALF4; j++)');
    expect(small).not.toContain('for (var g = 0u; g < HEADS; g++)');
    const large = attentionSource(128, 64, 4).code;
    expect(large).toContain('const ROT_DIMS: u32 = 64u;');
    expect(headLoops(large)).toBeGreaterThan(2);
    expect(large).not.toContain('for (var g = 0u; g < HEADS; g++)');
    expect(large.split('\n').some((line) => line.trim() === '// unroll')).toBe(false);
    expect(() => attentionSource(64, 64, 9)).toThrow(RangeError);
  });

  test('GPU decode attention (attention_decode.wgsl): consts set, the heads written out, bad shapes refused', () => {
    const code = attentionDecodeSource(128, 64, 7, 64).code;
    for (const line of ['const HEAD_DIM: u32 = 128u;', 'const ROT_DIMS: u32 = 64u;', 'const HEADS: u32 = 7u;', 'const WG: u32 = 64u;']) expect(code).toContain(line);
    expect(code).not.toContain('for (var g = 0u; g < HEADS; g++)');
    expect(code.match(/const g = 6u;/g)?.length).toBeGreaterThan(5);
    expect(() => attentionDecodeSource(128, 128, 2, 16)).toThrow(/at least head dim \/ 4/); // 32 value lanes
    expect(() => attentionDecodeSource(64, 64, 2, 48)).toThrow(RangeError); // not a power of two
    expect(() => attentionDecodeSource(64, 64, 9, 64)).toThrow(RangeError);
    // Its workgroup memory: (heads + 1) head vectors, two [heads][WG] score arrays, heads + 1 norms.
    expect(attentionDecodeSharedBytes(256, 8, 64)).toBe(9 * 1024 + 2 * 8 * 64 * 4 + 9 * 4);
  });
});
