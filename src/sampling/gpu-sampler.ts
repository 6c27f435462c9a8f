// Sampling on the GPU: records logits_process (penalties, constraint mask), logits_bias (sparse bias) and the
// sampler's kernels (temperature, min-p, top-k, top-p, Philox draw, logprobs, top-N; shaders/sample_common.wgsl
// says how they narrow a 150-260k vocabulary to a few candidates in parallel passes) into a ComputeBatch after the
// forward pass, so only the chosen id (and its logprob, and the top-N when asked) comes back to JavaScript.
// Uniforms as the kernels have them (src/gpu/uniforms.ts): logits_process's and logits_bias's params from the params
// allocator (shared with the kernels' context where given), the draw's per-token params (step counter, seed, ...) a
// StepUniform written when a step is encoded: submit each step before the next is encoded.
import type { SamplingParams } from '../common/sampling-params.ts';
import type { GpuContext } from '../gpu/device.ts';
import type { Binding, ComputeBatch } from '../gpu/dispatch.ts';
import { PipelineCache } from '../gpu/pipeline-cache.ts';
import { isCpuAdapter } from '../gpu/kernel-shapes.ts';
import { StepUniform, UniformAllocator } from '../gpu/uniforms.ts';
import { logitsBias, logitsProcess, sampleCompact, sampleDraw, sampleLevels, samplePartials, sampleReduce, sampleSelect, sampleToken } from '../gpu/shaders.ts';

// Buffer usages, read when a buffer is made (Node installs the WebGPU globals after the imports run).
const storageUsage = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
const readbackUsage = () => GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
const PROCESS_WORKGROUP = 256;
/** The most alternatives sample_token reports per token. */
export const MAX_TOP_LOGPROBS = 20;
const NONE = 0xffffffff;
/** The most negative f32: an excluded logit (shaders/sample_common.wgsl LOWEST). */
const LOWEST = -3.4028234663852886e38;
/** Levels per unit (shaders/sample_common.wgsl LEVELS), the words of `head` before the units' offsets, the most units. */
const LEVELS = 12;
const HEAD_OFFSETS = 24;
/** Rounds of sample_levels + sample_select: each after an overflow splits the crossing level finer. */
const REFINE_ROUNDS = 3;
const MAX_UNITS = 1024;
/** Invocations per workgroup of the barrier-free unit passes. */
const UNIT_WORKGROUP = 64;
/** The most candidates the thresholds are searched over: a top-p window, a top-k or top-N upper set. An upper set
 * that stays larger after the refining rounds (a top-k of many thousands) searches every logit. */
export const MAX_CANDIDATES = 16384;
/** Candidates above this many are refined further while rounds remain: one more parallel pass costs less than
 * searching thousands more candidates in one workgroup (CPU adapters especially). */
export const REFINE_ABOVE = 2048;
const FLAG_TOP_K = 1;
const FLAG_TOP_P = 2;
const FLAG_CANDIDATES = 4;
/** Params uniforms a sampler's own allocator keeps (a step binds two: logits_process's and logits_bias's). */
const OWN_UNIFORMS = 64;

/** Logits per unit (one invocation each) of the parallel passes: at least 256, and at most MAX_UNITS units. */
function unitSizeFor(vocabSize: number): number {
  return Math.max(256, Math.ceil(vocabSize / MAX_UNITS));
}

export interface SampledToken {
  /** The token id, or -1 when every token was excluded (an empty constraint mask). */
  token: number;
  logprob: number;
  top: { id: number; logprob: number }[];
}

export interface EncodeOptions {
  /** The constraint mask for this step: a bitset (uploaded now), a GPU buffer already holding one, or none. */
  mask?: Uint32Array | GPUBuffer | null;
  /** Independent draws from the same logits with counters step, step+1, … (tests); default 1. */
  streams?: number;
  /** Each kernel in a compute pass of its own, named after it (benchmarks time them with a timed batch). */
  passPerKernel?: boolean;
}

export interface SamplerOptions {
  pipelines?: PipelineCache;
  /** The params allocator to take logits_process's and logits_bias's uniforms from (the caller destroys it); by default the sampler owns one. */
  uniforms?: UniformAllocator;
  /** The most streams one encode may ask for (sizes the result buffer); default 1. */
  maxStreams?: number;
  /** The most candidates the thresholds are searched over (default MAX_CANDIDATES; tests lower it to force the
   * refining rounds and the whole-vocabulary search). */
  maxCandidates?: number;
  /** Refine while more candidates than this remain (default REFINE_ABOVE). */
  refineAbove?: number;
  /** Kernel shapes for a CPU adapter (small workgroups, indexed per-level sums) or a GPU's; default: the adapter's
   * kind (tests run the GPU shapes on SwiftShader too). */
  cpuShapes?: boolean;
}

interface SamplerPipelines {
  process: GPUComputePipeline;
  bias: GPUComputePipeline;
  partials: GPUComputePipeline;
  reduce: GPUComputePipeline;
  levels: GPUComputePipeline;
  levelsStaged: GPUComputePipeline;
  select: GPUComputePipeline;
  stage: GPUComputePipeline;
  compact: GPUComputePipeline;
  sample: GPUComputePipeline;
  mass: GPUComputePipeline;
  draw: GPUComputePipeline;
}

export class GpuSampler {
  /** Per stream s: token id at word 2s, logprob bits at 2s + 1; then the top-N (id, logprob bits) pairs. */
  readonly result: GPUBuffer;
  /** How often each token was generated, for the penalties; `resetCounts` sets it. */
  readonly counts: GPUBuffer;
  private readonly work: GPUBuffer;
  private readonly maskBuffer: GPUBuffer;
  private biasBuffer: GPUBuffer;
  private readonly uniforms: UniformAllocator;
  private readonly ownsUniforms: boolean;
  /** The draw's per-token params (sample_common.wgsl SampleParams), written each step. */
  private readonly sampleParams: StepUniform;
  private readonly readback: GPUBuffer;
  /** Per unit: best w bits, best index, sum exp(w - unit max), kept mass (sample_partials, sample_levels). */
  private readonly parts: GPUBuffer;
  /** Per unit and level: token counts, then kept masses (sample_levels). */
  private readonly levels: GPUBuffer;
  /** M, the best token, log-sum-exp (sample_reduce); the candidate levels, count, overflow, offsets (sample_select);
   * the threshold key of the draw (sample_token). */
  private readonly head: GPUBuffer;
  private readonly candidates: GPUBuffer;
  /** The first round's candidates, (index, w bits) per token, room for all: the refining rounds walk only these. */
  private readonly stage: GPUBuffer;
  private readonly unit: number;
  private readonly units: number;
  private lastTopN = 0;
  private lastStreams = 1;
  /** Whether the last encoded step made candidates (top-k, top-p or a top-N); the search state describes only those. */
  private lastMadeCandidates = false;

  private constructor(
    private readonly gpu: GpuContext,
    readonly vocabSize: number,
    readonly maxStreams: number,
    private readonly pipelines: SamplerPipelines,
    private readonly maxCandidates: number,
    private readonly refineAbove: number,
    uniforms: UniformAllocator | undefined,
  ) {
    const device = gpu.device;
    this.ownsUniforms = uniforms === undefined;
    this.uniforms = uniforms ?? new UniformAllocator(device, OWN_UNIFORMS);
    this.unit = unitSizeFor(vocabSize);
    this.units = Math.ceil(vocabSize / this.unit);
    this.parts = device.createBuffer({ label: 'sampler unit results', size: this.units * 16, usage: storageUsage() });
    this.levels = device.createBuffer({ label: 'sampler levels', size: this.units * LEVELS * 8, usage: storageUsage() });
    this.head = device.createBuffer({ label: 'sampler head', size: (HEAD_OFFSETS + 3 * this.units) * 4, usage: storageUsage() });
    this.candidates = device.createBuffer({ label: 'sampler candidates', size: Math.max(1, Math.min(maxCandidates, vocabSize)) * 8, usage: storageUsage() });
    this.stage = device.createBuffer({ label: 'sampler stage', size: vocabSize * 8, usage: storageUsage() });
    const resultBytes = (2 * maxStreams + 2 * MAX_TOP_LOGPROBS) * 4;
    this.result = device.createBuffer({ label: 'sampler result', size: resultBytes, usage: storageUsage() });
    this.readback = device.createBuffer({ label: 'sampler readback', size: resultBytes, usage: readbackUsage() });
    this.counts = device.createBuffer({ label: 'sampler counts', size: Math.max(16, vocabSize * 4), usage: storageUsage() });
    // The unit passes read the logits as vec4s: the copy is padded to a multiple of 4 with LOWEST (excluded).
    const padded = Math.ceil(vocabSize / 4) * 4;
    this.work = device.createBuffer({ label: 'sampler work', size: padded * 4, usage: storageUsage() });
    if (padded > vocabSize) device.queue.writeBuffer(this.work, vocabSize * 4, new Float32Array(padded - vocabSize).fill(LOWEST));
    this.maskBuffer = device.createBuffer({ label: 'sampler mask', size: Math.max(16, Math.ceil(vocabSize / 32) * 4), usage: storageUsage() });
    this.biasBuffer = device.createBuffer({ label: 'sampler bias', size: 16, usage: storageUsage() });
    this.sampleParams = new StepUniform(device, 'sampler params', 64);
  }

  static async create(gpu: GpuContext, vocabSize: number, options: SamplerOptions = {}): Promise<GpuSampler> {
    if (!Number.isInteger(vocabSize) || vocabSize <= 0) throw new RangeError(`vocabSize must be a positive integer, got ${vocabSize}`);
    const cache = options.pipelines ?? new PipelineCache(gpu.device);
    // The one-workgroup kernels' size: one SIMD group on a CPU adapter (its barriers switch coroutines), 256 on GPUs.
    const cpu = options.cpuShapes ?? isCpuAdapter(gpu.adapterInfo);
    const tokenWorkgroup = cpu ? 4 : 256;
    const [process, bias, partials, reduce, levels, levelsStaged, select, stage, compact, sample, mass, draw] = await Promise.all([
      cache.get(logitsProcess, { WORKGROUP_SIZE: PROCESS_WORKGROUP }),
      cache.get(logitsBias),
      cache.get(samplePartials),
      cache.get(sampleReduce, { WG: tokenWorkgroup }),
      cache.get(sampleLevels, { DYNAMIC_INDEX: cpu ? 1 : 0 }),
      cache.get(sampleLevels, { DYNAMIC_INDEX: cpu ? 1 : 0, FROM_STAGE: 1 }),
      cache.get(sampleSelect, { WG: tokenWorkgroup }),
      cache.get(sampleCompact, { TO_STAGE: 1 }),
      cache.get(sampleCompact),
      cache.get(sampleToken, { WG: tokenWorkgroup }),
      cache.get(sampleDraw, {}, 'mass'),
      cache.get(sampleDraw, { WG: tokenWorkgroup }),
    ]);
    const maxCandidates = Math.max(1, Math.trunc(options.maxCandidates ?? MAX_CANDIDATES));
    const refineAbove = Math.max(1, Math.trunc(options.refineAbove ?? REFINE_ABOVE));
    return new GpuSampler(gpu, vocabSize, Math.max(1, options.maxStreams ?? 1), { process, bias, partials, reduce, levels, levelsStaged, select, stage, compact, sample, mass, draw }, maxCandidates, refineAbove, options.uniforms);
  }

  /** Sets the token counts (penalties) to how often each of `tokens` occurs. */
  resetCounts(tokens: readonly number[] = []): void {
    const counts = new Uint32Array(this.vocabSize);
    for (const t of tokens) if (t >= 0 && t < this.vocabSize) counts[t]++;
    this.gpu.device.queue.writeBuffer(this.counts, 0, counts);
  }

  /**
   * Records one sampling step reading `logits` (vocabSize f32, e.g. the LM head's output row) and returns the
   * result buffer. Penalties use and update `counts` (stream 0 adds the chosen token).
   */
  encode(batch: ComputeBatch, logits: Binding, params: SamplingParams, step: number, options: EncodeOptions = {}): GPUBuffer {
    const streams = options.streams ?? 1;
    if (!Number.isInteger(streams) || streams < 1 || streams > this.maxStreams) {
      throw new RangeError(`streams must be 1..${this.maxStreams}, got ${streams}`);
    }
    const topN = Math.min(Math.max(0, Math.trunc(params.top_logprobs ?? 0)), MAX_TOP_LOGPROBS);
    const { penalties, work } = this.encodeProcessing(batch, logits, params, options);
    this.encodeDraw(batch, work, params, { step, streams, topN, penalties }, options);
    this.lastTopN = topN;
    this.lastStreams = streams;
    return this.result;
  }

  /**
   * logits -> work: penalties and the mask (logits_process), then the sparse logit bias; whether penalties apply and
   * what the sampler reads (the logits themselves when nothing changes them: a full pass saved).
   */
  private encodeProcessing(batch: ComputeBatch, logits: Binding, params: SamplingParams, options: EncodeOptions): { penalties: boolean; work: Binding } {
    const device = this.gpu.device;
    let mask = options.mask ?? null;
    if (mask instanceof Uint32Array) {
      if (mask.length < Math.ceil(this.vocabSize / 32)) throw new RangeError(`The mask has ${mask.length} words, fewer than the vocabulary needs`);
      device.queue.writeBuffer(this.maskBuffer, 0, mask as Uint32Array<ArrayBuffer>, 0, Math.ceil(this.vocabSize / 32));
      mask = this.maskBuffer;
    }
    const repetition = params.repetition_penalty ?? 1;
    const presence = params.presence_penalty ?? 0;
    const frequency = params.frequency_penalty ?? 0;
    const penalties = repetition !== 1 || presence !== 0 || frequency !== 0;
    if (!(repetition > 0)) throw new RangeError(`repetition_penalty must be > 0, got ${repetition}`);
    const bias = Object.entries(params.logit_bias ?? {});
    // The unit passes read vec4s, so the logits serve directly only when they are a multiple of 4 long.
    if (!mask && !penalties && bias.length === 0 && this.vocabSize % 4 === 0) return { penalties, work: logits };

    const process = this.uniforms.params(this.vocabSize, mask ? 1 : 0, penalties ? 1 : 0, 0, { f32: repetition }, { f32: frequency }, { f32: presence }, { f32: 0 });
    if (options.passPerKernel) batch.beginPass('logits_process');
    batch.dispatch(this.pipelines.process, [logits, this.counts, mask ?? this.maskBuffer, this.work, process], Math.ceil(this.vocabSize / PROCESS_WORKGROUP));

    if (bias.length > 0) {
      const pairs = new ArrayBuffer(bias.length * 8);
      const ids = new Uint32Array(pairs);
      const values = new Float32Array(pairs);
      bias.forEach(([id, value], j) => {
        ids[2 * j] = Number(id) >>> 0;
        values[2 * j + 1] = value;
      });
      if (this.biasBuffer.size < pairs.byteLength) {
        this.biasBuffer.destroy();
        this.biasBuffer = device.createBuffer({ label: 'sampler bias', size: Math.ceil(pairs.byteLength / 16) * 16, usage: storageUsage() });
      }
      device.queue.writeBuffer(this.biasBuffer, 0, pairs);
      batch.dispatch(this.pipelines.bias, [this.biasBuffer, this.work, this.uniforms.params(bias.length, this.vocabSize)], Math.ceil(bias.length / 64));
    }
    return { penalties, work: this.work };
  }

  /** work -> result: the sampler's kernels (shaders/sample_common.wgsl), only those this step's settings need. */
  private encodeDraw(batch: ComputeBatch, work: Binding, params: SamplingParams, s: { step: number; streams: number; topN: number; penalties: boolean }, options: EncodeOptions): void {
    const [seedLo, seedHi] = seedWords(params.seed ?? 0);
    const temperature = Math.max(0, params.temperature);
    const topK = Math.max(0, Math.trunc(params.top_k ?? 0));
    const topP = params.top_p ?? 1;
    let flags = 0;
    if (temperature > 0 && topK > 0 && topK < this.vocabSize) flags |= FLAG_TOP_K;
    if (temperature > 0 && topP < 1) flags |= FLAG_TOP_P;
    // Candidates serve top-k, top-p and the top-N; the levels pass also gives the kept masses of a plain draw.
    const candidates = flags !== 0 || s.topN > 0;
    if (candidates) flags |= FLAG_CANDIDATES;
    this.lastMadeCandidates = candidates;
    const sample = new ArrayBuffer(64);
    new Uint32Array(sample, 0, 8).set([this.vocabSize, s.streams, seedLo, seedHi, s.step >>> 0, topK, s.topN, s.penalties ? 1 : 0]);
    new Float32Array(sample, 32, 3).set([temperature, topP, params.min_p ?? 0]);
    new Uint32Array(sample, 44, 1)[0] = this.refineAbove;
    new Uint32Array(sample, 48, 4).set([this.units, this.unit, Math.max(1, Math.min(this.maxCandidates, this.vocabSize)), flags]);
    this.sampleParams.write(sample);
    const uniform = this.sampleParams.buffer;
    const p = this.pipelines;
    const run = (label: string, pipeline: GPUComputePipeline, bindings: Binding[], workgroups: number) => {
      if (options.passPerKernel) batch.beginPass(label);
      batch.dispatch(pipeline, bindings, workgroups);
    };
    const unitGroups = Math.ceil(this.units / UNIT_WORKGROUP);
    run('sample_partials', p.partials, [work, this.parts, uniform], unitGroups);
    run('sample_reduce', p.reduce, [this.parts, this.head, uniform], 1);
    if (candidates) {
      // The first round over the logits, its candidates to the stage; the refining rounds over the stage alone.
      for (let round = 0; round < REFINE_ROUNDS; round++) {
        run('sample_levels', round === 0 ? p.levels : p.levelsStaged, [work, this.parts, this.head, this.levels, uniform, this.stage], unitGroups);
        run('sample_select', p.select, [this.parts, this.head, this.levels, uniform], 1);
        if (round === 0) run('sample_stage', p.stage, [work, this.head, this.candidates, this.stage, uniform], unitGroups);
      }
      run('sample_compact', p.compact, [work, this.head, this.stage, this.candidates, uniform], unitGroups);
    }
    run('sample_token', p.sample, [work, this.head, this.candidates, this.result, this.counts, uniform], 1);
    if (temperature > 0) {
      run('sample_mass', p.mass, [work, this.parts, this.head, uniform], unitGroups);
      run('sample_draw', p.draw, [work, this.parts, this.head, uniform, this.result, this.counts], 1);
    }
  }

  /**
   * A token chooser for the decoder (Decoder.forward's `chooser`): records this sampling step after the forward
   * pass and copies the token id and its logprob bits into the decoder's 16-byte `out` (words 0 and 1).
   */
  chooser(params: SamplingParams, step: number, options: EncodeOptions = {}): (batch: ComputeBatch, a: { logits: GPUBuffer; vocabSize: number; out: GPUBuffer }) => void {
    return (batch, a) => {
      if (a.vocabSize !== this.vocabSize) throw new RangeError(`The sampler was made for ${this.vocabSize} tokens, the logits have ${a.vocabSize}`);
      this.encode(batch, a.logits, params, step, options);
      batch.copy(this.result, 0, a.out, 0, 8);
    };
  }

  /** Reads the results of the last submitted step (one entry per stream; the top-N is the same for all). */
  async read(): Promise<SampledToken[]> {
    const streams = this.lastStreams;
    const bytes = (2 * streams + 2 * this.lastTopN) * 4;
    const device = this.gpu.device;
    const encoder = device.createCommandEncoder({ label: 'sampler read' });
    encoder.copyBufferToBuffer(this.result, 0, this.readback, 0, bytes);
    device.queue.submit([encoder.finish()]);
    await this.readback.mapAsync(GPUMapMode.READ, 0, bytes);
    const words = new Uint32Array(this.readback.getMappedRange(0, bytes).slice(0));
    this.readback.unmap();
    const floats = new Float32Array(words.buffer);
    const top: { id: number; logprob: number }[] = [];
    for (let j = 0; j < this.lastTopN; j++) {
      const at = 2 * streams + 2 * j;
      if (words[at] === NONE) break;
      top.push({ id: words[at], logprob: floats[at + 1] });
    }
    const results: SampledToken[] = [];
    for (let s = 0; s < streams; s++) {
      const token = words[2 * s];
      results.push({ token: token === NONE ? -1 : token, logprob: floats[2 * s + 1], top: s === 0 ? top : [] });
    }
    return results;
  }

  /** Whether the last encoded step made candidates: readSearchState describes the last step only then. */
  get madeCandidates(): boolean {
    return this.lastMadeCandidates;
  }

  /**
   * How the last submitted step narrowed the vocabulary (tests and benchmarks): the candidates searched, whether
   * they overflowed (then every logit was searched, in one workgroup), the rounds run, the candidate levels.
   */
  async readSearchState(): Promise<{ candidates: number; overflow: boolean; rounds: number; upperEnd: number; windowLo: number; windowHi: number }> {
    const device = this.gpu.device;
    const bytes = HEAD_OFFSETS * 4;
    const staging = device.createBuffer({ label: 'sampler head readback', size: bytes, usage: readbackUsage() });
    try {
      const encoder = device.createCommandEncoder({ label: 'sampler head read' });
      encoder.copyBufferToBuffer(this.head, 0, staging, 0, bytes);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const h = new Uint32Array(staging.getMappedRange().slice(0));
      return { candidates: h[4], overflow: h[5] !== 0, rounds: h[7], upperEnd: h[15], windowLo: h[14], windowHi: h[3] };
    } finally {
      staging.destroy();
    }
  }

  destroy(): void {
    for (const b of [this.result, this.readback, this.counts, this.work, this.maskBuffer, this.biasBuffer, this.parts, this.levels, this.head, this.candidates, this.stage]) b.destroy();
    this.sampleParams.destroy();
    if (this.ownsUniforms) this.uniforms.destroy();
  }
}

/** A sampler for a vocabulary of `vocabSize` tokens (pipelines compiled before it resolves). */
export function createSampler(gpu: GpuContext, vocabSize: number, options?: SamplerOptions): Promise<GpuSampler> {
  return GpuSampler.create(gpu, vocabSize, options);
}

/** The Philox key words of a 64-bit seed (low word first), as the sampler's uniforms carry them. */
export function seedWords(seed: number): [number, number] {
  const value = BigInt.asUintN(64, BigInt(Math.trunc(seed)));
  return [Number(value & 0xffffffffn) >>> 0, Number(value >> 32n) >>> 0];
}
