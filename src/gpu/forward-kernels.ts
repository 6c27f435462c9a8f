// The forward-pass kernels as one object over one kernel context (kernels/context.ts): a thin facade over the op
// families of src/gpu/kernels/ (products, embedding, rope, attention, activations, moe, argmax). Each `xxxOps`
// method is the family's description of its dispatches as data (kernel-op.ts), which a forward plan
// (src/model/forward-plan.ts) fixes once and `compile()`s; each `xxx` method records that description at once
// (uniforms from the context's allocator) for tests and benches, once `compile(xxxOps(args))` compiled what it records.
// Buffer layouts are in each shaders/*.wgsl header and follow the conventions at the top of dispatch.ts.
import type { GpuContext } from './device.ts';
import type { Binding, ComputeBatch } from './dispatch.ts';
import type { KernelOp } from './kernel-op.ts';
import type { ForwardKernelShapes } from './kernel-shapes.ts';
import { ActivationKernels, type SwigluArgs } from './kernels/activations.ts';
import { ArgmaxKernels, type ArgmaxArgs } from './kernels/argmax.ts';
import { AttentionKernels, type AttentionArgs } from './kernels/attention.ts';
import { KernelSet, type KernelContext, type KernelContextOptions } from './kernels/context.ts';
import { EmbeddingKernels, type EmbeddingArgs } from './kernels/embedding.ts';
import { MoeKernels, type ExpertProductArgs, type MoeRouteArgs } from './kernels/moe.ts';
import { ProductKernels, type ProductArgs, type ProductOptions } from './kernels/products.ts';
import { RopeKernels, type RopeArgs } from './kernels/rope.ts';

export type { ForwardKernelShapes };
export type { SwigluArgs } from './kernels/activations.ts';
export type { ArgmaxArgs } from './kernels/argmax.ts';
export type { AttentionArgs } from './kernels/attention.ts';
export type { EmbeddingArgs, EmbeddingTableType } from './kernels/embedding.ts';
export type { ExpertProductArgs, MoeRouteArgs } from './kernels/moe.ts';
export { PRODUCT_BLOCK_ELEMENTS, type ProductArgs, type ProductVariant, type ProductWeightType } from './kernels/products.ts';
export type { RopeArgs, RopeStyle } from './kernels/rope.ts';

export interface ForwardKernelsOptions extends ProductOptions, Omit<KernelContextOptions, 'shapes'> {
  shapes?: Partial<ForwardKernelShapes>;
  /**
   * GeGLU's GELU as llama.cpp's CPU backend computes it (a table over f16 inputs and results) instead of the f32
   * tanh GELU (shaders/matmul.wgsl, swiglu.wgsl GELU_F16). Default false here; the Decoder turns it on (DecoderOptions.geluF16).
   */
  geluF16?: boolean;
}

export class ForwardKernels extends KernelSet {
  readonly products: ProductKernels;
  readonly embeddings: EmbeddingKernels;
  readonly ropes: RopeKernels;
  readonly attentions: AttentionKernels;
  readonly activations: ActivationKernels;
  readonly moe: MoeKernels;
  readonly argmaxes: ArgmaxKernels;

  /** Over a context of its own (options: its cache, allocator, shapes) or a shared one (options: the families'). */
  constructor(gpu: GpuContext | KernelContext, options: ForwardKernelsOptions = {}) {
    super(gpu, options);
    this.products = new ProductKernels(this.ctx, options);
    this.embeddings = new EmbeddingKernels(this.ctx);
    this.ropes = new RopeKernels(this.ctx);
    this.attentions = new AttentionKernels(this.ctx);
    this.activations = new ActivationKernels(this.ctx, options.geluF16 ?? false);
    this.moe = new MoeKernels(this.ctx, this.products.productSplit);
    this.argmaxes = new ArgmaxKernels(this.ctx);
  }

  /** The product kernels with this device's K_SPLIT reduction. */
  get productSplit(): 'workgroup' | 'subgroup' {
    return this.products.productSplit;
  }
  /** How the F16 products read their halves: 'native' (`shader-f16`) where the device has it, else 'packed'. */
  get f16Weights(): 'native' | 'packed' {
    return this.products.f16Weights;
  }

  /** The weight product (kernels/products.ts ProductKernels.productOps), recorded now. */
  product(batch: ComputeBatch, a: ProductArgs): void {
    this.record(batch, this.productOps(a), a.m);
  }
  productOps(a: ProductArgs): KernelOp[] {
    return this.products.productOps(a);
  }
  /** The sums of squares per token a fused norm's producer of n rows writes (ProductArgs.normOut). */
  normGroups(n: number): number {
    return this.products.normGroups(n);
  }

  /** The embedding lookup (kernels/embedding.ts), recorded now. */
  embedding(batch: ComputeBatch, a: EmbeddingArgs): void {
    this.record(batch, this.embeddingOps(a), a.tokenCount);
  }
  embeddingOps(a: EmbeddingArgs): KernelOp[] {
    return this.embeddings.embeddingOps(a);
  }

  /** RoPE (+ KV-cache store) at positions pos0 .. pos0 + m - 1 (kernels/rope.ts), recorded now. */
  rope(batch: ComputeBatch, a: RopeArgs & { pos0: number }): void {
    if (a.kvCache && a.pos0 + a.m > a.kvCache.maxSeq) {
      throw new RangeError(`rope: positions up to ${a.pos0 + a.m} do not fit a KV cache of ${a.kvCache.maxSeq}`);
    }
    this.record(batch, this.ropeOps(a), a.m, a.pos0);
  }
  /** The ops of `rope` for m tokens at any position (read from the step uniform). */
  ropeOps(a: RopeArgs): KernelOp[] {
    return this.ropes.ropeOps(a);
  }

  /** Attention of m queries at pos0 (kernels/attention.ts), recorded now (split attention into a scratch of these kernels). */
  attention(batch: ComputeBatch, a: AttentionArgs & { pos0: number }): void {
    if (a.pos0 + a.m > a.maxSeq) throw new RangeError(`attention: positions up to ${a.pos0 + a.m} do not fit a KV cache of ${a.maxSeq}`);
    const splits = this.attentionSplits(a.m, a.pos0);
    const partials = splits > 1 ? this.attentions.scratchFor(this.attentions.partialsBytes(a.m, a.pos0, a.nHeads, a.headDim)) : this.ctx.unused(1);
    this.record(batch, this.attentionOps({ ...a, partials }), a.m, a.pos0);
  }
  attentionSplits(m: number, pos0: number): number {
    return this.attentions.attentionSplits(m, pos0);
  }
  attentionPartialsBytes(nHeads: number, headDim: number, maxSeq: number): number {
    return this.attentions.attentionPartialsBytes(nHeads, headDim, maxSeq);
  }
  attentionOps(a: AttentionArgs & { partials: Binding }): KernelOp[] {
    return this.attentions.attentionOps(a);
  }
  /** The prefill form (attention_prefill.wgsl, m > 1), recorded now; m = 1 or KV_TILE = 0: `attention` as it is. */
  attentionPrefill(batch: ComputeBatch, a: AttentionArgs & { pos0: number }): void {
    if (!this.attentions.prefillTiled(a)) return this.attention(batch, a);
    if (a.pos0 + a.m > a.maxSeq) throw new RangeError(`attention: positions up to ${a.pos0 + a.m} do not fit a KV cache of ${a.maxSeq}`);
    this.record(batch, this.attentionPrefillOps({ ...a, partials: this.ctx.unused(1) }), a.m, a.pos0);
  }
  attentionPrefillOps(a: AttentionArgs & { partials: Binding }): KernelOp[] {
    return this.attentions.attentionPrefillOps(a);
  }

  /** SwiGLU / GeGLU of separate gate and up (kernels/activations.ts), recorded now. */
  swiglu(batch: ComputeBatch, a: SwigluArgs): void {
    this.record(batch, this.swigluOps(a), a.m);
  }
  swigluOps(a: SwigluArgs): KernelOp[] {
    return this.activations.swigluOps(a);
  }

  /** The router's choice (kernels/moe.ts), recorded now. */
  moeRoute(batch: ComputeBatch, a: MoeRouteArgs): void {
    this.record(batch, this.moeRouteOps(a), a.m);
  }
  moeRouteOps(a: MoeRouteArgs): KernelOp[] {
    return this.moe.moeRouteOps(a);
  }
  /** The chosen experts' products (kernels/moe.ts), recorded now. */
  expertProduct(batch: ComputeBatch, a: ExpertProductArgs): void {
    this.record(batch, this.expertProductOps(a), a.m);
  }
  expertProductOps(a: ExpertProductArgs): KernelOp[] {
    return this.moe.expertProductOps(a);
  }

  /** Values one argmax stage-0 workgroup reduces. */
  get argmaxChunk(): number {
    return this.argmaxes.argmaxChunk;
  }
  argmaxScratchBytes(count: number): number {
    return this.argmaxes.argmaxScratchBytes(count);
  }
  /** The argmax of `count` values (kernels/argmax.ts), recorded now. */
  argmax(batch: ComputeBatch, a: ArgmaxArgs): void {
    this.record(batch, this.argmaxOps(a), 1);
  }
  argmaxOps(a: ArgmaxArgs): KernelOp[] {
    return this.argmaxes.argmaxOps(a);
  }

  /** Records ops now for a call of m tokens at pos0 (uniforms from the allocator). */
  private record(batch: ComputeBatch, ops: readonly KernelOp[], m: number, pos0 = 0): void {
    this.ctx.record(batch, ops, { m, pos0, splits: this.attentionSplits(m, pos0) });
  }

  /** Releases the attention scratch and, when the context is its own, the context (its uniforms if it owns them, placeholders). */
  override destroy(): void {
    this.attentions.destroy();
    super.destroy();
  }
}
