// RoPE (interleaved or NEOX pairs, partial rotary, LongRoPE's magnitude) in place on each token's q and k heads,
// optionally after a per-head RMSNorm of q and k (Qwen3) and with the rotated k and v stored into the layer's KV
// cache (shaders/rope.wgsl); positions come from the step uniform (kernel-op.ts StepParams). A forward plan runs it
// for prefill chunks (m > 1) and for heads decode attention does not rotate itself (attention.ts attentionTakesRope).
import { requireBytes, type Binding } from '../dispatch.ts';
import { PARAMS, STEP, type KernelOp } from '../kernel-op.ts';
import * as shaders from '../shaders.ts';
import type { KernelContext } from './context.ts';

export type RopeStyle = 'interleaved' | 'neox';

/** RoPE of m tokens (their positions come from the step: pos0 in the call, the step uniform in a plan). */
export interface RopeArgs {
  style: RopeStyle;
  invFreq: Binding;
  /** [m, nHeads + 2 nKvHeads, headDim]: each token's q, k and v heads; q and k rotated in place. */
  qkv: Binding;
  m: number;
  nHeads: number;
  nKvHeads: number;
  headDim: number;
  kvCache?: { kCache: Binding; vCache: Binding; maxSeq: number };
  /** RMS-normalise each q and k head with these weights ([headDim] each) before rotating it (Qwen3). */
  qkNorm?: { q: Binding; k: Binding; eps: number };
  /** Rotate only the first ropeDims values of each head (partial rotary, phi3); default headDim. */
  ropeDims?: number;
  /** Scale the rotated values by this (LongRoPE's attention factor); default 1. */
  magnitude?: number;
}

export class RopeKernels {
  constructor(private readonly ctx: KernelContext) {}

  /**
   * RoPE in place on q [m, nHeads, headDim] and k [m, nKvHeads, headDim] at the step's positions pos0 .. pos0 + m - 1;
   * with `kvCache`, the rotated k and v also go to the layer's caches [nKvHeads, maxSeq, headDim] at those positions.
   */
  ropeOps(a: RopeArgs): KernelOp[] {
    if (a.m === 0) return [];
    const cache = a.kvCache;
    const heads = a.m * (a.nHeads + 2 * a.nKvHeads);
    requireBytes('rope', 'qkv', a.qkv, heads * a.headDim * 4);
    const norm = a.qkNorm;
    const ropeDims = a.ropeDims ?? a.headDim;
    if (ropeDims % 2 !== 0 || ropeDims <= 0 || ropeDims > a.headDim) throw new RangeError(`rope: ${ropeDims} rotary dimensions must be even, in 2..${a.headDim}`);
    const params = [a.m, a.nHeads, a.nKvHeads, a.headDim, cache?.maxSeq ?? 0, { f32: norm?.eps ?? 0 }, ropeDims, { f32: a.magnitude ?? 1 }];
    const u = (i: 0 | 1 | 2) => this.ctx.unused(i);
    const bindings = [a.invFreq, a.qkv, cache?.kCache ?? u(1), cache?.vCache ?? u(2), norm?.q ?? u(0), norm?.k ?? u(0), PARAMS, STEP];
    const { elementwise } = this.ctx.shapes;
    const constants = { ...elementwise, NEOX: a.style === 'neox', WRITE_KV_CACHE: cache !== undefined, QK_NORM: norm !== undefined };
    return [{ kernel: shaders.rope, constants, bindings, params, workgroups: Math.ceil(heads / elementwise.WORKGROUP_SIZE) }];
  }
}
