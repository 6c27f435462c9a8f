// The forward plan of the decoder graph (decoder.ts runs it): built once from the config, the weights, the KV cache
// and the activations, it describes every op of a forward step as data (src/gpu/kernel-op.ts: kernel, constants,
// bindings, params, workgroups; the position-dependent ones take theirs from the step):
//   embedding -> per layer [rmsnorm, q/k/v products (+bias), (q/k norm +) RoPE + KV-cache store, attention (split
//   over positions for long decodes), output product + residual (Gemma 3: through its post norm), rmsnorm, the
//   feed-forward (gate/up products with SwiGLU or GeGLU, down product + residual; or moe-ffn.ts' experts)]
//   -> final rmsnorm -> LM head, and the token choice (argmax, or the chooser a step is given).
//   With fusedNorms (most models) every rmsnorm after the first is no op of its own: the residual product before it
//   also writes x·g and x's sums of squares, and the products after it scale their sums by 1/rms. Decode steps
//   (m = 1) rotate q and the new key inside attention (attention.wgsl ROPE), which also stores the new key and value.
// `prepare()` compiles the pipelines of every op the plan can run (derived from the plan itself: m = 1 and m > 1,
// both inputs, every logits mode). `step()` writes the ONE per-step uniform (StepParams: m, pos0, splits) and
// encodes the step's program: per token count m, every op's pipeline, params uniform and bind group are built on
// first use and kept (decode is always m = 1: one program; prefill chunks are maxBatch and a remainder), so a
// decode step builds nothing. The step uniform is written on the queue before each step's submit, so several
// steps may be in flight at once (queue order keeps each step's values).
import type { GpuContext } from '../gpu/device.ts';
import type { ComputeBatch } from '../gpu/dispatch.ts';
import type { EmbeddingTableType, ForwardKernels } from '../gpu/forward-kernels.ts';
import { fixOp, opRuns, opWorkgroups, packStep, type FixedOp, type KernelOp, type StepParams } from '../gpu/kernel-op.ts';
import type { Kernels } from '../gpu/kernels.ts';
import type { ProductArgs } from '../gpu/kernels/products.ts';
import { attentionTakesRope } from '../gpu/kernels/attention.ts';
import { createEmptyStorageBuffer, createStorageBuffer } from '../gpu/transfer.ts';
import { StepUniform } from '../gpu/uniforms.ts';
import { type DecoderWeights, type GpuMatrix, type GpuVector, type LogitsMode, type TokenChooser } from './decoder-types.ts';
import type { KvCache } from './kv-cache.ts';
import { layerRopeTheta, layerUsesRope, layerWindow, ropeFactorsFor, type ModelConfig } from './model-config.ts';
import type { MoeFeedForward } from './moe-ffn.ts';
import { ropeInverseFrequencies, yarnMagnitude } from './rope-frequencies.ts';

/** The activation buffers of a forward step (f32, sized for maxBatch tokens), one struct the plan binds. */
export interface Activations {
  x: GPUBuffer;
  xn: GPUBuffer;
  /** Each token's q, k and v heads in one row [heads + 2 kvHeads, headDim] (the q/k/v products write its columns). */
  qkv: GPUBuffer;
  attn: GPUBuffer;
  /** Separate gate and up outputs, for layers whose gate and up are not stacked (else null). */
  gate: GPUBuffer | null;
  up: GPUBuffer | null;
  act: GPUBuffer;
  /** A branch's output before its post norm and residual add (Gemma 3's post norms), or null. */
  branch: GPUBuffer | null;
  /** The last position's hidden state, for the last-only LM head. */
  xLast: GPUBuffer;
  logits: GPUBuffer;
  /** Every position's logits (mode 'all'), made on first use. */
  logitsAll: GPUBuffer | null;
  tokenIds: GPUBuffer;
  /** The chosen token: [token id, 3 words for the chooser]; also the input token of the next decode step. */
  nextToken: GPUBuffer;
  argmaxScratch: GPUBuffer;
  /** Split attention's partial records for one decode token at any position up to maxSeq. */
  attentionPartials: GPUBuffer;
  /** The fused norms' sums of squares of the residual stream [maxBatch, normGroups(hidden)] (ForwardPlan.fusedNorms). */
  normSums: GPUBuffer;
}

export function createActivations(device: GPUDevice, c: ModelConfig, weights: DecoderWeights, fk: ForwardKernels, maxBatch: number, maxSeq: number): Activations {
  const buf = (label: string, floats: number) => createEmptyStorageBuffer(device, floats * 4, label);
  const separateGateUp = weights.layers.some((l) => l.gateUp && !('stacked' in l.gateUp));
  return {
    x: buf('x', maxBatch * c.hidden),
    xn: buf('xn', maxBatch * c.hidden),
    qkv: buf('qkv', maxBatch * (c.heads + 2 * c.kvHeads) * c.headDim),
    attn: buf('attn', maxBatch * c.heads * c.headDim),
    gate: separateGateUp ? buf('gate', maxBatch * c.intermediate) : null,
    up: separateGateUp ? buf('up', maxBatch * c.intermediate) : null,
    act: buf('act', maxBatch * c.intermediate),
    branch: weights.layers.some((l) => l.postAttnNorm || l.postFfnNorm) ? buf('branch', maxBatch * c.hidden) : null,
    xLast: buf('x last', c.hidden),
    logits: buf('logits', c.vocabSize),
    logitsAll: null,
    tokenIds: buf('token ids', maxBatch),
    nextToken: buf('next token', 4),
    argmaxScratch: createEmptyStorageBuffer(device, fk.argmaxScratchBytes(c.vocabSize), 'argmax scratch'),
    attentionPartials: createEmptyStorageBuffer(device, fk.attentionPartialsBytes(c.heads, c.headDim, maxSeq), 'attention partials'),
    normSums: buf('norm sums', maxBatch * fk.normGroups(c.hidden)),
  };
}

export function destroyActivations(a: Activations): void {
  for (const b of Object.values(a)) (b as GPUBuffer | null)?.destroy();
}

/** Where a step's input tokens are: uploaded into tokenIds, or the previous step's choice in nextToken. */
export type StepInput = 'uploaded' | 'gpu';

export interface ForwardStep {
  m: number;
  pos0: number;
  input: StepInput;
  mode: LogitsMode;
  /** The token choice (null: argmax). */
  chooser: TokenChooser | null;
}

/** One entry of a step: a kernel op, a copy, or a call recorded by a kernel method (ops not described as data). */
type PlanEntry = { pass?: string } & (
  | { kind: 'op'; op: KernelOp }
  | { kind: 'copy'; from: GPUBuffer; fromOffset: number; to: GPUBuffer; toOffset: number; size: number }
  | { kind: 'call'; record: (batch: ComputeBatch, s: StepParams) => void; prepare: () => Promise<void> }
);
type Encoded = { pass?: string } & ({ kind: 'op'; fixed: FixedOp } | Exclude<PlanEntry, { kind: 'op' }>);

/** A token count's ops, built once: per input, the layers, per logits tail, the argmax. */
interface Program {
  input: Record<StepInput, Encoded[]>;
  body: Encoded[];
  tails: Map<'all' | 'last', Encoded[]>;
  argmax: Encoded[];
  /** The params uniforms the program's bind groups hold. */
  owned: GPUBuffer[];
}

/** Programs kept (by m) before the least recently used is dropped: decode's, and prefill's few chunk sizes. */
const PROGRAMS = 8;

const op = (o: KernelOp): PlanEntry => ({ kind: 'op', op: o });
const ops = (list: KernelOp[]): PlanEntry[] => list.map(op);
/** The entries of one profiled op group: the first starts a timed pass named `pass` when the batch is timed. */
const group = (pass: string, entries: PlanEntry[]): PlanEntry[] => (entries.length ? [{ ...entries[0], pass }, ...entries.slice(1)] : []);

export interface ForwardPlanParts {
  gpu: GpuContext;
  config: ModelConfig;
  weights: DecoderWeights;
  kv: KvCache;
  kernels: Kernels;
  fk: ForwardKernels;
  moe: MoeFeedForward | null;
  acts: Activations;
  maxBatch: number;
  /**
   * Where the plan records the copies it makes from weight buffers (the q/k/v biases joined): submitted by the
   * decoder once the weights hold their bytes (Decoder.create's weightsReady), so a plan may be built beside the upload.
   */
  weightCopies: GPUCommandEncoder;
}

export class ForwardPlan {
  private readonly gpu: GpuContext;
  private readonly c: ModelConfig;
  private readonly w: DecoderWeights;
  private readonly kv: KvCache;
  private readonly kernels: Kernels;
  private readonly fk: ForwardKernels;
  private readonly moe: MoeFeedForward | null;
  readonly acts: Activations;
  readonly maxBatch: number;
  /** The one per-step uniform (WGSL StepParams), written before each step. */
  private readonly stepUniform: StepUniform;
  private readonly invFreq: GPUBuffer;
  /** The inverse frequencies of the sliding-window layers' own RoPE base (Gemma 3: 10000), or null. */
  private readonly invFreqSliding: GPUBuffer | null;
  /** All-zero inverse frequencies (no rotation) for the layers without RoPE (SmolLM3's NoPE layers), or null. */
  private readonly noRopeFreq: GPUBuffer | null;
  /** Per layer, the q, k and v biases as one vector (Qwen2), indexed like a qkv row; null without biases. */
  private readonly qkvBias: (GPUBuffer | null)[];
  /** The attention scale: 1/sqrt(headDim) (or attentionScaleDim), times YaRN's magnitude squared (it scales q and k both). */
  private readonly attentionScale: number;
  /**
   * Whether the RMSNorms inside the layer stack and the final norm cost no dispatch: the product that adds into the
   * residual stream (output and down products) also writes x·g of the next norm and x's sums of squares, and the next
   * products (q/k/v, gate/up, the LM head) scale their sums by 1/rms (shaders/matmul.wgsl NORM_OUT / NORMED). Not with post norms (Gemma 3: the residual add is a norm's), experts (their
   * router reads the normalised x) or a residual product split over buffers; the first layer's norm (after the
   * embedding) always runs as its own op.
   */
  readonly fusedNorms: boolean;
  private readonly programs = new Map<number, Program>();

  constructor(p: ForwardPlanParts, maxSeq: number) {
    ({ gpu: this.gpu, config: this.c, weights: this.w, kv: this.kv, kernels: this.kernels, fk: this.fk, moe: this.moe, acts: this.acts, maxBatch: this.maxBatch } = p);
    const c = this.c;
    const device = this.gpu.device;
    this.stepUniform = new StepUniform(device, 'forward step', 16);
    const inverseFrequencies = (theta: number, label: string) => createStorageBuffer(
      device,
      ropeInverseFrequencies({
        // Partial rotary: the frequencies of the rotated dimensions only (theta^(-2p / ropeDims)).
        headDim: c.ropeDims ?? c.headDim,
        theta,
        freqFactors: ropeFactorsFor(c, maxSeq, this.w.ropeFreqFactors),
        llama3: !this.w.ropeFreqFactors && c.ropeScaling?.type === 'llama3'
          ? { ...c.ropeScaling, originalMaxPositions: c.ropeScaling.originalContextLength }
          : undefined,
        linearScale: c.ropeScaling?.type === 'linear' ? c.ropeScaling.factor : undefined,
        yarn: c.ropeScaling?.type === 'yarn' ? c.ropeScaling : undefined,
      }),
      label,
    );
    this.invFreq = inverseFrequencies(c.ropeTheta, 'rope inv_freq');
    this.invFreqSliding = c.ropeThetaSliding !== undefined && c.slidingWindow ? inverseFrequencies(c.ropeThetaSliding, 'rope inv_freq (sliding layers)') : null;
    this.noRopeFreq = c.noRopeLayers?.length ? createStorageBuffer(device, new Float32Array((c.ropeDims ?? c.headDim) / 2), 'no-rope inv_freq') : null;
    this.attentionScale = (c.ropeScaling?.type === 'yarn' ? yarnMagnitude(c.ropeScaling.factor) ** 2 : 1) / Math.sqrt(c.attentionScaleDim ?? c.headDim);
    this.qkvBias = this.qkvBiases(p.weightCopies);
    this.fusedNorms = !this.moe && this.w.layers.every((L) => !L.postAttnNorm && !L.postFfnNorm && L.wo.parts.length === 1 && L.wDown?.parts.length === 1);
  }

  /** The fused norm's input side for layer l's q/k/v (`attn`) or feed-forward products, or for the LM head (l = layers). */
  private normedInput(l: number, where: 'attn' | 'ffn'): { sums: GPUBuffer; eps: number } | undefined {
    if (!this.fusedNorms || (where === 'attn' && l === 0)) return undefined;
    return { sums: this.acts.normSums, eps: this.c.rmsEps };
  }

  /** The fused norm's output side: the residual product's next norm weights g (layer l's `attn` or `ffn` norm, the output norm past the last layer). */
  private normAfter(l: number, where: 'attn' | 'ffn'): GpuVector | undefined {
    if (!this.fusedNorms) return undefined;
    if (where === 'ffn') return this.w.layers[l].ffnNorm;
    return l < this.w.layers.length ? this.w.layers[l].attnNorm : this.w.outputNorm;
  }

  /** Each layer's q, k and v biases in one buffer (or null), their copies recorded into `copies`. */
  private qkvBiases(copies: GPUCommandEncoder): (GPUBuffer | null)[] {
    const c = this.c;
    const device = this.gpu.device;
    const qDim = c.heads * c.headDim;
    const kvDim = c.kvHeads * c.headDim;
    const biases = this.w.layers.map((L, l) => {
      if (!L.bq && !L.bk && !L.bv) return null;
      const bias = createEmptyStorageBuffer(device, (qDim + 2 * kvDim) * 4, `blk.${l} qkv bias`);
      for (const [b, at, n] of [[L.bq, 0, qDim], [L.bk, qDim, kvDim], [L.bv, qDim + kvDim, kvDim]] as const) {
        if (b) copies.copyBufferToBuffer(b.buffer, 0, bias, at * 4, n * 4);
      }
      return bias;
    });
    return biases;
  }

  /** Compiles every pipeline the plan's steps can use: the ops of m = 1 and of m > 1, both inputs, every tail. */
  async prepare(): Promise<void> {
    const sizes = this.maxBatch > 1 ? [1, 2] : [1];
    const logitsAll = createEmptyStorageBuffer(this.gpu.device, 2 * this.c.vocabSize * 4, 'logits all (prepare)');
    try {
      const entries = sizes.flatMap((m) => [
        ...this.embedEntries(this.acts.tokenIds, m), ...this.embedEntries(this.acts.nextToken, m), ...this.bodyEntries(m),
        ...this.tailEntries(m, 'last'), ...this.tailEntries(m, 'all', logitsAll), ...this.argmaxEntries(),
      ]);
      const kernelOps = entries.flatMap((e) => (e.kind === 'op' ? [e.op] : []));
      await Promise.all([this.fk.compile(kernelOps), ...entries.flatMap((e) => (e.kind === 'call' ? [e.prepare()] : []))]);
    } finally {
      logitsAll.destroy();
    }
  }

  /** The step's StepParams (what the step uniform holds). */
  stepParams(m: number, pos0: number): StepParams {
    return { m, pos0, splits: this.fk.attentionSplits(m, pos0) };
  }

  /**
   * Writes the step uniform and encodes one forward step into `batch` (submit it before the next step is encoded:
   * the step uniform is one buffer, kept right by queue order).
   */
  step(batch: ComputeBatch, s: ForwardStep): void {
    const program = this.program(s.m);
    const params = this.stepParams(s.m, s.pos0);
    this.stepUniform.write(packStep(params));
    this.encode(batch, program.input[s.input], params);
    this.encode(batch, program.body, params);
    const tail = s.mode === 'all' ? 'all' : 'last';
    if (!program.tails.has(tail)) program.tails.set(tail, this.fix(this.tailEntries(s.m, tail), program.owned));
    this.encode(batch, program.tails.get(tail)!, params);
    if (!s.chooser) {
      this.encode(batch, program.argmax, params);
      return;
    }
    if (batch.timed) batch.beginPass('argmax');
    s.chooser(batch, { logits: this.acts.logits, vocabSize: this.c.vocabSize, out: this.acts.nextToken });
  }

  private encode(batch: ComputeBatch, entries: readonly Encoded[], s: StepParams): void {
    for (const e of entries) {
      if (e.pass && batch.timed) batch.beginPass(e.pass);
      if (e.kind === 'op') {
        if (opRuns(e.fixed, s)) batch.dispatchGroup(e.fixed.pipeline, e.fixed.bindGroup, opWorkgroups(e.fixed, s));
      } else if (e.kind === 'copy') {
        batch.copy(e.from, e.fromOffset, e.to, e.toOffset, e.size);
      } else {
        e.record(batch, s);
      }
    }
  }

  /** The program of m tokens, built on first use (the least recently used past PROGRAMS dropped). */
  private program(m: number): Program {
    let program = this.programs.get(m);
    if (program) {
      this.programs.delete(m); // re-inserted below, as the most recent
    } else {
      if (this.programs.size >= PROGRAMS) {
        const [oldest, dropped] = this.programs.entries().next().value as [number, Program];
        this.programs.delete(oldest);
        for (const b of dropped.owned) b.destroy(); // work already submitted keeps them until it completes
      }
      const owned: GPUBuffer[] = [];
      program = {
        input: { uploaded: this.fix(this.embedEntries(this.acts.tokenIds, m), owned), gpu: this.fix(this.embedEntries(this.acts.nextToken, m), owned) },
        body: this.fix(this.bodyEntries(m), owned),
        tails: new Map(),
        argmax: this.fix(this.argmaxEntries(), owned),
        owned,
      };
    }
    this.programs.set(m, program);
    return program;
  }

  private fix(entries: readonly PlanEntry[], owned: GPUBuffer[]): Encoded[] {
    return entries.map((e) => (e.kind === 'op' ? { kind: 'op', pass: e.pass, fixed: fixOp(this.gpu.device, this.fk.pipelines, e.op, this.stepUniform.buffer, owned) } : e));
  }

  private embedEntries(tokens: GPUBuffer, m: number): PlanEntry[] {
    const e = this.w.tokenEmbedding;
    return group('embedding', e.parts.flatMap((part) => ops(this.fk.embeddingOps({
      type: e.type as EmbeddingTableType,
      table: part.buffer,
      tokens,
      out: this.acts.x,
      tokenCount: m,
      dim: e.cols,
      rowOffset: part.rowStart,
      rowCount: part.rowCount,
      scale: this.c.embeddingScale,
    }))));
  }

  private bodyEntries(m: number): PlanEntry[] {
    return this.w.layers.flatMap((_, l) => [...this.attentionEntries(l, m), ...this.ffnEntries(l, m)]);
  }

  /** A layer's attention half: norm, q/k/v products, RoPE + KV store, attention, output product + residual. */
  private attentionEntries(l: number, m: number): PlanEntry[] {
    const c = this.c;
    const L = this.w.layers[l];
    const a = this.acts;
    const qkvDim = (c.heads + 2 * c.kvHeads) * c.headDim;
    const bias = this.qkvBias[l] ?? undefined;
    const normed = this.normedInput(l, 'attn');
    const qkv = 'concatenated' in L.qkv
      ? this.product(L.qkv.concatenated, a.xn, a.qkv, m, { bias, normed })
      : [
          ...this.product(L.qkv.q, a.xn, a.qkv, m, { bias, normed, column: 0, stride: qkvDim }),
          ...this.product(L.qkv.k, a.xn, a.qkv, m, { bias, normed, column: c.heads * c.headDim, stride: qkvDim }),
          ...this.product(L.qkv.v, a.xn, a.qkv, m, { bias, normed, column: (c.heads + c.kvHeads) * c.headDim, stride: qkvDim }),
        ];
    const rotation = {
      style: c.ropeStyle,
      invFreq: !layerUsesRope(c, l) ? this.noRopeFreq! : this.invFreqSliding && layerRopeTheta(c, l) !== c.ropeTheta ? this.invFreqSliding : this.invFreq,
      ropeDims: c.ropeDims,
      magnitude: c.ropeScaling?.type === 'longrope' ? c.ropeScaling.attnFactor : undefined,
      qkNorm: L.qNorm && L.kNorm ? { q: L.qNorm.buffer, k: L.kNorm.buffer, eps: c.rmsEps } : undefined,
    };
    // Decode steps rotate q and the new key inside attention (and store the new key and value there): no rope op.
    const ropeInAttention = m === 1 && attentionTakesRope(c.ropeStyle, c.headDim, c.ropeDims);
    const rope = ropeInAttention ? [] : this.fk.ropeOps({
      ...rotation,
      qkv: a.qkv,
      m,
      nHeads: c.heads,
      nKvHeads: c.kvHeads,
      headDim: c.headDim,
      kvCache: { kCache: this.kv.keys[l], vCache: this.kv.values[l], maxSeq: this.kv.shape.maxSeq },
    });
    // Prefill chunks (m > 1): the KV-tiled kernel (attention_prefill.wgsl); decode: split attention.
    const attention = (m > 1 ? this.fk.attentionPrefillOps : this.fk.attentionOps).call(this.fk, {
      q: a.qkv,
      qStride: qkvDim,
      kCache: this.kv.keys[l],
      vCache: this.kv.values[l],
      out: a.attn,
      m,
      nHeads: c.heads,
      nKvHeads: c.kvHeads,
      headDim: c.headDim,
      maxSeq: this.kv.shape.maxSeq,
      scale: this.attentionScale,
      window: layerWindow(c, l),
      sinks: L.sinks?.buffer,
      partials: a.attentionPartials,
      rope: ropeInAttention ? rotation : undefined,
    });
    return [
      ...(normed ? [] : group('rmsnorm', ops(this.kernels.rmsnormOps({ x: a.x, weight: L.attnNorm.buffer, y: a.xn, rows: m, n: c.hidden, eps: c.rmsEps })))),
      ...group('q/k/v products', ops(qkv)),
      ...group(L.qNorm ? 'q/k norm + rope + kv store' : 'rope + kv store', ops(rope)),
      ...group(ropeInAttention ? 'rope + kv store + attention' : 'attention', ops(attention)),
      ...group('output product + residual', ops(this.residual(L.wo, a.attn, m, L.postAttnNorm, L.bo?.buffer, this.normAfter(l, 'ffn')))),
    ];
  }

  /** A layer's feed-forward half: norm, then the mixture of experts or gate/up (+ SwiGLU) and down + residual. */
  private ffnEntries(l: number, m: number): PlanEntry[] {
    const c = this.c;
    const L = this.w.layers[l];
    const a = this.acts;
    const normed = this.normedInput(l, 'ffn');
    const norm = normed ? [] : group('rmsnorm', ops(this.kernels.rmsnormOps({ x: a.x, weight: L.ffnNorm.buffer, y: a.xn, rows: m, n: c.hidden, eps: c.rmsEps })));
    if (this.moe) {
      const experts = this.moe.ops(this.fk, (mw, x, y, rows, bias) => this.product(mw, x, y, rows, { bias }), l, a.xn, a.x, m);
      return [...norm, ...group('mixture of experts', ops(experts))];
    }
    if (!L.gateUp || !L.wDown) throw new Error(`Layer ${l} has no feed-forward weights`);
    const gateUp = 'stacked' in L.gateUp
      ? this.product(L.gateUp.stacked, a.xn, a.act, m, { gated: true, activation: c.ffnActivation, normed })
      : [
          ...this.product(L.gateUp.gate, a.xn, a.gate!, m, { normed }),
          ...this.product(L.gateUp.up, a.xn, a.up!, m, { normed }),
          ...this.fk.swigluOps({ gate: a.gate!, up: a.up!, out: a.act, m, width: c.intermediate, activation: c.ffnActivation }),
        ];
    const down = this.residual(L.wDown, a.act, m, L.postFfnNorm, undefined, this.normAfter(l + 1, 'attn'));
    return [...norm, ...group('gate/up products + swiglu', ops(gateUp)), ...group('down product + residual', ops(down))];
  }

  /** After the layers: final norm and LM head, of the last position ('last') or of every one ('all'). */
  private tailEntries(m: number, mode: 'all' | 'last', logitsAll?: GPUBuffer): PlanEntry[] {
    const c = this.c;
    const a = this.acts;
    const w = this.w;
    // With fused norms the last layer's down product wrote x·g of the output norm and the sums (every token's).
    const normed = this.normedInput(this.w.layers.length, 'attn');
    if (mode === 'all') {
      const all = logitsAll ?? (a.logitsAll ??= createEmptyStorageBuffer(this.gpu.device, this.maxBatch * c.vocabSize * 4, 'logits all'));
      return [
        ...(normed ? [] : ops(this.kernels.rmsnormOps({ x: a.x, weight: w.outputNorm.buffer, y: a.xn, rows: m, n: c.hidden, eps: c.rmsEps }))),
        ...ops(this.product(w.lmHead, a.xn, all, m, { normed })),
        { kind: 'copy', from: all, fromOffset: (m - 1) * c.vocabSize * 4, to: a.logits, toOffset: 0, size: c.vocabSize * 4 },
      ];
    }
    if (normed && m === 1) return group('lm head', ops(this.product(w.lmHead, a.xn, a.logits, 1, { normed })));
    // The last of m > 1 positions: its own norm (x holds every position; only the last one's logits are made).
    const copyLast: PlanEntry[] = m > 1 ? [{ kind: 'copy', from: a.x, fromOffset: (m - 1) * c.hidden * 4, to: a.xLast, toOffset: 0, size: c.hidden * 4 }] : [];
    return [
      ...copyLast,
      ...group('final norm', ops(this.kernels.rmsnormOps({ x: m > 1 ? a.xLast : a.x, weight: w.outputNorm.buffer, y: a.xn, rows: 1, n: c.hidden, eps: c.rmsEps }))),
      ...group('lm head', ops(this.product(w.lmHead, a.xn, a.logits, 1))),
    ];
  }

  private argmaxEntries(): PlanEntry[] {
    const a = this.acts;
    return group('argmax', ops(this.fk.argmaxOps({ values: a.logits, out: a.nextToken, scratch: a.argmaxScratch, count: this.c.vocabSize })));
  }

  /**
   * x += W·input (+ bias): the product with the residual add fused; with a post norm (Gemma 3) the product goes to
   * `branch` and x += rmsnorm(branch) · postNorm. `next`: the next norm's weights, fused (fusedNorms): xn gets x·next
   * and normSums x's sums of squares.
   */
  private residual(w: GpuMatrix, input: GPUBuffer, m: number, postNorm?: GpuVector, bias?: GPUBuffer, next?: GpuVector): KernelOp[] {
    const a = this.acts;
    if (!postNorm) {
      const normOut = next ? { weight: next.buffer, normed: a.xn, sums: a.normSums } : undefined;
      return this.product(w, input, a.x, m, { accumulate: true, bias, normOut });
    }
    const c = this.c;
    return [
      ...this.product(w, input, a.branch!, m, { bias }),
      ...this.kernels.rmsnormOps({ x: a.branch!, weight: postNorm.buffer, y: a.x, rows: m, n: c.hidden, eps: c.rmsEps, accumulate: true }),
    ];
  }

  /**
   * Y[m, rows] (+)= X[m, cols]·Wᵀ (+ bias), one op per row range of W. `accumulate` adds into Y (the residual).
   */
  private product(
    w: GpuMatrix,
    x: GPUBuffer,
    y: GPUBuffer,
    m: number,
    options: {
      bias?: GPUBuffer; accumulate?: boolean; gated?: boolean; activation?: 'silu' | 'gelu'; column?: number; stride?: number;
      normed?: ProductArgs['normed']; normOut?: ProductArgs['normOut'];
    } = {},
  ): KernelOp[] {
    if ((w.stacked ?? 1) !== (options.gated ? 2 : 1)) throw new Error(`${w.name}: ${w.stacked ?? 1} stacked matrices for a ${options.gated ? 'gated' : 'plain'} product`);
    return w.parts.flatMap((part) => this.fk.productOps({
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
      normed: options.normed,
      normOut: options.normOut,
    }));
  }

  /** Frees the plan's uniforms and constants (the activations belong to the caller). */
  destroy(): void {
    for (const program of this.programs.values()) for (const b of program.owned) b.destroy();
    this.programs.clear();
    this.stepUniform.destroy();
    for (const b of [this.invFreq, this.invFreqSliding, this.noRopeFreq, ...this.qkvBias]) b?.destroy();
  }
}
