// The forward-pass kernels beyond the row reductions (kernels.ts) as calls: the weight products (matmul/matvec
// for every GPU weight format of src/common/weight-formats.ts, dequantization fused; optional bias and
// residual), embedding lookup from a table of any of those formats, RoPE with the KV-cache store, causal GQA attention (split over positions for long
// decodes; sliding window and attention sinks), SwiGLU, argmax, and the mixture-of-experts router choice and expert
// products (gpt-oss). Each `xxxOps` method describes its dispatches as data (kernel-op.ts: one; split attention and
// argmax over more than one workgroup's values: two) with this adapter's shapes, the params and the workgroup
// count, RoPE and attention taking their positions from the step uniform; a forward plan (src/model/forward-plan.ts)
// fixes them once and `compile()`s their pipelines. Each `xxx` method records its description at once (uniforms
// from the allocator) for tests and benches, once `compile(xxxOps(args))` compiled what it records.
// Buffer layouts are in each shaders/*.wgsl header and follow the conventions at the top of dispatch.ts.
import { attentionPrefillSource } from './attention-prefill-kernel.ts';
import type { GpuContext } from './device.ts';
import { requireBytes, type Binding, type ComputeBatch } from './dispatch.ts';
import { PARAMS, STEP, compileOps, recordOps, type KernelOp, type StepParams } from './kernel-op.ts';
import { forwardKernelShapesFor, type ForwardKernelShapes } from './kernel-shapes.ts';
import { PipelineCache, type KernelSource, type OverrideConstants } from './pipeline-cache.ts';
import * as shaders from './shaders.ts';
import { INT8_PRODUCT_FORMATS, int8ProductKernelsSubgroupSplit, int8ProductKernelsWorkgroupSplit, quantizeActivations, type Int8ProductFormat } from './shaders.ts';
import { withNativeF16Products } from './shaders.ts';
import { UniformAllocator } from './uniforms.ts';
import { GPU_WEIGHT_FORMAT_NAMES, WEIGHT_FORMAT, type GpuWeightFormatName } from '../common/weight-formats.ts';

/** The forward kernels' shapes per adapter (kernel-shapes.ts, the one table). */
export type { ForwardKernelShapes };

/** Weight types of the product kernels: the formats GPU buffers hold (src/common/weight-formats.ts; BF16 is widened to F32 at load). */
export type ProductWeightType = GpuWeightFormatName;
/** Embedding table types in GPU memory (the same formats). */
export type EmbeddingTableType = GpuWeightFormatName;
export type RopeStyle = 'interleaved' | 'neox';
/** 'gated': SwiGLU fused (silu(gate·x)·(up·x)); 'gated-gelu': GeGLU (gelu_tanh(gate·x)·(up·x), Gemma 3). */
export type ProductVariant = 'plain' | 'bias' | 'accumulate' | 'bias+accumulate' | 'gated' | 'gated-gelu';

/** The product kernels' block of a format: 4 weights for the plain formats (F32, F16), else the format's block. */
function productBlock(type: ProductWeightType): { elements: number; bytes: number } {
  const f = WEIGHT_FORMAT[type];
  const elements = Math.max(4, f.blockElements);
  return { elements, bytes: (elements / f.blockElements) * f.gpuBlockBytes };
}

/** Weights per block: k (the row length) must be a multiple of it. */
export const PRODUCT_BLOCK_ELEMENTS: Readonly<Record<ProductWeightType, number>> = Object.fromEntries(
  GPU_WEIGHT_FORMAT_NAMES.map((f) => [f, productBlock(f).elements]),
) as Record<ProductWeightType, number>;
/** Bytes per block in the GPU layout (src/common/weight-formats.ts). */
const PRODUCT_BLOCK_BYTES: Readonly<Record<ProductWeightType, number>> = Object.fromEntries(
  GPU_WEIGHT_FORMAT_NAMES.map((f) => [f, productBlock(f).bytes]),
) as Record<ProductWeightType, number>;

export interface ForwardKernelsOptions {
  shapes?: Partial<ForwardKernelShapes>;
  /**
   * How the products sum over the K_SPLIT invocations of a row group. Default: subgroup shuffles where the device
   * has `subgroups` and its smallest subgroup holds K_SPLIT invocations, else workgroup memory.
   */
  productSplit?: 'workgroup' | 'subgroup';
  /** Share the pipeline cache of `Kernels`. */
  pipelines?: PipelineCache;
  /** Share the params allocator of `Kernels` (the caller then destroys it); by default these kernels own one. */
  uniforms?: UniformAllocator;
  /**
   * GeGLU's GELU as llama.cpp's CPU backend computes it (a table over f16 inputs and results) instead of the f32
   * tanh GELU (shaders/matmul.wgsl, swiglu.wgsl GELU_F16). Default false here; the Decoder turns it on (DecoderOptions.geluF16).
   */
  geluF16?: boolean;
  /** The WGSL language features of the GPU object (default navigator.gpu's; Node: Dawn's create([]).wgslLanguageFeatures). */
  wgslLanguageFeatures?: ReadonlySet<string>;
}

/** The arguments of ForwardKernels.product. */
export interface ProductArgs {
  type: ProductWeightType;
  weights: Binding;
  x: Binding;
  y: Binding;
  m: number;
  n: number;
  k: number;
  bias?: Binding;
  accumulate?: boolean;
  gated?: boolean;
  /** With `gated`: the activation of the gate (default silu: SwiGLU; gelu: GeGLU, tanh-approximated). */
  activation?: 'silu' | 'gelu';
  yOffset?: number;
  yStride?: number;
  /**
   * Scratch for x as int8 blocks (at least m·k·4 bytes, not x): where shapes.int8Activations takes this type and m,
   * the product first quantizes x into it (shaders/quantize_activations.wgsl) and multiplies int8 by int8 (a forward
   * plan passes it; without it the product reads f32 x).
   */
  quantizeInto?: Binding;
}

export interface EmbeddingArgs {
  type: EmbeddingTableType; table: Binding; tokens: Binding; out: Binding; tokenCount: number; dim: number; rowOffset?: number; rowCount?: number;
  /** Multiplies each looked-up value (Gemma: sqrt(hidden)); default 1. */
  scale?: number;
}

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

/** Attention of m queries (their positions come from the step, as for RopeArgs). */
export interface AttentionArgs {
  q: Binding; qStride?: number; kCache: Binding; vCache: Binding; out: Binding; m: number; nHeads: number; nKvHeads: number; headDim: number; maxSeq: number; scale?: number;
  /** Sliding window: query t attends to positions [pos0 + t + 1 - window, pos0 + t] only (0 or absent: no window). */
  window?: number;
  /** Attention sinks: a logit per head [nHeads] f32 in the softmax's denominator. */
  sinks?: Binding;
}

export interface SwigluArgs { gate: Binding; up: Binding; out: Binding; m: number; width: number; activation?: 'silu' | 'gelu' }
export interface MoeRouteArgs { logits: Binding; ids: Binding; weights: Binding; m: number; experts: number; used: number }
export interface ArgmaxArgs { values: Binding; out: Binding; scratch: Binding; count: number }

export interface ExpertProductArgs {
  mode: 'gated' | 'weighted';
  type: ProductWeightType;
  weights: Binding;
  expertStart: number;
  expertCount: number;
  experts: number;
  x: Binding;
  y: Binding;
  bias: Binding;
  ids: Binding;
  routeWeights: Binding;
  m: number;
  used: number;
  n: number;
  k: number;
}

interface Prepared {
  kernel: KernelSource;
  constants: OverrideConstants;
}

export class ForwardKernels {
  readonly shapes: ForwardKernelShapes;
  readonly pipelines: PipelineCache;
  readonly uniforms: UniformAllocator;
  private readonly ownsUniforms: boolean;
  /** Bound in place of unused bindings (bias off, no KV-cache store): distinct, so writable ones never alias. */
  private readonly unused: GPUBuffer[];
  /** Partial results of split attention; grown when needed (replaced ones kept until destroy: work may use them). */
  private attentionScratch: GPUBuffer | null = null;
  private readonly retired: GPUBuffer[] = [];
  /** The product kernels with this device's K_SPLIT reduction. */
  readonly productSplit: 'workgroup' | 'subgroup';
  /** How the F16 products read their halves: 'native' (`shader-f16`, shaders/decode_f16_native.wgsl) where the device has it, else 'packed'. */
  readonly f16Weights: 'native' | 'packed';
  private readonly productKernels: shaders.ProductKernelSet;
  private readonly int8Kernels: Readonly<Record<Int8ProductFormat, KernelSource>>;
  private readonly expertKernels: shaders.ProductKernelSet;
  private readonly geluF16: boolean;

  constructor(
    readonly gpu: GpuContext,
    options: ForwardKernelsOptions = {},
  ) {
    this.shapes = { ...forwardKernelShapesFor(gpu.adapterInfo, gpu.limits, options.wgslLanguageFeatures), ...options.shapes };
    const { TILE_M, K_SPLIT, WORKGROUP_SIZE } = this.shapes.product;
    if (!(TILE_M >= 1 && TILE_M <= 4) || WORKGROUP_SIZE % K_SPLIT !== 0) {
      throw new RangeError(`product shape: TILE_M must be 1..4 and K_SPLIT divide WORKGROUP_SIZE (got ${JSON.stringify(this.shapes.product)})`);
    }
    const subgroupsFit = gpu.features.subgroups && (gpu.adapterInfo.subgroupMinSize ?? 0) >= K_SPLIT;
    this.productSplit = options.productSplit ?? (K_SPLIT > 1 && subgroupsFit ? 'subgroup' : 'workgroup');
    if (this.productSplit === 'subgroup' && !gpu.features.subgroups) throw new RangeError('product split: subgroup reductions need the subgroups feature');
    const products = this.productSplit === 'subgroup' ? shaders.productKernelsSubgroupSplit : shaders.productKernelsWorkgroupSplit;
    this.f16Weights = gpu.features.f16 ? 'native' : 'packed';
    this.productKernels = this.f16Weights === 'native' ? withNativeF16Products(products) : products;
    this.expertKernels = this.productSplit === 'subgroup' ? shaders.expertKernelsSubgroupSplit : shaders.expertKernelsWorkgroupSplit;
    this.int8Kernels = this.productSplit === 'subgroup' ? int8ProductKernelsSubgroupSplit : int8ProductKernelsWorkgroupSplit;
    this.pipelines = options.pipelines ?? new PipelineCache(gpu.device);
    this.geluF16 = options.geluF16 ?? false;
    this.ownsUniforms = options.uniforms === undefined;
    this.uniforms = options.uniforms ?? new UniformAllocator(gpu.device);
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
    this.unused = [0, 1, 2].map((i) => gpu.device.createBuffer({ label: `unused binding ${i}`, size: 16, usage }));
  }

  /** int8: the int8-activation form (Q8_0, Q4_0 only). */
  private productKernel(type: ProductWeightType, tileM: number, variant: ProductVariant, int8 = false): Prepared {
    const { WORKGROUP_SIZE, K_SPLIT } = this.shapes.product;
    const constants = { WORKGROUP_SIZE, K_SPLIT, TILE_M: tileM, HAS_BIAS: variant.startsWith('bias'), ACCUMULATE: variant.endsWith('accumulate'), GATED: variant.startsWith('gated'), GELU: variant === 'gated-gelu', GELU_F16: variant === 'gated-gelu' && this.geluF16 };
    return { kernel: int8 ? this.int8Kernels[type as Int8ProductFormat] : this.productKernels[type], constants };
  }

  /** Whether a product of this type over m tokens takes int8 activations (given a quantizeInto scratch). */
  int8Product(type: ProductWeightType, m: number): boolean {
    const int8 = this.shapes.int8Activations;
    return (INT8_PRODUCT_FORMATS as readonly string[]).includes(type) && int8[type as Int8ProductFormat] && (m === 1 || int8.prefill);
  }

  private quantizeKernel(): Prepared {
    return { kernel: quantizeActivations, constants: { ...this.shapes.elementwise } };
  }

  private embeddingKernel(type: EmbeddingTableType): Prepared {
    return { kernel: shaders.embeddingKernels[type], constants: { ...this.shapes.elementwise } };
  }

  private ropeKernel(style: RopeStyle, writeKvCache: boolean, qkNorm: boolean): Prepared {
    return { kernel: shaders.rope, constants: { ...this.shapes.elementwise, NEOX: style === 'neox', WRITE_KV_CACHE: writeKvCache, QK_NORM: qkNorm } };
  }

  /** headDim 0: the generic pipeline (head dim from the params). */
  private attentionKernel(headDim: number, sinks = false): Prepared {
    return { kernel: shaders.attention, constants: { WORKGROUP_SIZE: this.shapes.attention.WORKGROUP_SIZE, HEAD_DIM: headDim, SINKS: sinks } };
  }

  /** attention_prefill composed for this head dim and ROWS (attention-prefill-kernel.ts: constant private indices). */
  private attentionPrefillKernel(headDim: number, sinks = false): Prepared {
    const { WORKGROUP_SIZE, KV_TILE, SHARED_KV, LANES } = this.shapes.attentionPrefill;
    // Both tiles within the workgroup memory limit (16 KiB by default): fewer positions per tile for large heads.
    const fit = SHARED_KV ? Math.floor(this.gpu.limits.maxComputeWorkgroupStorageSize / (8 * headDim) / 8) * 8 : KV_TILE;
    const tile = Math.max(8, Math.min(KV_TILE, fit));
    // Lanes sharing K/V loads: only on subgroups of exactly 4 (else, or for other head dims, each lane loads its own).
    const { subgroupMinSize, subgroupMaxSize } = this.gpu.adapterInfo;
    const lanes = LANES === 4 && !SHARED_KV && headDim % 16 === 0 && WORKGROUP_SIZE % 4 === 0 && this.gpu.features.subgroups && subgroupMinSize === 4 && subgroupMaxSize === 4 ? 4 : 1;
    return { kernel: attentionPrefillSource(headDim, this.prefillRows(headDim), lanes), constants: { WORKGROUP_SIZE, KV_TILE: tile, SHARED_KV, SINKS: sinks } };
  }

  private expertKernel(type: ProductWeightType, weighted: boolean): Prepared {
    const { WORKGROUP_SIZE, K_SPLIT } = this.shapes.product;
    return { kernel: this.expertKernels[type], constants: { WORKGROUP_SIZE, K_SPLIT, WEIGHTED: weighted } };
  }

  private combineKernel(): Prepared {
    return { kernel: shaders.attentionCombine, constants: { ...this.shapes.elementwise } };
  }

  private swigluKernel(gelu: boolean): Prepared {
    return { kernel: shaders.swiglu, constants: { ...this.shapes.elementwise, GELU: gelu, GELU_F16: gelu && this.geluF16 } };
  }

  private moeRouteKernel(): Prepared {
    return { kernel: shaders.moeRoute, constants: { ...this.shapes.elementwise } };
  }

  private argmaxKernel(stage: 0 | 1): Prepared {
    return { kernel: shaders.argmax, constants: { ...this.shapes.argmax, STAGE: stage } };
  }

  /**
   * Y[m, :] (+)= X[m, k]·Wᵀ (+ bias) for the n rows of W in `weights` (a row range of a split tensor), written at
   * columns [yOffset, yOffset + n) of Y rows yStride apart (defaults: 0 and n). m = 1 is the decode matvec.
   * `accumulate` adds into Y (the residual add fused). `gated`: `weights` holds two matrices of n rows, gate then
   * up (a stacked tensor part, see the weight loader's groups), and Y gets silu(gate·x)·(up·x) (SwiGLU fused; no
   * bias or accumulate with it). k must be a multiple of the block size.
   */
  product(batch: ComputeBatch, a: ProductArgs): void {
    this.record(batch, this.productOps(a), a.m);
  }

  /** The ops of `product` (none for an empty product). */
  productOps(a: ProductArgs): KernelOp[] {
    if (a.m === 0 || a.n === 0) return [];
    if (a.gated && (a.bias || a.accumulate)) throw new RangeError(`${a.type} product: a gated product has no bias or accumulate`);
    const matrices = a.gated ? 2 : 1;
    const block = PRODUCT_BLOCK_ELEMENTS[a.type];
    if (a.k % block !== 0) throw new RangeError(`${a.type} product: k = ${a.k} is not a multiple of the block size ${block}`);
    const yOffset = a.yOffset ?? 0;
    const yStride = a.yStride ?? a.n;
    requireBytes(`${a.type} product`, 'weights', a.weights, ((matrices * a.n * a.k) / block) * PRODUCT_BLOCK_BYTES[a.type]);
    requireBytes(`${a.type} product`, 'x', a.x, a.m * a.k * 4);
    requireBytes(`${a.type} product`, 'y', a.y, ((a.m - 1) * yStride + yOffset + a.n) * 4);
    if (a.bias) requireBytes(`${a.type} product`, 'bias', a.bias, (yOffset + a.n) * 4);
    const tileM = a.m === 1 ? 1 : this.shapes.product.TILE_M;
    const variant: ProductVariant = a.gated ? (a.activation === 'gelu' ? 'gated-gelu' : 'gated') : a.bias ? (a.accumulate ? 'bias+accumulate' : 'bias') : a.accumulate ? 'accumulate' : 'plain';
    const rowsPerGroup = (4 * this.shapes.product.WORKGROUP_SIZE) / this.shapes.product.K_SPLIT;
    const workgroups = Math.ceil(a.n / rowsPerGroup) * Math.ceil(a.m / tileM);
    const params = [a.n, a.k, a.m, yOffset, yStride];
    if (a.quantizeInto && this.int8Product(a.type, a.m)) {
      // x as int8 blocks in the scratch (the same m·k·4 bytes hold them), then the int8 body reads them as its x.
      requireBytes(`${a.type} product`, 'quantizeInto', a.quantizeInto, a.m * a.k * 4);
      return [
        ...this.quantizeOps(a.x, a.quantizeInto, a.m, a.k),
        { ...this.productKernel(a.type, tileM, variant, true), bindings: [a.weights, a.quantizeInto, a.bias ?? this.unused[0], a.y, PARAMS], params, workgroups },
      ];
    }
    const bindings = [a.weights, a.x, a.bias ?? this.unused[0], a.y, PARAMS];
    return [{ ...this.productKernel(a.type, tileM, variant), bindings, params, workgroups }];
  }

  /** x [m, k] f32 into `out` as q8_0 blocks (shaders/quantize_activations.wgsl's layout; k a multiple of 32). */
  quantizeOps(x: Binding, out: Binding, m: number, k: number): KernelOp[] {
    if (k % 32 !== 0) throw new RangeError(`quantize activations: k = ${k} is not a multiple of 32`);
    requireBytes('quantize activations', 'x', x, m * k * 4);
    requireBytes('quantize activations', 'out', out, m * k * 4);
    const workgroups = Math.ceil((m * k) / 32 / this.shapes.elementwise.WORKGROUP_SIZE);
    return [{ ...this.quantizeKernel(), bindings: [x, out, PARAMS], params: [k, m], workgroups }];
  }

  /**
   * out[t, :] = row tokens[t] of the table, for the rows [rowOffset, rowOffset + rowCount) this binding holds
   * (defaults: the whole table); tokens outside the range leave their output row as it was.
   */
  embedding(batch: ComputeBatch, a: EmbeddingArgs): void {
    this.record(batch, this.embeddingOps(a), a.tokenCount);
  }

  embeddingOps(a: EmbeddingArgs): KernelOp[] {
    if (a.tokenCount === 0) return [];
    const params = [a.dim, a.tokenCount, a.rowOffset ?? 0, a.rowCount ?? 0xffffffff, { f32: a.scale ?? 1 }];
    const workgroups = Math.ceil((a.tokenCount * a.dim) / this.shapes.elementwise.WORKGROUP_SIZE);
    return [{ ...this.embeddingKernel(a.type), bindings: [a.table, a.tokens, a.out, PARAMS], params, workgroups }];
  }

  /**
   * RoPE in place on q [m, nHeads, headDim] and k [m, nKvHeads, headDim] at positions pos0 .. pos0 + m - 1; with
   * `kvCache`, the rotated k and v also go to the layer's caches [nKvHeads, maxSeq, headDim] at those positions.
   */
  rope(batch: ComputeBatch, a: RopeArgs & { pos0: number }): void {
    if (a.kvCache && a.pos0 + a.m > a.kvCache.maxSeq) {
      throw new RangeError(`rope: positions up to ${a.pos0 + a.m} do not fit a KV cache of ${a.kvCache.maxSeq}`);
    }
    this.record(batch, this.ropeOps(a), a.m, a.pos0);
  }

  /** The ops of `rope` for m tokens at any position (read from the step uniform). */
  ropeOps(a: RopeArgs): KernelOp[] {
    if (a.m === 0) return [];
    const cache = a.kvCache;
    const heads = a.m * (a.nHeads + 2 * a.nKvHeads);
    requireBytes('rope', 'qkv', a.qkv, heads * a.headDim * 4);
    const norm = a.qkNorm;
    const ropeDims = a.ropeDims ?? a.headDim;
    if (ropeDims % 2 !== 0 || ropeDims <= 0 || ropeDims > a.headDim) throw new RangeError(`rope: ${ropeDims} rotary dimensions must be even, in 2..${a.headDim}`);
    const params = [a.m, a.nHeads, a.nKvHeads, a.headDim, cache?.maxSeq ?? 0, { f32: norm?.eps ?? 0 }, ropeDims, { f32: a.magnitude ?? 1 }];
    const bindings = [a.invFreq, a.qkv, cache?.kCache ?? this.unused[1], cache?.vCache ?? this.unused[2], norm?.q ?? this.unused[0], norm?.k ?? this.unused[0], PARAMS, STEP];
    const kernel = this.ropeKernel(a.style, cache !== undefined, norm !== undefined);
    return [{ ...kernel, bindings, params, workgroups: Math.ceil(heads / this.shapes.elementwise.WORKGROUP_SIZE) }];
  }

  /**
   * Causal GQA attention of q (query t at position pos0 + t: its [nHeads, headDim] heads at t·qStride floats;
   * qStride defaults to nHeads·headDim) over the layer's KV cache positions [0, pos0 + t], into out
   * [m, nHeads, headDim]. scale defaults to 1/sqrt(headDim).
   */
  attention(batch: ComputeBatch, a: AttentionArgs & { pos0: number }): void {
    if (a.pos0 + a.m > a.maxSeq) throw new RangeError(`attention: positions up to ${a.pos0 + a.m} do not fit a KV cache of ${a.maxSeq}`);
    const splits = this.attentionSplits(a.m, a.pos0);
    const partials = splits > 1 ? this.scratchFor(a.m * a.nHeads * splits * (a.headDim + 4) * 4) : this.unused[1];
    this.record(batch, this.attentionOps({ ...a, partials }), a.m, a.pos0);
  }

  /** How many ways attention splits the positions of a step of m tokens at pos0 (1: not split; only decode splits). */
  attentionSplits(m: number, pos0: number): number {
    const { SPLIT_POSITIONS } = this.shapes.attention;
    const positions = pos0 + 1;
    return m === 1 && SPLIT_POSITIONS > 0 && positions > SPLIT_POSITIONS ? Math.ceil(positions / SPLIT_POSITIONS) : 1;
  }

  /** Bytes of split-attention partials for m = 1 at positions up to maxSeq (what a decoder allocates once). */
  attentionPartialsBytes(nHeads: number, headDim: number, maxSeq: number): number {
    return nHeads * this.attentionSplits(1, maxSeq - 1) * (headDim + 4) * 4;
  }

  /**
   * The ops of `attention` for m queries at any position: the unsplit form (the step's splits = 1) and, for
   * m = 1, the split form into `partials` with attention_combine (splits > 1), each run by the step's splits.
   */
  attentionOps(a: AttentionArgs & { partials: Binding }): KernelOp[] {
    if (a.m === 0) return [];
    if (a.headDim % 4 !== 0 || a.headDim > 256) throw new RangeError(`attention: head dim ${a.headDim} must be a multiple of 4, at most 256`);
    if (a.nHeads % a.nKvHeads !== 0) throw new RangeError(`attention: ${a.nHeads} heads is not a multiple of ${a.nKvHeads} KV heads`);
    const scale = a.scale ?? 1 / Math.sqrt(a.headDim);
    const sinks = a.sinks !== undefined;
    if (sinks) requireBytes('attention', 'sinks', a.sinks!, a.nHeads * 4);
    const kernel = { ...this.attentionKernel(a.headDim, sinks), fallback: this.attentionKernel(0, sinks).constants };
    const { WORKGROUP_SIZE, SPLIT_POSITIONS } = this.shapes.attention;
    const qStride = a.qStride ?? a.nHeads * a.headDim;
    if (qStride % 4 !== 0 || qStride < a.nHeads * a.headDim) throw new RangeError(`attention: q stride ${qStride} must be a multiple of 4, at least ${a.nHeads * a.headDim}`);
    if (SPLIT_POSITIONS % 4 !== 0) throw new RangeError(`attention: SPLIT_POSITIONS ${SPLIT_POSITIONS} must be a multiple of 4`);
    const params = [a.m, a.nHeads, a.nKvHeads, a.headDim, a.maxSeq, { f32: scale }, SPLIT_POSITIONS, qStride, a.window ?? 0];
    const sinkBinding = a.sinks ?? this.unused[0];
    const whole = (s: StepParams) => s.splits === 1;
    const ops: KernelOp[] = [{ ...kernel, bindings: [a.q, a.kCache, a.vCache, a.out, PARAMS, sinkBinding, STEP], params, workgroups: Math.ceil((a.m * a.nHeads) / WORKGROUP_SIZE), when: whole }];
    if (a.m > 1 || SPLIT_POSITIONS === 0) return ops;
    const split = (s: StepParams) => s.splits > 1;
    const rows = a.m * a.nHeads;
    ops.push(
      { ...kernel, bindings: [a.q, a.kCache, a.vCache, a.partials, PARAMS, sinkBinding, STEP], params, workgroups: (s) => Math.ceil((rows * s.splits) / WORKGROUP_SIZE), when: split },
      { ...this.combineKernel(), bindings: [a.partials, a.out, PARAMS, STEP], params: [rows, a.headDim], workgroups: Math.ceil((rows * a.headDim) / 4 / this.shapes.elementwise.WORKGROUP_SIZE), when: split },
    );
    return ops;
  }

  /**
   * The same attention for a prefill chunk (m > 1) through attention_prefill.wgsl: tiled over the positions, each
   * K/V tile read once for a workgroup of query rows sharing a KV head (flash-attention style, no scratch).
   * m = 1, or shapes.attentionPrefill.KV_TILE = 0: `attention` as it is.
   */
  attentionPrefill(batch: ComputeBatch, a: AttentionArgs & { pos0: number }): void {
    if (!this.prefillTiled(a)) return this.attention(batch, a);
    if (a.pos0 + a.m > a.maxSeq) throw new RangeError(`attention: positions up to ${a.pos0 + a.m} do not fit a KV cache of ${a.maxSeq}`);
    this.record(batch, this.attentionPrefillOps({ ...a, partials: this.unused[1] }), a.m, a.pos0);
  }

  /**
   * Query rows per invocation: shapes' ROWS, at most 256 / head dim (the composed kernel is written out over
   * rows x head dim: SwiftShader took ~35 s to compile 8 rows of head dim 128, ~3 s for 8 of 32).
   */
  private prefillRows(headDim: number): number {
    return Math.max(1, Math.min(this.shapes.attentionPrefill.ROWS, Math.floor(256 / headDim)));
  }

  private prefillTiled(a: { m: number; headDim: number }): boolean {
    return a.m > 1 && this.shapes.attentionPrefill.KV_TILE > 0 && a.headDim % 4 === 0 && a.headDim <= 256;
  }

  /** The ops of `attentionPrefill` for m queries at any position (the step uniform's pos0); attentionOps' when not tiled. */
  attentionPrefillOps(a: AttentionArgs & { partials: Binding }): KernelOp[] {
    if (!this.prefillTiled(a)) return this.attentionOps(a);
    if (a.nHeads % a.nKvHeads !== 0) throw new RangeError(`attention: ${a.nHeads} heads is not a multiple of ${a.nKvHeads} KV heads`);
    const qStride = a.qStride ?? a.nHeads * a.headDim;
    if (qStride % 4 !== 0 || qStride < a.nHeads * a.headDim) throw new RangeError(`attention: q stride ${qStride} must be a multiple of 4, at least ${a.nHeads * a.headDim}`);
    if (a.sinks) requireBytes('attention', 'sinks', a.sinks, a.nHeads * 4);
    const params = [a.m, a.nHeads, a.nKvHeads, a.headDim, a.maxSeq, { f32: a.scale ?? 1 / Math.sqrt(a.headDim) }, qStride, a.window ?? 0];
    const { WORKGROUP_SIZE } = this.shapes.attentionPrefill;
    const workgroups = a.nKvHeads * Math.ceil((a.m * (a.nHeads / a.nKvHeads)) / (WORKGROUP_SIZE * this.prefillRows(a.headDim)));
    const bindings = [a.q, a.kCache, a.vCache, a.out, PARAMS, a.sinks ?? this.unused[0], STEP];
    return [{ ...this.attentionPrefillKernel(a.headDim, a.sinks !== undefined), bindings, params, workgroups }];
  }

  private scratchFor(bytes: number): GPUBuffer {
    if (!this.attentionScratch || this.attentionScratch.size < bytes) {
      if (this.attentionScratch) this.retired.push(this.attentionScratch);
      const size = Math.ceil(bytes / 256) * 256;
      this.attentionScratch = this.gpu.device.createBuffer({ label: 'attention partials', size, usage: GPUBufferUsage.STORAGE });
    }
    return this.attentionScratch;
  }

  /**
   * out[t, i] = silu(gate[t, i]) * up[t, i] for m tokens of `width` (gate and up matrices that are not stacked;
   * stacked ones use the gated product).
   */
  swiglu(batch: ComputeBatch, a: SwigluArgs): void {
    this.record(batch, this.swigluOps(a), a.m);
  }

  swigluOps(a: SwigluArgs): KernelOp[] {
    if (a.m === 0) return [];
    const workgroups = Math.ceil((a.m * a.width) / this.shapes.elementwise.WORKGROUP_SIZE);
    return [{ ...this.swigluKernel(a.activation === 'gelu'), bindings: [a.gate, a.up, a.out, PARAMS], params: [a.width, a.m], workgroups }];
  }

  /**
   * The router's choice (gpt-oss): for each of m tokens, the `used` largest of its `experts` logits ([m, experts]
   * f32) into ids [m, used] u32 (largest first) and the softmax over those chosen logits into weights [m, used].
   */
  moeRoute(batch: ComputeBatch, a: MoeRouteArgs): void {
    this.record(batch, this.moeRouteOps(a), a.m);
  }

  moeRouteOps(a: MoeRouteArgs): KernelOp[] {
    if (a.m === 0) return [];
    if (a.used < 1 || a.used > Math.min(16, a.experts)) throw new RangeError(`moe route: ${a.used} experts used of ${a.experts} (1..min(16, experts))`);
    requireBytes('moe route', 'logits', a.logits, a.m * a.experts * 4);
    requireBytes('moe route', 'ids', a.ids, a.m * a.used * 4);
    requireBytes('moe route', 'weights', a.weights, a.m * a.used * 4);
    const workgroups = Math.ceil(a.m / this.shapes.elementwise.WORKGROUP_SIZE);
    return [{ ...this.moeRouteKernel(), bindings: [a.logits, a.ids, a.weights, PARAMS], params: [a.m, a.experts, a.used], workgroups }];
  }

  /**
   * The expert products of one part of an expert tensor (experts [expertStart, expertStart + expertCount) of
   * `experts`, n rows of k each, in `weights`), for the experts moeRoute chose (shaders/matmul_experts.wgsl):
   * 'gated': `weights` holds the part's gate experts then its up experts; y [m·used, n] gets swiglu_oai(gate·x +
   * bias, up·x + bias) per (token, slot) whose expert is in the part (bias: gate biases [experts, n] then up biases).
   * 'weighted': x is [m·used, k]; y [m, n] += Σ_slots route weight · (W_e·x_slot + bias[e]) over the part's experts.
   */
  expertProduct(batch: ComputeBatch, a: ExpertProductArgs): void {
    this.record(batch, this.expertProductOps(a), a.m);
  }

  expertProductOps(a: ExpertProductArgs): KernelOp[] {
    if (a.m === 0 || a.n === 0) return [];
    const gated = a.mode === 'gated';
    const block = PRODUCT_BLOCK_ELEMENTS[a.type];
    if (a.k % block !== 0) throw new RangeError(`${a.type} expert product: k = ${a.k} is not a multiple of the block size ${block}`);
    if (a.expertStart + a.expertCount > a.experts) throw new RangeError(`${a.type} expert product: experts ${a.expertStart}+${a.expertCount} of ${a.experts}`);
    const what = `${a.type} expert product`;
    requireBytes(what, 'weights', a.weights, (((gated ? 2 : 1) * a.expertCount * a.n * a.k) / block) * PRODUCT_BLOCK_BYTES[a.type]);
    requireBytes(what, 'x', a.x, (gated ? a.m : a.m * a.used) * a.k * 4);
    requireBytes(what, 'y', a.y, (gated ? a.m * a.used : a.m) * a.n * 4);
    requireBytes(what, 'bias', a.bias, (gated ? 2 : 1) * a.experts * a.n * 4);
    requireBytes(what, 'ids', a.ids, a.m * a.used * 4);
    requireBytes(what, 'route weights', a.routeWeights, a.m * a.used * 4);
    const params = [a.n, a.k, a.m, a.used, a.expertStart, a.expertCount, a.experts];
    const rowsPerGroup = (4 * this.shapes.product.WORKGROUP_SIZE) / this.shapes.product.K_SPLIT;
    const workgroups = Math.ceil(a.n / rowsPerGroup) * (gated ? a.m * a.used : a.m);
    return [{ ...this.expertKernel(a.type, !gated), bindings: [a.weights, a.x, a.bias, a.y, PARAMS, a.ids, a.routeWeights], params, workgroups }];
  }

  /** Values one argmax stage-0 workgroup reduces. */
  get argmaxChunk(): number {
    return this.shapes.argmax.WORKGROUP_SIZE * this.shapes.argmax.ITEMS_PER_INVOCATION;
  }

  /** Bytes of the scratch buffer `argmax` needs for `count` values. */
  argmaxScratchBytes(count: number): number {
    return Math.ceil(count / this.argmaxChunk) * 8;
  }

  /**
   * The index of the largest of `count` f32 values (ties to the lowest index) into out[0] (a u32; out[1] gets
   * its value's bits): one pass when count fits one workgroup, else two through `scratch`.
   */
  argmax(batch: ComputeBatch, a: ArgmaxArgs): void {
    this.record(batch, this.argmaxOps(a), 1);
  }

  argmaxOps(a: ArgmaxArgs): KernelOp[] {
    if (a.count === 0) throw new RangeError('argmax of no values');
    const groups = Math.ceil(a.count / this.argmaxChunk);
    if (groups === 1) return [{ ...this.argmaxKernel(0), bindings: [a.values, a.out, PARAMS], params: [a.count], workgroups: 1 }];
    return [
      { ...this.argmaxKernel(0), bindings: [a.values, a.scratch, PARAMS], params: [a.count], workgroups: groups },
      { ...this.argmaxKernel(1), bindings: [a.scratch, a.out, PARAMS], params: [groups], workgroups: 1 },
    ];
  }

  /** Records ops now for a call of m tokens at pos0 (uniforms from the allocator). */
  private record(batch: ComputeBatch, ops: readonly KernelOp[], m: number, pos0 = 0): void {
    recordOps(batch, this.pipelines, this.uniforms, ops, { m, pos0, splits: this.attentionSplits(m, pos0) });
  }

  /** Compiles the pipelines of these ops (a forward plan's prepare). */
  async compile(ops: Iterable<KernelOp>): Promise<void> {
    await compileOps(this.pipelines, ops);
  }

  /** Releases the params uniforms (when these kernels own them), placeholder and scratch buffers. */
  destroy(): void {
    if (this.ownsUniforms) this.uniforms.destroy();
    for (const buffer of [...this.unused, ...this.retired]) buffer.destroy();
    this.attentionScratch?.destroy();
    this.retired.length = 0;
    this.attentionScratch = null;
  }
}
