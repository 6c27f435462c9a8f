// The decoder graph of the llama / qwen2 / qwen3 family and gpt-oss on WebGPU: the activations, the KV cache and the
// dispatch sequence of one forward step, recorded into ONE command buffer per step:
//   embedding -> per layer [rmsnorm, q/k/v products (+bias), q/k RMSNorm (qwen3) + RoPE + KV-cache store,
//   causal GQA attention, output product + residual, rmsnorm, gate/up products with SwiGLU (one dispatch), down product +
//   residual] -> final rmsnorm -> LM head -> argmax. gemma3: embeddings scaled, GeGLU in place of SwiGLU, a norm on
//   the attention and on the feed-forward output before each residual add (the product then writes a scratch row and
//   the norm adds into x), sliding-window layers with their own RoPE base. gpt-oss: q/k/v/o biases, YaRN RoPE, attention sinks, a sliding
//   window on alternate layers, and the mixture-of-experts feed-forward of moe-ffn.ts in place of gate/up/down.
// A step runs m tokens at positions [pos0, pos0 + m): prefill uses matmuls over the prompt (in chunks of at
// most `maxBatch` tokens), decode is m = 1 and reads its input token from the GPU buffer the previous step's
// argmax wrote, so the only thing that comes back to the CPU per token is that id (and the logits, when a
// caller asks for them).
// Products use one kernel skeleton for every weight type (ForwardKernels.product: dequantization, bias and the
// residual add fused), one dispatch per row range of a tensor split over several buffers.
import type { GpuWeightFormatName } from '../common/weight-formats.ts';
import type { GpuContext } from '../gpu/device.ts';
import { GpuError } from '../gpu/device.ts';
import { ComputeBatch } from '../gpu/dispatch.ts';
import { ForwardKernels, PRODUCT_BLOCK_ELEMENTS, type EmbeddingTableType, type ForwardKernelShapes, type ProductVariant } from '../gpu/forward-kernels.ts';
import type { KernelShapes } from '../gpu/kernel-shapes.ts';
import { Kernels } from '../gpu/kernels.ts';
import { PipelineCache } from '../gpu/pipeline-cache.ts';
import { createGpuTimer, type GpuTimer } from '../gpu/timing.ts';
import { createEmptyStorageBuffer, createStorageBuffer } from '../gpu/transfer.ts';
import { UniformAllocator } from '../gpu/uniforms.ts';
import { KvCache } from './kv-cache.ts';
import { layerRopeTheta, layerUsesRope, ropeFactorsFor, layerWindow, type ModelConfig } from './model-config.ts';
import { MoeFeedForward, type MoeWeights } from './moe-ffn.ts';

export type { GpuExperts, MoeWeights } from './moe-ffn.ts';
import { ropeInverseFrequencies, yarnMagnitude } from './rope-frequencies.ts';

/** Weight types as they sit in GPU memory (BF16 arrives widened to F32). */
/** The weight formats GPU buffers hold (src/common/weight-formats.ts). */
export type GpuWeightType = GpuWeightFormatName;

/** One buffer of a matrix: rows [rowStart, rowStart + rowCount) in the GPU layout of its type. */
export interface GpuWeightPart {
  buffer: GPUBuffer;
  rowStart: number;
  rowCount: number;
}

/** A weight matrix [rows, cols] (cols contiguous) in GPU memory, possibly split by rows over several buffers. */
export interface GpuMatrix {
  name: string;
  type: GpuWeightType;
  rows: number;
  cols: number;
  /**
   * Matrices of this shape held together (default 1): each part's buffer holds its rows of each in turn (the
   * weight loader's tensor groups; the gate and up matrices stack as 2).
   */
  stacked?: number;
  parts: GpuWeightPart[];
}

/** A layer's q, k and v projections: one concatenated matrix (rows q, then k, then v; one dispatch), or apart. */
export type QkvWeights = { concatenated: GpuMatrix } | { q: GpuMatrix; k: GpuMatrix; v: GpuMatrix };

/**
 * A layer's SwiGLU input projections: stacked in shared buffers (one dispatch computes silu(gate·x)·(up·x)), or
 * apart when a file gives them different types (two products and the SwiGLU kernel).
 */
export type GateUpWeights = { stacked: GpuMatrix } | { gate: GpuMatrix; up: GpuMatrix };

/** An f32 vector (norm weights, biases) in GPU memory. */
export interface GpuVector {
  name: string;
  buffer: GPUBuffer;
  length: number;
}

export interface DecoderLayerWeights {
  attnNorm: GpuVector;
  qkv: QkvWeights;
  bq?: GpuVector;
  bk?: GpuVector;
  bv?: GpuVector;
  qNorm?: GpuVector;
  kNorm?: GpuVector;
  wo: GpuMatrix;
  /** The output projection's bias (gpt-oss). */
  bo?: GpuVector;
  /** Attention-sink logits [heads] (gpt-oss). */
  sinks?: GpuVector;
  ffnNorm: GpuVector;
  /** Gemma 3: the RMSNorm of the attention output before its residual add (blk.N.post_attention_norm). */
  postAttnNorm?: GpuVector;
  /** Gemma 3: the RMSNorm of the feed-forward output before its residual add (blk.N.post_ffw_norm). */
  postFfnNorm?: GpuVector;
  /** The dense feed-forward (absent in mixture-of-experts layers, which have `moe`). */
  gateUp?: GateUpWeights;
  wDown?: GpuMatrix;
  moe?: MoeWeights;
}

export interface DecoderWeights {
  tokenEmbedding: GpuMatrix;
  layers: DecoderLayerWeights[];
  outputNorm: GpuVector;
  /** The LM head; the token embedding itself when tied. */
  lmHead: GpuMatrix;
  /** GGUF rope_freqs (Llama 3): per-pair frequency divisors, read on the CPU. */
  ropeFreqFactors?: Float32Array;
}

export interface DecoderOptions {
  /** Positions the KV cache holds (the served context length). */
  maxSeq: number;
  /** Most tokens per prefill step (activations are sized for it). Default 64. */
  maxBatch?: number;
  /** Share compiled pipelines between decoders (several models, tests). */
  pipelines?: PipelineCache;
  /** Override the per-adapter kernel shapes (tests run GPU shapes on a CPU adapter, and the reverse). */
  shapes?: { kernels?: Partial<KernelShapes>; forward?: Partial<ForwardKernelShapes> };
  /** GeGLU's GELU as llama.cpp's CPU backend rounds it (an f16 table): tests against that oracle only. */
  geluF16?: boolean;
}

export type LogitsMode = 'none' | 'last' | 'all';

/**
 * Records, into the step's command buffer, the choice of the next token from the last position's logits
 * (f32 [vocabSize] in `logits`): token id into out[0] as a u32; out[1..3] are free for the chooser (e.g. the
 * chosen token's logprob bits) and come back in StepResult.chosen. The default is argmax (greedy). This is
 * where GPU sampling and constraint masks plug in (issue 5).
 */
export type TokenChooser = (batch: ComputeBatch, a: { logits: GPUBuffer; vocabSize: number; out: GPUBuffer }) => void;

export interface StepResult {
  /** The next token the chooser picked (default: argmax of the last position's logits, the greedy token). */
  nextToken: number;
  /** The 4 u32 words the chooser wrote (word 0 = nextToken; argmax puts the logit's f32 bits in word 1). */
  chosen: Uint32Array;
  /** 'last': one row; 'all': one row per input token. */
  logits?: Float32Array[];
}

function qkvMatrices(q: QkvWeights): GpuMatrix[] {
  return 'concatenated' in q ? [q.concatenated] : [q.q, q.k, q.v];
}

function gateUpMatrices(g: GateUpWeights): GpuMatrix[] {
  return 'stacked' in g ? [g.stacked] : [g.gate, g.up];
}

/** A layer's feed-forward matrices that the dense product kernels read (a mixture of experts: the router). */
function ffnMatrices(l: DecoderLayerWeights): GpuMatrix[] {
  return l.moe ? [l.moe.router] : [...gateUpMatrices(l.gateUp!), l.wDown!];
}

/** The matrices the product kernels read (the token embedding is only looked up, unless it is the LM head). */
function productMatrices(w: DecoderWeights): GpuMatrix[] {
  return [w.lmHead, ...w.layers.flatMap((l) => [...qkvMatrices(l.qkv), l.wo, ...ffnMatrices(l)])];
}

export class Decoder {
  readonly kv: KvCache;
  readonly maxBatch: number;
  private readonly kernels: Kernels;
  /** The params uniforms of both kernel sets (one allocator, one bound). */
  private readonly uniforms: UniformAllocator;
  private readonly fk: ForwardKernels;
  private readonly invFreq: GPUBuffer;
  /** The inverse frequencies of the sliding-window layers' own RoPE base (Gemma 3: 10000), or null. */
  private readonly invFreqSliding: GPUBuffer | null;
  /** A branch's output before its post norm and residual add (Gemma 3's post norms), or null. */
  private readonly branch: GPUBuffer | null;
  /** All-zero inverse frequencies (no rotation) for the layers without RoPE (SmolLM3's NoPE layers), or null. */
  private readonly noRopeFreq: GPUBuffer | null;
  // Activations, f32, sized for maxBatch tokens.
  private readonly x: GPUBuffer;
  private readonly xn: GPUBuffer;
  /** Each token's q, k and v heads in one row [heads + 2 kvHeads, headDim] (the q/k/v products write its columns). */
  private readonly qkv: GPUBuffer;
  /** Per layer, the q, k and v biases as one vector (Qwen2), indexed like a qkv row; null without biases. */
  private readonly qkvBias: (GPUBuffer | null)[];
  private readonly attn: GPUBuffer;
  /** Separate gate and up outputs, for layers whose gate and up are not stacked (else null). */
  private readonly gate: GPUBuffer | null;
  private readonly up: GPUBuffer | null;
  private readonly act: GPUBuffer;
  /** The mixture-of-experts feed-forward (gpt-oss), or null. */
  private readonly moe: MoeFeedForward | null;
  /** The attention scale: 1/sqrt(headDim), times YaRN's magnitude squared (it scales q and k both). */
  private readonly attentionScale: number;
  /** The last position's hidden state, for the last-only LM head. */
  private readonly xLast: GPUBuffer;
  private readonly logits: GPUBuffer;
  private logitsAll: GPUBuffer | null = null;
  private readonly tokenIds: GPUBuffer;
  /** argmax output: [token id, logit bits]; also the input token of the next decode step. */
  private readonly nextToken: GPUBuffer;
  private readonly argmaxScratch: GPUBuffer;
  private readonly tokenReadback: GPUBuffer;
  /** The token id `nextToken` holds on the GPU (after a successful step), so decode can read it there. */
  private gpuNextToken: number | null = null;
  private destroyed = false;
  /** Dispatches the last step recorded (a decode step after decoding: what one token costs in dispatches). */
  lastStepDispatches = 0;
  /** The chooser of the step being recorded (null: argmax). */
  private chooser: TokenChooser | null = null;
  /** While profiling: every op gets its own timed compute pass. */
  private timer: GpuTimer | null = null;
  /** Rejects with a 'device-lost' GpuError once the device is lost (handled, so it never goes unobserved). */
  private readonly deviceLost: Promise<never>;

  private constructor(
    readonly gpu: GpuContext,
    readonly config: ModelConfig,
    readonly weights: DecoderWeights,
    kv: KvCache,
    options: DecoderOptions,
  ) {
    this.kv = kv;
    this.deviceLost = gpu.lost.then((info) => {
      throw new GpuError('device-lost', `The GPU device was lost (${info.reason}): ${info.message || 'no message'}`);
    });
    this.deviceLost.catch(() => undefined);
    this.maxBatch = options.maxBatch ?? 64;
    const pipelines = options.pipelines ?? new PipelineCache(gpu.device);
    this.uniforms = new UniformAllocator(gpu.device);
    this.kernels = new Kernels(gpu, { pipelines, uniforms: this.uniforms, shapes: options.shapes?.kernels });
    this.fk = new ForwardKernels(gpu, { pipelines, uniforms: this.uniforms, shapes: options.shapes?.forward, geluF16: options.geluF16 });
    const c = config;
    const B = this.maxBatch;
    const device = gpu.device;
    const buf = (label: string, floats: number) => createEmptyStorageBuffer(device, floats * 4, label);
    const inverseFrequencies = (theta: number, label: string) => createStorageBuffer(
      device,
      ropeInverseFrequencies({
        // Partial rotary: the frequencies of the rotated dimensions only (theta^(-2p / ropeDims)).
        headDim: c.ropeDims ?? c.headDim,
        theta,
        freqFactors: ropeFactorsFor(c, options.maxSeq, weights.ropeFreqFactors),
        llama3: !weights.ropeFreqFactors && c.ropeScaling?.type === 'llama3'
          ? { ...c.ropeScaling, originalMaxPositions: c.ropeScaling.originalContextLength }
          : undefined,
        linearScale: c.ropeScaling?.type === 'linear' ? c.ropeScaling.factor : undefined,
        yarn: c.ropeScaling?.type === 'yarn' ? c.ropeScaling : undefined,
      }),
      label,
    );
    this.invFreq = inverseFrequencies(c.ropeTheta, 'rope inv_freq');
    this.invFreqSliding = c.ropeThetaSliding !== undefined && c.slidingWindow ? inverseFrequencies(c.ropeThetaSliding, 'rope inv_freq (sliding layers)') : null;
    this.branch = weights.layers.some((l) => l.postAttnNorm || l.postFfnNorm) ? buf('branch', B * c.hidden) : null;
    this.noRopeFreq = c.noRopeLayers?.length ? createStorageBuffer(device, new Float32Array((c.ropeDims ?? c.headDim) / 2), 'no-rope inv_freq') : null;
    this.attentionScale = (c.ropeScaling?.type === 'yarn' ? yarnMagnitude(c.ropeScaling.factor) ** 2 : 1) / Math.sqrt(c.headDim);
    this.x = buf('x', B * c.hidden);
    this.xn = buf('xn', B * c.hidden);
    const qDim = c.heads * c.headDim;
    const kvDim = c.kvHeads * c.headDim;
    this.qkv = buf('qkv', B * (qDim + 2 * kvDim));
    const biasCopies = device.createCommandEncoder({ label: 'qkv biases' });
    this.qkvBias = weights.layers.map((L, l) => {
      if (!L.bq && !L.bk && !L.bv) return null;
      const bias = buf(`blk.${l} qkv bias`, qDim + 2 * kvDim);
      for (const [b, at, n] of [[L.bq, 0, qDim], [L.bk, qDim, kvDim], [L.bv, qDim + kvDim, kvDim]] as const) {
        if (b) biasCopies.copyBufferToBuffer(b.buffer, 0, bias, at * 4, n * 4);
      }
      return bias;
    });
    device.queue.submit([biasCopies.finish()]);
    this.attn = buf('attn', B * c.heads * c.headDim);
    const separateGateUp = weights.layers.some((l) => l.gateUp && !('stacked' in l.gateUp));
    this.gate = separateGateUp ? buf('gate', B * c.intermediate) : null;
    this.up = separateGateUp ? buf('up', B * c.intermediate) : null;
    this.act = buf('act', B * c.intermediate);
    const moeLayers = weights.layers.map((l) => l.moe).filter((m) => m !== undefined);
    if (moeLayers.length && (moeLayers.length !== c.layers || !c.moe)) throw new Error('A mixture-of-experts model needs experts in every layer and its config.moe');
    this.moe = c.moe ? new MoeFeedForward(device, { ...c, moe: c.moe }, moeLayers, B) : null;
    this.xLast = buf('x last', c.hidden);
    this.logits = buf('logits', c.vocabSize);
    this.tokenIds = buf('token ids', B);
    this.nextToken = buf('next token', 4);
    this.argmaxScratch = createEmptyStorageBuffer(device, this.fk.argmaxScratchBytes(c.vocabSize), 'argmax scratch');
    this.tokenReadback = device.createBuffer({ label: 'token readback', size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /** Builds the decoder: allocates activations and the KV cache, compiles every pipeline it will use. */
  static async create(gpu: GpuContext, config: ModelConfig, weights: DecoderWeights, options: DecoderOptions): Promise<Decoder> {
    if (config.headDim % 4 !== 0) throw new GpuError('limit-exceeded', `head dim ${config.headDim} is not a multiple of 4`);
    const experts = weights.layers.flatMap((l) => (l.moe ? [l.moe.gateUp, l.moe.down] : []));
    for (const m of [...productMatrices(weights), ...experts]) {
      const block = PRODUCT_BLOCK_ELEMENTS[m.type];
      if (m.cols % block !== 0) {
        throw new GpuError('limit-exceeded', `${m.name}: rows of ${m.cols} weights are not a multiple of ${block}, which the ${m.type} product kernel needs`);
      }
    }
    const kv = await KvCache.create(gpu, { numLayers: config.layers, numKvHeads: config.kvHeads, headDim: config.headDim, maxSeq: options.maxSeq });
    const decoder = new Decoder(gpu, config, weights, kv, options);
    await decoder.prepare();
    return decoder;
  }

  private async prepare(): Promise<void> {
    const w = this.weights;
    const products: { type: GpuWeightType; variant: ProductVariant }[] = [{ type: w.lmHead.type, variant: 'plain' }];
    for (const l of w.layers) {
      for (const m of qkvMatrices(l.qkv)) products.push({ type: m.type, variant: l.bq || l.bk || l.bv ? 'bias' : 'plain' });
      products.push({ type: l.wo.type, variant: l.bo ? 'bias+accumulate' : 'accumulate' });
      if (l.wDown) products.push({ type: l.wDown.type, variant: 'accumulate' });
      if (l.wDown && l.postFfnNorm) products.push({ type: l.wDown.type, variant: 'plain' });
      if (l.postAttnNorm) products.push({ type: l.wo.type, variant: l.bo ? 'bias' : 'plain' });
      const gated: ProductVariant = this.config.ffnActivation === 'gelu' ? 'gated-gelu' : 'gated';
      if (l.gateUp) for (const m of gateUpMatrices(l.gateUp)) products.push({ type: m.type, variant: 'stacked' in l.gateUp ? gated : 'plain' });
    }
    const moe = this.moe?.needs();
    if (moe) products.push(...moe.products);
    const unique = new Map(products.map((p) => [`${p.type} ${p.variant}`, p]));
    await Promise.all([
      this.kernels.prepare(),
      this.fk.prepare({
        products: [...unique.values()],
        swiglu: w.layers.some((l) => l.gateUp && !('stacked' in l.gateUp)) && (this.config.ffnActivation === 'gelu' ? 'gelu' : true),
        embeddingTypes: [this.weights.tokenEmbedding.type as EmbeddingTableType],
        ropes: [...new Set(w.layers.map((l) => Boolean(l.qNorm && l.kNorm)))].map((qkNorm) => ({ style: this.config.ropeStyle, writeKvCache: true, qkNorm })),
        headDims: [this.config.headDim],
        attentionSinks: w.layers.some((l) => l.sinks),
        experts: moe?.experts,
      }),
    ]);
  }

  /** Bytes of weights one decode step reads (every matrix once, the embedding row, the norms). */
  weightBytesPerToken(): number {
    const w = this.weights;
    const bytes = (m: GpuMatrix) => m.parts.reduce((s, p) => s + p.buffer.size, 0);
    return productMatrices(w).reduce((s, m) => s + bytes(m), w.tokenEmbedding.cols * 4 /* ~ one row */) + (this.moe?.expertBytesPerToken() ?? 0);
  }

  /**
   * Runs `tokens` at the positions after the cached ones (kv.length onwards), in chunks of maxBatch, and
   * returns the greedy next token (and the logits asked for). The cache then holds these tokens too.
   * `onProgress` is called after each chunk with (tokens done, total).
   */
  async forward(
    tokens: readonly number[],
    options: {
      logits?: LogitsMode;
      onProgress?: (done: number, total: number) => void;
      signal?: AbortSignal;
      /** Picks the next token from the last position's logits (default argmax). */
      chooser?: TokenChooser;
    } = {},
  ): Promise<StepResult> {
    if (tokens.length === 0) throw new RangeError('Decoder.forward needs at least one token');
    const mode = options.logits ?? 'none';
    const allLogits: Float32Array[] = [];
    let result: StepResult | null = null;
    for (let done = 0; done < tokens.length; ) {
      options.signal?.throwIfAborted();
      const chunk = tokens.slice(done, done + this.maxBatch);
      const isLast = done + chunk.length === tokens.length;
      this.chooser = isLast ? (options.chooser ?? null) : null;
      try {
        result = await this.step(chunk, mode === 'all' ? 'all' : isLast ? mode : 'none');
      } finally {
        this.chooser = null;
      }
      if (result.logits && mode === 'all') allLogits.push(...result.logits);
      done += chunk.length;
      options.onProgress?.(done, tokens.length);
    }
    if (mode === 'all') return { ...result!, logits: allLogits };
    return result!;
  }

  /** One command buffer: m = chunk.length tokens at positions [kv.length, kv.length + m). */
  private async step(chunk: readonly number[], mode: LogitsMode): Promise<StepResult> {
    if (this.destroyed) throw new Error('Decoder used after destroy()');
    this.gpu.throwIfFailed();
    const m = chunk.length;
    const pos0 = this.kv.length;
    if (pos0 + m > this.kv.shape.maxSeq) {
      throw new RangeError(`positions up to ${pos0 + m} do not fit the context of ${this.kv.shape.maxSeq} tokens`);
    }
    for (const t of chunk) {
      if (!Number.isInteger(t) || t < 0 || t >= this.config.vocabSize) throw new RangeError(`token id ${t} is outside the vocabulary (0..${this.config.vocabSize - 1})`);
    }
    // Decode reads its input from the previous argmax on the GPU; anything else is uploaded.
    const fromGpu = m === 1 && this.gpuNextToken === chunk[0];
    if (!fromGpu) this.gpu.device.queue.writeBuffer(this.tokenIds, 0, new Uint32Array(chunk));
    this.gpuNextToken = null;
    const batch = new ComputeBatch(this.gpu, `forward m=${m} pos=${pos0}`, this.timer);
    this.record(batch, fromGpu ? this.nextToken : this.tokenIds, m, pos0, mode);
    this.lastStepDispatches = batch.dispatches;
    let logitsReadback: GPUBuffer | null = null;
    const logitsRows = mode === 'all' ? m : mode === 'last' ? 1 : 0;
    const logitsBytes = logitsRows * this.config.vocabSize * 4;
    batch.copy(this.nextToken, 0, this.tokenReadback, 0, 16);
    if (logitsRows > 0) {
      logitsReadback = this.gpu.device.createBuffer({ label: 'logits readback', size: logitsBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      batch.copy(mode === 'all' ? this.logitsAll! : this.logits, 0, logitsReadback, 0, logitsBytes);
    }
    batch.submit();
    try {
      await this.mapOrLost(this.tokenReadback);
      const chosen = new Uint32Array(this.tokenReadback.getMappedRange(0, 16).slice(0));
      const next = chosen[0];
      this.tokenReadback.unmap();
      let logits: Float32Array[] | undefined;
      if (logitsReadback) {
        await this.mapOrLost(logitsReadback);
        const all = new Float32Array(logitsReadback.getMappedRange(0, logitsBytes).slice(0));
        logitsReadback.unmap();
        logits = [];
        for (let r = 0; r < logitsRows; r++) logits.push(all.subarray(r * this.config.vocabSize, (r + 1) * this.config.vocabSize));
      }
      this.gpu.throwIfFailed();
      // argmax gives an id past the vocabulary only for NaN logits; a chooser may signal "none" that way (the caller decides).
      if (next >= this.config.vocabSize && !this.chooser) throw new GpuError('internal', `argmax returned ${next}: the logits are NaN (a kernel or weight fault)`);
      this.kv.truncate(pos0);
      this.kv.append(chunk);
      this.gpuNextToken = next;
      return { nextToken: next, chosen, logits };
    } catch (error) {
      // The cache beyond pos0 is in an unknown state.
      this.kv.truncate(pos0);
      throw error;
    } finally {
      logitsReadback?.destroy();
    }
  }

  /** Waits for a map, or fails with a 'device-lost' GpuError if the device goes first (never hangs). */
  private async mapOrLost(buffer: GPUBuffer): Promise<void> {
    try {
      await Promise.race([buffer.mapAsync(GPUMapMode.READ), this.deviceLost]);
    } catch (error) {
      if (error instanceof GpuError) throw error;
      // A map cut short by the device going away (destroyed or lost) can reject before `lost` settles: wait a
      // moment for it, so the caller sees a lost device (and gets a new one) rather than a bare AbortError.
      const lost = this.gpu.isLost || (await Promise.race([this.deviceLost.then(() => false, () => true), new Promise<boolean>((r) => setTimeout(() => r(false), 1000))]));
      if (lost) throw new GpuError('device-lost', `The GPU device was lost while reading results back (${(error as Error).message})`);
      throw error;
    }
  }

  /** Records the whole forward step into `batch`. */
  private record(batch: ComputeBatch, tokens: GPUBuffer, m: number, pos0: number, mode: LogitsMode): void {
    const c = this.config;
    const w = this.weights;
    const fk = this.fk;
    this.op(batch, 'embedding');
    this.embed(batch, tokens, m);
    for (let l = 0; l < c.layers; l++) {
      const L = w.layers[l];
      this.op(batch, 'rmsnorm');
      this.kernels.rmsnorm(batch, { x: this.x, weight: L.attnNorm.buffer, y: this.xn, rows: m, n: c.hidden, eps: c.rmsEps });
      this.op(batch, 'q/k/v products');
      const qkvDim = (c.heads + 2 * c.kvHeads) * c.headDim;
      const bias = this.qkvBias[l] ?? undefined;
      if ('concatenated' in L.qkv) {
        this.product(batch, L.qkv.concatenated, this.xn, this.qkv, m, { bias });
      } else {
        this.product(batch, L.qkv.q, this.xn, this.qkv, m, { bias, column: 0, stride: qkvDim });
        this.product(batch, L.qkv.k, this.xn, this.qkv, m, { bias, column: c.heads * c.headDim, stride: qkvDim });
        this.product(batch, L.qkv.v, this.xn, this.qkv, m, { bias, column: (c.heads + c.kvHeads) * c.headDim, stride: qkvDim });
      }
      this.op(batch, L.qNorm ? 'q/k norm + rope + kv store' : 'rope + kv store');
      fk.rope(batch, {
        style: c.ropeStyle,
        invFreq: !layerUsesRope(c, l) ? this.noRopeFreq! : this.invFreqSliding && layerRopeTheta(c, l) !== c.ropeTheta ? this.invFreqSliding : this.invFreq,
        ropeDims: c.ropeDims,
        magnitude: c.ropeScaling?.type === 'longrope' ? c.ropeScaling.attnFactor : undefined,
        qkv: this.qkv,
        m,
        nHeads: c.heads,
        nKvHeads: c.kvHeads,
        headDim: c.headDim,
        pos0,
        kvCache: { kCache: this.kv.keys[l], vCache: this.kv.values[l], maxSeq: this.kv.shape.maxSeq },
        qkNorm: L.qNorm && L.kNorm ? { q: L.qNorm.buffer, k: L.kNorm.buffer, eps: c.rmsEps } : undefined,
      });
      this.op(batch, 'attention');
      fk.attention(batch, {
        q: this.qkv,
        qStride: qkvDim,
        kCache: this.kv.keys[l],
        vCache: this.kv.values[l],
        out: this.attn,
        m,
        nHeads: c.heads,
        nKvHeads: c.kvHeads,
        headDim: c.headDim,
        pos0,
        maxSeq: this.kv.shape.maxSeq,
        scale: this.attentionScale,
        window: layerWindow(c, l),
        sinks: L.sinks?.buffer,
      });
      this.op(batch, 'output product + residual');
      this.residual(batch, L.wo, this.attn, m, L.postAttnNorm, L.bo?.buffer);
      this.op(batch, 'rmsnorm');
      this.kernels.rmsnorm(batch, { x: this.x, weight: L.ffnNorm.buffer, y: this.xn, rows: m, n: c.hidden, eps: c.rmsEps });
      if (this.moe) {
        this.op(batch, 'mixture of experts');
        this.moe.record(batch, fk, (mw, x, y, rows, bias) => this.product(batch, mw, x, y, rows, { bias }), l, this.xn, this.x, m);
        continue;
      }
      this.op(batch, 'gate/up products + swiglu');
      if (!L.gateUp || !L.wDown) throw new Error(`Layer ${l} has no feed-forward weights`);
      if ('stacked' in L.gateUp) {
        this.product(batch, L.gateUp.stacked, this.xn, this.act, m, { gated: true, activation: c.ffnActivation });
      } else {
        this.product(batch, L.gateUp.gate, this.xn, this.gate!, m);
        this.product(batch, L.gateUp.up, this.xn, this.up!, m);
        fk.swiglu(batch, { gate: this.gate!, up: this.up!, out: this.act, m, width: c.intermediate, activation: c.ffnActivation });
      }
      this.op(batch, 'down product + residual');
      this.residual(batch, L.wDown, this.act, m, L.postFfnNorm);
    }
    if (mode === 'all') {
      this.kernels.rmsnorm(batch, { x: this.x, weight: w.outputNorm.buffer, y: this.xn, rows: m, n: c.hidden, eps: c.rmsEps });
      this.product(batch, w.lmHead, this.xn, this.logitsAllBuffer(), m);
      batch.copy(this.logitsAllBuffer(), (m - 1) * c.vocabSize * 4, this.logits, 0, c.vocabSize * 4);
    } else {
      let last = this.x;
      if (m > 1) {
        batch.copy(this.x, (m - 1) * c.hidden * 4, this.xLast, 0, c.hidden * 4);
        last = this.xLast;
      }
      this.op(batch, 'final norm');
      this.kernels.rmsnorm(batch, { x: last, weight: w.outputNorm.buffer, y: this.xn, rows: 1, n: c.hidden, eps: c.rmsEps });
      this.op(batch, 'lm head');
      this.product(batch, w.lmHead, this.xn, this.logits, 1);
    }
    this.op(batch, 'argmax');
    if (this.chooser) this.chooser(batch, { logits: this.logits, vocabSize: c.vocabSize, out: this.nextToken });
    else fk.argmax(batch, { values: this.logits, out: this.nextToken, scratch: this.argmaxScratch, count: c.vocabSize });
  }

  /**
   * GPU time per op of one step over `tokens` (after the cached positions), each op in its own timed pass:
   * [{ op, ms, count }], ops summed over layers, slowest first. Null without `timestamp-query`.
   */
  async profile(tokens: readonly number[]): Promise<{ op: string; ms: number; count: number }[] | null> {
    const timer = createGpuTimer(this.gpu, 1024);
    if (!timer) return null;
    this.timer = timer;
    try {
      await this.step(tokens, 'none');
      const times = await timer.read();
      const byOp = new Map<string, { ms: number; count: number }>();
      for (const t of times) {
        const entry = byOp.get(t.label) ?? { ms: 0, count: 0 };
        entry.ms += t.nanoseconds / 1e6;
        entry.count++;
        byOp.set(t.label, entry);
      }
      return [...byOp].map(([op, e]) => ({ op, ms: Math.round(e.ms * 1000) / 1000, count: e.count })).sort((a, b) => b.ms - a.ms);
    } finally {
      this.timer = null;
      timer.destroy();
    }
  }

  /** Starts a new timed pass named `op` while profiling (otherwise ops share one pass). */
  private op(batch: ComputeBatch, op: string): void {
    if (this.timer) batch.beginPass(op);
  }

  private logitsAllBuffer(): GPUBuffer {
    if (!this.logitsAll) this.logitsAll = createEmptyStorageBuffer(this.gpu.device, this.maxBatch * this.config.vocabSize * 4, 'logits all');
    return this.logitsAll;
  }

  /**
   * x += W·input (+ bias): the product with the residual add fused; with a post norm (Gemma 3) the product goes to
   * `branch` and x += rmsnorm(branch) · postNorm.
   */
  private residual(batch: ComputeBatch, w: GpuMatrix, input: GPUBuffer, m: number, postNorm?: GpuVector, bias?: GPUBuffer): void {
    if (!postNorm) {
      this.product(batch, w, input, this.x, m, { accumulate: true, bias });
      return;
    }
    const c = this.config;
    this.product(batch, w, input, this.branch!, m, { bias });
    this.kernels.rmsnorm(batch, { x: this.branch!, weight: postNorm.buffer, y: this.x, rows: m, n: c.hidden, eps: c.rmsEps, accumulate: true });
  }

  private embed(batch: ComputeBatch, tokens: GPUBuffer, m: number): void {
    const e = this.weights.tokenEmbedding;
    for (const part of e.parts) {
      this.fk.embedding(batch, {
        type: e.type as EmbeddingTableType,
        table: part.buffer,
        tokens,
        out: this.x,
        tokenCount: m,
        dim: e.cols,
        rowOffset: part.rowStart,
        rowCount: part.rowCount,
        scale: this.config.embeddingScale,
      });
    }
  }

  /**
   * Y[m, rows] (+)= X[m, cols]·Wᵀ (+ bias), one dispatch per row range of W. `accumulate` adds into Y (the
   * residual).
   */
  private product(
    batch: ComputeBatch,
    w: GpuMatrix,
    x: GPUBuffer,
    y: GPUBuffer,
    m: number,
    options: { bias?: GPUBuffer; accumulate?: boolean; gated?: boolean; activation?: 'silu' | 'gelu'; column?: number; stride?: number } = {},
  ): void {
    if ((w.stacked ?? 1) !== (options.gated ? 2 : 1)) throw new Error(`${w.name}: ${w.stacked ?? 1} stacked matrices for a ${options.gated ? 'gated' : 'plain'} product`);
    for (const part of w.parts) {
      this.fk.product(batch, {
        type: w.type,
        weights: part.buffer,
        x,
        y,
        m,
        n: part.rowCount,
        k: w.cols,
        bias: options.bias,
        accumulate: options.accumulate ?? false,
        gated: options.gated ?? false,
        activation: options.activation,
        yOffset: (options.column ?? 0) + part.rowStart,
        yStride: options.stride ?? w.rows,
      });
    }
  }

  /** Frees the activations and the KV cache (weights belong to the caller). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const b of [this.invFreq, this.x, this.xn, this.qkv, ...this.qkvBias.filter((b) => b !== null), this.attn, this.act, this.xLast, this.logits, this.tokenIds, this.nextToken, this.argmaxScratch, this.tokenReadback]) b.destroy();
    this.logitsAll?.destroy();
    this.noRopeFreq?.destroy();
    this.invFreqSliding?.destroy();
    this.branch?.destroy();
    this.moe?.destroy();
    this.gate?.destroy();
    this.up?.destroy();
    this.kv.destroy();
    this.kernels.destroy();
    this.fk.destroy();
    this.uniforms.destroy();
  }
}
