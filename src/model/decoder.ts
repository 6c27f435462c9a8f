// The decoder of the llama / qwen2 / qwen3 family, phi3, smollm3, gemma3 and gpt-oss on WebGPU: the KV cache, the
// activations and the forward plan (forward-plan.ts: every op of a step described once, fixed bind groups, one
// step uniform), run as ONE command buffer per step; this file uploads a step's tokens, reads back its choice
// (and logits) and keeps the cache's bookkeeping. The graph (see forward-plan.ts):
//   embedding -> per layer [rmsnorm, q/k/v products (+bias), q/k RMSNorm (qwen3) + RoPE + KV-cache store,
//   causal GQA attention, output product + residual, rmsnorm, gate/up products with SwiGLU (one dispatch), down product +
//   residual] -> final rmsnorm -> LM head -> argmax. gemma3: embeddings scaled, GeGLU in place of SwiGLU, a norm on
//   the attention and on the feed-forward output before each residual add (the product then writes a scratch row and
//   the norm adds into x), sliding-window layers with their own RoPE base. gpt-oss: q/k/v/o biases, YaRN RoPE, attention sinks, a sliding
//   window on alternate layers, and the mixture-of-experts feed-forward of moe-ffn.ts in place of gate/up/down.
// A step runs m tokens at positions [pos0, pos0 + m): prefill uses matmuls over the prompt (in chunks of at
// most `maxBatch` tokens), decode is m = 1 and reads its input token from the GPU buffer the previous step's
// argmax (or chooser) wrote, so the only thing that comes back to the CPU per token is that id (and the logits, when
// a caller asks for them); `decode` keeps several such steps submitted (steps in flight), so the GPU need not wait
// for the CPU's readback between tokens.
// Products use one kernel skeleton for every weight type (ForwardKernels.product: dequantization, bias and the
// residual add fused), one dispatch per row range of a tensor split over several buffers.
import type { GpuContext } from '../gpu/device.ts';
import { GpuError } from '../gpu/device.ts';
import { ComputeBatch } from '../gpu/dispatch.ts';
import { ForwardKernels, PRODUCT_BLOCK_ELEMENTS, type ForwardKernelShapes } from '../gpu/forward-kernels.ts';
import type { KernelShapes } from '../gpu/kernel-shapes.ts';
import { Kernels } from '../gpu/kernels.ts';
import { PipelineCache } from '../gpu/pipeline-cache.ts';
import { createGpuTimer, type GpuTimer } from '../gpu/timing.ts';
import { KernelContext } from '../gpu/kernels/context.ts';
import { productMatrices, type DecoderWeights, type GpuMatrix, type LogitsMode, type StepResult, type TokenChooser } from './decoder-types.ts';
import { createActivations, destroyActivations, ForwardPlan, type Activations } from './forward-plan.ts';
import { KvCache } from './kv-cache.ts';
import type { ModelConfig } from './model-config.ts';
import { MoeFeedForward } from './moe-ffn.ts';

export type * from './decoder-types.ts';
export type { GpuExperts, MoeWeights } from './moe-ffn.ts';

export interface DecoderOptions {
  /** Positions the KV cache holds (the served context length). */
  maxSeq: number;
  /** Most tokens per prefill step (activations are sized for it). Default: the adapter's shapes' prefillChunk (64 on CPU adapters, 256 on GPUs). */
  maxBatch?: number;
  /** Share compiled pipelines between decoders (several models, tests). */
  pipelines?: PipelineCache;
  /** Override the per-adapter kernel shapes (tests run GPU shapes on a CPU adapter, and the reverse). */
  shapes?: { kernels?: Partial<KernelShapes>; forward?: Partial<ForwardKernelShapes> };
  /**
   * GeGLU's GELU (Gemma 3) as llama.cpp's CPU backend computes it (the default, true): ggml's GGML_GELU_FP16 table,
   * the gate value rounded to f16 and its tanh GELU looked up as an f16 (|g| >= 10: 0 or g), well inside the
   * precision of Gemma's bf16 activations; the logits then meet llama.cpp's F32 tolerance (2e-3: 5.6-7.9e-4 on the
   * test models). false: the tanh GELU in f32 (transformers' gelu_pytorch_tanh, llama.cpp's GPU backends), 1.8-2.1e-3
   * from llama.cpp's CPU logits at F32: the table's rounding (relative 2^-11 per activation) adds ~1.3e-3.
   */
  geluF16?: boolean;
  /** Decode steps kept submitted at once by `decode` (default 2; 1: each step is encoded after the previous token came back). */
  inFlight?: number;
  /** Resolves once the weights' buffers hold their bytes (create() compiles meanwhile); absent: they do already. */
  weightsReady?: Promise<unknown>;
}

export interface DecodeOptions {
  /** The most steps (chosen tokens) to run: the caller's token budget and the context bound it. */
  maxSteps: number;
  /** Steps submitted at once (default: the decoder's `inFlight`); 1 where the caller acts between tokens. */
  inFlight?: number;
  /** The token choice of step i (0-based), asked when step i is encoded; null or undefined: argmax. */
  chooser?: (step: number) => TokenChooser | null | undefined;
}

export class Decoder {
  readonly kv: KvCache;
  readonly maxBatch: number;
  /** Decode steps `decode` keeps submitted at once by default. */
  readonly inFlight: number;
  private readonly kernels: Kernels;
  /** The one kernel context both kernel sets share (the decoder destroys it). */
  private readonly ctx: KernelContext;
  private readonly fk: ForwardKernels;
  /** The mixture-of-experts feed-forward (gpt-oss), or null. */
  private readonly moe: MoeFeedForward | null;
  private readonly acts: Activations;
  /** Every op of a step, built once (forward-plan.ts). */
  private readonly plan: ForwardPlan;
  /** The copies the plan and the experts make from weight buffers, recorded at construction (see create()). */
  private readonly weightCopies: GPUCommandEncoder;
  /** Whether the layers' RMSNorms ride on the products beside them (ForwardPlan.fusedNorms). */
  get fusedNorms(): boolean {
    return this.plan.fusedNorms;
  }
  private readonly tokenReadback: GPUBuffer;
  /** The token id `nextToken` holds on the GPU (after a successful step), so decode can read it there. */
  private gpuNextToken: number | null = null;
  private destroyed = false;
  /** Dispatches the last step recorded (a decode step after decoding: what one token costs in dispatches). */
  lastStepDispatches = 0;
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
    // One kernel context (pipeline cache, params allocator, the adapter's shapes) under both kernel sets.
    this.ctx = new KernelContext(gpu, { pipelines: options.pipelines, shapes: { ...options.shapes?.kernels, ...options.shapes?.forward } });
    this.kernels = new Kernels(this.ctx);
    this.fk = new ForwardKernels(this.ctx, { geluF16: options.geluF16 ?? true });
    this.maxBatch = options.maxBatch ?? this.fk.shapes.prefillChunk;
    this.inFlight = Math.max(1, Math.trunc(options.inFlight ?? 2));
    const c = config;
    const moeLayers = weights.layers.map((l) => l.moe).filter((m) => m !== undefined);
    if (moeLayers.length && (moeLayers.length !== c.layers || !c.moe)) throw new Error('A mixture-of-experts model needs experts in every layer and its config.moe');
    // Copies from weight buffers (biases joined), submitted by create() once the weights hold their bytes.
    this.weightCopies = gpu.device.createCommandEncoder({ label: 'copies from the weights' });
    this.moe = c.moe ? new MoeFeedForward(gpu.device, { ...c, moe: c.moe }, moeLayers, this.maxBatch, this.weightCopies) : null;
    this.acts = createActivations(gpu.device, c, weights, this.fk, this.maxBatch, options.maxSeq);
    const parts = { gpu, config, weights, kv, kernels: this.kernels, fk: this.fk, moe: this.moe, acts: this.acts, maxBatch: this.maxBatch, weightCopies: this.weightCopies };
    this.plan = new ForwardPlan(parts, options.maxSeq);
    this.tokenReadback = gpu.device.createBuffer({ label: 'token readback', size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /**
   * Builds the decoder: allocates activations and the KV cache, compiles every pipeline it will use. The weights'
   * buffers must exist, their bytes need not yet: with `weightsReady` (resolved once every weight byte is written
   * to its buffer) it compiles meanwhile and makes its copies from the weights after it; without, they are taken
   * to be there. Rejects as weightsReady does (the decoder destroyed).
   */
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
    try {
      await Promise.all([decoder.plan.prepare(), options.weightsReady]);
    } catch (error) {
      decoder.destroy();
      throw error;
    }
    gpu.device.queue.submit([decoder.weightCopies.finish()]);
    return decoder;
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
      result = await this.step(chunk, mode === 'all' ? 'all' : isLast ? mode : 'none', isLast ? (options.chooser ?? null) : null);
      if (result.logits && mode === 'all') allLogits.push(...result.logits);
      done += chunk.length;
      options.onProgress?.(done, tokens.length);
    }
    if (mode === 'all') return { ...result!, logits: allLogits };
    return result!;
  }

  /** One command buffer: m = chunk.length tokens at positions [kv.length, kv.length + m). */
  private async step(chunk: readonly number[], mode: LogitsMode, chooser: TokenChooser | null, timer: GpuTimer | null = null): Promise<StepResult> {
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
    if (!fromGpu) this.gpu.device.queue.writeBuffer(this.acts.tokenIds, 0, new Uint32Array(chunk));
    this.gpuNextToken = null;
    const batch = new ComputeBatch(this.gpu, `forward m=${m} pos=${pos0}`, timer);
    this.plan.step(batch, { m, pos0, input: fromGpu ? 'gpu' : 'uploaded', mode, chooser });
    this.lastStepDispatches = batch.dispatches;
    let logitsReadback: GPUBuffer | null = null;
    const logitsRows = mode === 'all' ? m : mode === 'last' ? 1 : 0;
    const logitsBytes = logitsRows * this.config.vocabSize * 4;
    batch.copy(this.acts.nextToken, 0, this.tokenReadback, 0, 16);
    if (logitsRows > 0) {
      logitsReadback = this.gpu.device.createBuffer({ label: 'logits readback', size: logitsBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      batch.copy(mode === 'all' ? this.acts.logitsAll! : this.acts.logits, 0, logitsReadback, 0, logitsBytes);
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
      if (next >= this.config.vocabSize && !chooser) throw new GpuError('internal', `argmax returned ${next}: the logits are NaN (a kernel or weight fault)`);
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

  /**
   * Decode steps after `first` (the token at position kv.length), yielding each step's choice in order, with up to
   * `inFlight` steps submitted at once. Each step reads its input token from the GPU buffer the previous step's
   * choice wrote, so steps i + 1 .. i + inFlight - 1 are encoded and submitted before step i's token is read back:
   * the GPU does not wait for JavaScript between tokens. Pulling the next result is the "keep going?" decision:
   * step i + inFlight is submitted only when the caller asks for result i + 1, and the steps submitted beyond the
   * last result taken are speculative, discarded when the caller stops (break or return() of a for-await). The KV
   * cache's bookkeeping follows the results taken: after k of them kv.length is its length before + k (`first` and
   * the first k - 1 chosen tokens: the last chosen one is the input of a step not taken). `chooser(i)` gives step
   * i's token choice (null: argmax) when it is encoded, after result i - inFlight was taken; inFlight 1 encodes step
   * i + 1 only after the caller took result i, as a chooser whose mask depends on the accepted token needs. No other
   * call on this decoder while a decode is open.
   */
  async *decode(first: number, options: DecodeOptions): AsyncGenerator<StepResult, void, undefined> {
    if (this.destroyed) throw new Error('Decoder used after destroy()');
    const inFlight = Math.max(1, Math.trunc(options.inFlight ?? this.inFlight));
    const maxSteps = options.maxSteps;
    const pos0 = this.kv.length;
    if (!Number.isInteger(maxSteps) || maxSteps < 0) throw new RangeError(`maxSteps must be a whole number >= 0, got ${maxSteps}`);
    if (pos0 + maxSteps > this.kv.shape.maxSeq) throw new RangeError(`positions up to ${pos0 + maxSteps} do not fit the context of ${this.kv.shape.maxSeq} tokens`);
    if (!Number.isInteger(first) || first < 0 || first >= this.config.vocabSize) throw new RangeError(`token id ${first} is outside the vocabulary (0..${this.config.vocabSize - 1})`);
    const usage = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
    const readbacks = Array.from({ length: Math.min(inFlight, maxSteps) }, (_, i) => this.gpu.device.createBuffer({ label: `token readback ${i}`, size: 16, usage }));
    const pending: { readback: GPUBuffer; mapped: Promise<void>; argmax: boolean }[] = [];
    // Step 0 reads `first` where the last step left it on the GPU; from here on the steps overwrite that buffer.
    const firstOnGpu = this.gpuNextToken === first;
    this.gpuNextToken = null;
    let submitted = 0;
    const submit = () => {
      const i = submitted++;
      this.gpu.throwIfFailed();
      const chooser = options.chooser?.(i) ?? null;
      const upload = i === 0 && !firstOnGpu;
      if (upload) this.gpu.device.queue.writeBuffer(this.acts.tokenIds, 0, new Uint32Array([first]));
      const batch = new ComputeBatch(this.gpu, `decode pos=${pos0 + i}`);
      this.plan.step(batch, { m: 1, pos0: pos0 + i, input: upload ? 'uploaded' : 'gpu', mode: 'none', chooser });
      this.lastStepDispatches = batch.dispatches;
      const readback = readbacks[i % readbacks.length];
      batch.copy(this.acts.nextToken, 0, readback, 0, 16);
      batch.submit();
      const mapped = this.mapOrLost(readback);
      // A step in flight may fail before its result is asked for (or never be asked for): not an unhandled rejection.
      mapped.catch(() => undefined);
      pending.push({ readback, mapped, argmax: !chooser });
    };
    let input = first;
    try {
      while (submitted < readbacks.length) submit();
      for (let taken = 0; taken < maxSteps; taken++) {
        const { readback, mapped, argmax } = pending[0];
        await mapped;
        pending.shift();
        const chosen = new Uint32Array(readback.getMappedRange(0, 16).slice(0));
        readback.unmap();
        this.gpu.throwIfFailed();
        const next = chosen[0];
        // As in step(): an id past the vocabulary is NaN logits for argmax, a chooser's "none" for the caller.
        if (next >= this.config.vocabSize && argmax) throw new GpuError('internal', `argmax returned ${next}: the logits are NaN (a kernel or weight fault)`);
        this.kv.append([input]);
        input = next;
        if (pending.length === 0) this.gpuNextToken = next;
        yield { nextToken: next, chosen };
        this.gpuNextToken = null;
        if (submitted < maxSteps) submit();
      }
    } finally {
      // Steps still in flight are discarded (their tokens never taken, their K/V past kv.length); the readbacks go
      // once they settle, without holding up the caller.
      void Promise.allSettled(pending.map((p) => p.mapped)).then(() => {
        for (const b of readbacks) b.destroy();
      });
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

  /**
   * GPU time per op of one step over `tokens` (after the cached positions), each op in its own timed pass:
   * [{ op, ms, count }], ops summed over layers, slowest first. Null without `timestamp-query`.
   */
  async profile(tokens: readonly number[]): Promise<{ op: string; ms: number; count: number }[] | null> {
    const timer = createGpuTimer(this.gpu, 1024);
    if (!timer) return null;
    try {
      await this.step(tokens, 'none', null, timer);
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
      timer.destroy();
    }
  }

  /** Frees the activations and the KV cache (weights belong to the caller). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.plan.destroy();
    destroyActivations(this.acts);
    this.tokenReadback.destroy();
    this.moe?.destroy();
    this.kv.destroy();
    this.ctx.destroy();
  }
}
