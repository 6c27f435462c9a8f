// Causal GQA attention over a layer's KV cache, positions from the step uniform (kernel-op.ts StepParams):
// decode (m = 1) through shaders/attention.wgsl, split over positions past SPLIT_POSITIONS into partial records
// merged by attention_combine (flash-decoding; the step's `splits` says which form runs), and prefill chunks
// (m > 1) through attention_prefill.wgsl composed per head dim, rows and lanes (attention-compose.ts:
// tiled over the positions, each K/V tile read once for a workgroup of query rows sharing a KV head). Sliding
// window and attention sinks in both. Decode may also do RoPE (and the q/k norm) and the new key's and value's
// store itself (AttentionArgs.rope), so that a decode step has no rope op (src/model/forward-plan.ts).
import { MAX_ATTENTION_HEADS, attentionDecodeSharedBytes, attentionDecodeSource, attentionPrefillSource, attentionSource } from '../attention-compose.ts';
import { requireBytes, type Binding } from '../dispatch.ts';
import { PARAMS, STEP, type KernelOp, type StepParams } from '../kernel-op.ts';
import * as shaders from '../shaders.ts';
import type { KernelContext, Prepared } from './context.ts';
import type { RopeStyle } from './rope.ts';

/** Attention of m queries (their positions come from the step, as for RopeArgs). */
export interface AttentionArgs {
  q: Binding; qStride?: number; kCache: Binding; vCache: Binding; out: Binding; m: number; nHeads: number; nKvHeads: number; headDim: number; maxSeq: number; scale?: number;
  /** Sliding window: query t attends to positions [pos0 + t + 1 - window, pos0 + t] only (0 or absent: no window). */
  window?: number;
  /** Attention sinks: a logit per head [nHeads] f32 in the softmax's denominator. */
  sinks?: Binding;
  /**
   * RoPE (and Qwen3's q/k norm) done inside decode attention (m = 1, shaders/attention.wgsl ROPE) instead of by a
   * rope op first: q is then the token's unrotated qkv row (q heads, k heads, v heads; qStride its width), and the
   * new key and value go into the caches at pos0 here. As RopeArgs; see attentionTakesRope for the head shapes.
   */
  rope?: AttentionRope;
}

/** RoPE inside decode attention: RopeArgs' rotation fields. */
export interface AttentionRope {
  style: RopeStyle;
  invFreq: Binding;
  ropeDims?: number;
  magnitude?: number;
  qkNorm?: { q: Binding; k: Binding; eps: number };
}

/** Whether decode attention can rotate heads of this shape itself: four pairs at a time (NEOX: rot_dims / 2 a multiple of 4). */
export function attentionTakesRope(style: RopeStyle, headDim: number, ropeDims = headDim): boolean {
  return ropeDims <= headDim && ropeDims % (style === 'neox' ? 8 : 4) === 0;
}

export class AttentionKernels {
  /** Partial results of call-style split attention; grown when needed (replaced ones kept until destroy: work may use them). */
  private scratch: GPUBuffer | null = null;
  private readonly retired: GPUBuffer[] = [];

  constructor(private readonly ctx: KernelContext) {}

  /**
   * The attention kernel of this head dim: attention.wgsl (one invocation per chunk of `heads` query heads and split)
   * or, where the shape says COOPERATIVE and the head dim allows, attention_decode.wgsl (a workgroup per chunk and
   * split); `perWorkgroup` says which (how many chunks and splits one workgroup takes: 1, or WORKGROUP_SIZE).
   */
  private attentionKernel(headDim: number, sinks: boolean, heads: number, rope?: AttentionRope): Prepared & { perWorkgroup: number } {
    const ropeConstants: Record<string, boolean> = rope ? { ROPE: true, NEOX: rope.style === 'neox', QK_NORM: rope.qkNorm !== undefined } : {};
    const ropeDims = rope ? (rope.ropeDims ?? headDim) : headDim;
    const { WORKGROUP_SIZE } = this.ctx.shapes.attention;
    if (this.cooperative(headDim)) {
      return { kernel: attentionDecodeSource(headDim, ropeDims, heads, WORKGROUP_SIZE), constants: { SINKS: sinks, ...ropeConstants }, perWorkgroup: 1 };
    }
    return { kernel: attentionSource(headDim, ropeDims, heads), constants: { WORKGROUP_SIZE, SINKS: sinks, ...ropeConstants }, perWorkgroup: WORKGROUP_SIZE };
  }

  /** Whether attention of this head dim runs attention_decode.wgsl (COOPERATIVE, a power-of-two workgroup of at least head dim / 4). */
  private cooperative(headDim: number): boolean {
    const { COOPERATIVE, WORKGROUP_SIZE } = this.ctx.shapes.attention;
    return COOPERATIVE === true && Number.isInteger(Math.log2(WORKGROUP_SIZE)) && WORKGROUP_SIZE >= headDim / 4;
  }

  /**
   * Query heads per attention invocation (or workgroup, COOPERATIVE) for a KV group of `group` query heads: at most
   * the shape's HEADS, spread evenly over the fewest chunks (a group of 7 with HEADS 4: chunks of 4 and 3, not 4 + 3
   * idle); COOPERATIVE, also few enough for the workgroup memory limit.
   */
  headsPerInvocation(group: number, headDim = 0): number {
    let most = Math.max(1, Math.min(MAX_ATTENTION_HEADS, this.ctx.shapes.attention.HEADS ?? 1));
    if (headDim > 0 && this.cooperative(headDim)) {
      const limit = this.ctx.limits.maxComputeWorkgroupStorageSize;
      while (most > 1 && attentionDecodeSharedBytes(headDim, most, this.ctx.shapes.attention.WORKGROUP_SIZE) > limit) most--;
    }
    return Math.ceil(group / Math.ceil(group / most));
  }

  /** attention_prefill composed for this head dim and ROWS (attention-compose.ts: constant private indices). */
  private attentionPrefillKernel(headDim: number, sinks: boolean): Prepared {
    const { WORKGROUP_SIZE, KV_TILE, SHARED_KV, LANES } = this.ctx.shapes.attentionPrefill;
    // Both tiles within the workgroup memory limit (16 KiB by default): fewer positions per tile for large heads.
    const fit = SHARED_KV ? Math.floor(this.ctx.limits.maxComputeWorkgroupStorageSize / (8 * headDim) / 8) * 8 : KV_TILE;
    const tile = Math.max(8, Math.min(KV_TILE, fit));
    // Lanes sharing K/V loads: only on subgroups of exactly 4 (else, or for other head dims, each lane loads its own).
    const { subgroups, subgroupMinSize, subgroupMaxSize } = this.ctx.features;
    const lanes = LANES === 4 && !SHARED_KV && headDim % 16 === 0 && WORKGROUP_SIZE % 4 === 0 && subgroups && subgroupMinSize === 4 && subgroupMaxSize === 4 ? 4 : 1;
    return { kernel: attentionPrefillSource(headDim, this.prefillRows(headDim), lanes), constants: { WORKGROUP_SIZE, KV_TILE: tile, SHARED_KV, SINKS: sinks } };
  }

  /** How many ways attention splits the positions of a step of m tokens at pos0 (1: not split; only decode splits). */
  attentionSplits(m: number, pos0: number): number {
    const { SPLIT_POSITIONS, MAX_SPLITS } = this.ctx.shapes.attention;
    const positions = pos0 + 1;
    if (m !== 1 || SPLIT_POSITIONS <= 0 || positions <= SPLIT_POSITIONS) return 1;
    return Math.min(Math.ceil(positions / SPLIT_POSITIONS), MAX_SPLITS ?? Infinity);
  }

  /** Bytes of split-attention partials for m queries at pos0 (the call-style scratch). */
  partialsBytes(m: number, pos0: number, nHeads: number, headDim: number): number {
    return m * nHeads * this.attentionSplits(m, pos0) * (headDim + 4) * 4;
  }

  /** Bytes of split-attention partials for m = 1 at positions up to maxSeq (what a decoder allocates once). */
  attentionPartialsBytes(nHeads: number, headDim: number, maxSeq: number): number {
    return this.partialsBytes(1, maxSeq - 1, nHeads, headDim);
  }

  /**
   * The ops of causal GQA attention of q (query t at position pos0 + t: its [nHeads, headDim] heads at t·qStride
   * floats; qStride defaults to nHeads·headDim) over the layer's KV cache positions [0, pos0 + t], into out
   * [m, nHeads, headDim], for m queries at any position: the unsplit form (the step's splits = 1) and, for m = 1,
   * the split form into `partials` with attention_combine (splits > 1), each run by the step's splits. scale
   * defaults to 1/sqrt(headDim).
   */
  attentionOps(a: AttentionArgs & { partials: Binding }): KernelOp[] {
    if (a.m === 0) return [];
    if (a.headDim % 4 !== 0 || a.headDim > 256) throw new RangeError(`attention: head dim ${a.headDim} must be a multiple of 4, at most 256`);
    const qStride = this.checked(a);
    const rope = a.rope;
    const ropeDims = rope?.ropeDims ?? a.headDim;
    if (rope) {
      if (a.m !== 1) throw new RangeError(`attention: RoPE inside attention is for decode steps (m = 1), not m = ${a.m}`);
      if (!attentionTakesRope(rope.style, a.headDim, ropeDims)) throw new RangeError(`attention: ${ropeDims} rotary dimensions of head dim ${a.headDim} (${rope.style}) are not rotated inside attention`);
      if (qStride < (a.nHeads + 2 * a.nKvHeads) * a.headDim) throw new RangeError(`attention: with RoPE inside, q is the qkv row (stride ${qStride} < ${(a.nHeads + 2 * a.nKvHeads) * a.headDim})`);
    }
    const group = a.nHeads / a.nKvHeads;
    const heads = this.headsPerInvocation(group, a.headDim);
    const { perWorkgroup, ...kernel } = this.attentionKernel(a.headDim, a.sinks !== undefined, heads, rope);
    const { SPLIT_POSITIONS } = this.ctx.shapes.attention;
    // Invocations (workgroups, COOPERATIVE) per split: each takes up to `heads` query heads of one KV head.
    const invocations = a.m * a.nKvHeads * Math.ceil(group / heads);
    const params = [
      a.m, a.nHeads, a.nKvHeads, a.headDim, a.maxSeq, { f32: a.scale ?? 1 / Math.sqrt(a.headDim) }, qStride, a.window ?? 0,
      { f32: rope?.qkNorm?.eps ?? 0 }, ropeDims, { f32: rope?.magnitude ?? 1 },
    ];
    const sinkBinding = a.sinks ?? this.ctx.unused(0);
    const ropeBindings = [rope?.invFreq ?? this.ctx.unused(0), rope?.qkNorm?.q ?? this.ctx.unused(0), rope?.qkNorm?.k ?? this.ctx.unused(0)];
    const whole = (s: StepParams) => s.splits === 1;
    const ops: KernelOp[] = [{ ...kernel, bindings: [a.q, a.kCache, a.vCache, a.out, PARAMS, sinkBinding, STEP, ...ropeBindings], params, workgroups: Math.ceil(invocations / perWorkgroup), when: whole }];
    if (a.m > 1 || SPLIT_POSITIONS === 0) return ops;
    const split = (s: StepParams) => s.splits > 1;
    const rows = a.m * a.nHeads;
    const { elementwise } = this.ctx.shapes;
    const combine = { kernel: shaders.attentionCombine, constants: { ...elementwise } };
    ops.push(
      { ...kernel, bindings: [a.q, a.kCache, a.vCache, a.partials, PARAMS, sinkBinding, STEP, ...ropeBindings], params, workgroups: (s) => Math.ceil((invocations * s.splits) / perWorkgroup), when: split },
      { ...combine, bindings: [a.partials, a.out, PARAMS, STEP], params: [rows, a.headDim], workgroups: Math.ceil((rows * a.headDim) / 4 / elementwise.WORKGROUP_SIZE), when: split },
    );
    return ops;
  }

  /** The heads, q stride and sinks checked (both forms); the q stride. */
  private checked(a: AttentionArgs): number {
    if (a.nHeads % a.nKvHeads !== 0) throw new RangeError(`attention: ${a.nHeads} heads is not a multiple of ${a.nKvHeads} KV heads`);
    if (a.sinks) requireBytes('attention', 'sinks', a.sinks, a.nHeads * 4);
    const qStride = a.qStride ?? a.nHeads * a.headDim;
    if (qStride % 4 !== 0 || qStride < a.nHeads * a.headDim) throw new RangeError(`attention: q stride ${qStride} must be a multiple of 4, at least ${a.nHeads * a.headDim}`);
    return qStride;
  }

  /**
   * Query rows per invocation: shapes' ROWS, at most 256 / head dim (the composed kernel is written out over
   * rows x head dim: SwiftShader took ~35 s to compile 8 rows of head dim 128, ~3 s for 8 of 32).
   */
  private prefillRows(headDim: number): number {
    return Math.max(1, Math.min(this.ctx.shapes.attentionPrefill.ROWS, Math.floor(256 / headDim)));
  }

  /** Whether m queries of this head dim take the tiled prefill kernel (m > 1, KV_TILE > 0). */
  prefillTiled(a: { m: number; headDim: number }): boolean {
    return a.m > 1 && this.ctx.shapes.attentionPrefill.KV_TILE > 0 && a.headDim % 4 === 0 && a.headDim <= 256;
  }

  /** The ops of attention for a prefill chunk of m queries at any position (the step uniform's pos0); attentionOps' when not tiled. */
  attentionPrefillOps(a: AttentionArgs & { partials: Binding }): KernelOp[] {
    if (!this.prefillTiled(a)) return this.attentionOps(a);
    const qStride = this.checked(a);
    const params = [a.m, a.nHeads, a.nKvHeads, a.headDim, a.maxSeq, { f32: a.scale ?? 1 / Math.sqrt(a.headDim) }, qStride, a.window ?? 0];
    const { WORKGROUP_SIZE } = this.ctx.shapes.attentionPrefill;
    const workgroups = a.nKvHeads * Math.ceil((a.m * (a.nHeads / a.nKvHeads)) / (WORKGROUP_SIZE * this.prefillRows(a.headDim)));
    const bindings = [a.q, a.kCache, a.vCache, a.out, PARAMS, a.sinks ?? this.ctx.unused(0), STEP];
    return [{ ...this.attentionPrefillKernel(a.headDim, a.sinks !== undefined), bindings, params, workgroups }];
  }

  /** A scratch for call-style split attention of at least `bytes` (grown when needed). */
  scratchFor(bytes: number): GPUBuffer {
    if (!this.scratch || this.scratch.size < bytes) {
      if (this.scratch) this.retired.push(this.scratch);
      const size = Math.ceil(bytes / 256) * 256;
      this.scratch = this.ctx.device.createBuffer({ label: 'attention partials', size, usage: GPUBufferUsage.STORAGE });
    }
    return this.scratch;
  }

  /** Releases the call-style scratch. */
  destroy(): void {
    for (const buffer of this.retired) buffer.destroy();
    this.scratch?.destroy();
    this.retired.length = 0;
    this.scratch = null;
  }
}
