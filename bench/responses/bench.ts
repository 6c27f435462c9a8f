// The engine benchmark page of `npm run bench` (bench/run.mjs serves it with Vite and drives headless Chromium).
// For one GGUF per call of `window.__bench.model(config)`:
//   - load time from Cache Storage (the file is put there first; the timed part is cache.match -> Blob ->
//     engine.load: headers, tokenizer, weights streamed to GPU buffers, pipelines compiled),
//   - GPU memory: bytes of the GPU buffers alive after the load (every GPUDevice.createBuffer is counted from
//     outside the engine: weights, KV cache, activations, scratch), against the weight bytes,
//   - decode tokens/s after a warm-up (engine.generate, greedy), prefill tokens/s at ~128 and ~512 prompt tokens,
//   - time to first token through /v1/responses (createResponsesHandler over the engine in this page, streamed
//     SSE), without tools (text streams live) and with a tool on offer (text held back until its phase is known),
//   - GPU time of decode steps per kernel (timestamp-query; every dispatch gets its own timed compute pass, patched
//     into ComputeBatch from the bench, which also gives the products' own bandwidth) and per op (engine.profile).
//     Timed steps run slower than untimed ones: read them as shares of GPU time.
// `window.__bench.roofline()` measures the read-every-byte roofline (the kernel of bench/kernels);
// `window.__bench.sampling({ vocab, rounds })` the GPU sampler per step on logits already on the GPU (bench/sampling/
// steps.ts: greedy, temperature, top-k + top-p, top-p alone, min-p; median wall ms of a step read back, GPU ms per
// kernel); `window.__bench.prefillLong({ url, tokens })` one long prefill of the decoder alone, the KV cache sized
// past the model's context as bench/prefill does (bench/prefill/long.ts: wall seconds, GPU ms per op of the last chunk).
import { acquireGpu } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import * as shaders from '../../src/gpu/shaders.ts';
import { GpuTimer, createGpuTimer } from '../../src/gpu/timing.ts';
import { createEmptyStorageBuffer } from '../../src/gpu/transfer.ts';
import { createWebGpuEngine, type WebGpuEngine } from '../../src/engine/webgpu-engine.ts';
import type { Engine, GenerateRequest, GenerationEvent } from '../../src/engine/types.ts';
import { createResponsesHandler } from '../../src/responses/handler.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import { q8Dot4Experiment } from './q8-dot4-experiment.ts';
import { openWllama } from '../wllama/bench.ts';
import { CASES as SAMPLING_CASES, timeSamplingSteps } from '../sampling/steps.ts';
import { longPrefill } from '../prefill/long.ts';

// ---------------------------------------------------------------- GPU buffer accounting (from outside)

const liveBuffers = new Map<GPUBuffer, number>();
let peakBytes = 0;
/** The largest single buffer made since the last reset, and the limits of the device that made it. */
let largestBuffer = { bytes: 0, label: '', maxStorageBufferBindingSize: 0, maxBufferSize: 0 };
const liveBytes = () => [...liveBuffers.values()].reduce((s, b) => s + b, 0);
/** Live buffer bytes grouped by label (digits dropped, so per-layer buffers group together), largest first. */
function bytesByLabel(exclude: Set<GPUBuffer>): { label: string; buffers: number; bytes: number }[] {
  const groups = new Map<string, { buffers: number; bytes: number }>();
  for (const [buffer, size] of liveBuffers) {
    if (exclude.has(buffer)) continue;
    const label = (buffer.label || '(no label)').replace(/\d+/g, '#');
    const g = groups.get(label) ?? { buffers: 0, bytes: 0 };
    g.buffers++;
    g.bytes += size;
    groups.set(label, g);
  }
  return [...groups.entries()].map(([label, g]) => ({ label, ...g })).sort((a, b) => b.bytes - a.bytes);
}
{
  const createBuffer = GPUDevice.prototype.createBuffer;
  GPUDevice.prototype.createBuffer = function (this: GPUDevice, descriptor: GPUBufferDescriptor): GPUBuffer {
    const buffer = createBuffer.call(this, descriptor);
    liveBuffers.set(buffer, descriptor.size);
    if (descriptor.size > largestBuffer.bytes) {
      largestBuffer = { bytes: descriptor.size, label: descriptor.label ?? '', maxStorageBufferBindingSize: this.limits.maxStorageBufferBindingSize, maxBufferSize: this.limits.maxBufferSize };
    }
    peakBytes = Math.max(peakBytes, liveBytes());
    return buffer;
  };
  const destroy = GPUBuffer.prototype.destroy;
  GPUBuffer.prototype.destroy = function (this: GPUBuffer): undefined {
    liveBuffers.delete(this);
    return destroy.call(this);
  };
}

// ---------------------------------------------------------------- a lower binding limit (from outside)

/**
 * ModelBenchConfig.bindingLimitBytes: devices made while it is set get maxStorageBufferBindingSize (and
 * maxBufferSize) no higher than it, e.g. WebGPU's default 128 MiB, so the weight loader splits what a real GPU's
 * default limits make it split (the engine otherwise asks for the adapter's maximum: 1 GiB on SwiftShader).
 */
let bindingCap = 0;
{
  const requestDevice = GPUAdapter.prototype.requestDevice;
  GPUAdapter.prototype.requestDevice = function (this: GPUAdapter, descriptor?: GPUDeviceDescriptor): Promise<GPUDevice> {
    if (bindingCap > 0 && descriptor) {
      const limits = { ...(descriptor.requiredLimits ?? {}) } as Record<string, number>;
      for (const name of ['maxStorageBufferBindingSize', 'maxBufferSize']) limits[name] = Math.min(limits[name] ?? bindingCap, bindingCap);
      descriptor = { ...descriptor, requiredLimits: limits };
    }
    return requestDevice.call(this, descriptor);
  };
}

// ---------------------------------------------------------------- per-dispatch GPU timestamps (from outside)

interface BatchInternals {
  gpu: { device: GPUDevice; features: { timestamps: boolean } };
  timer: GpuTimer | null;
}
let profiling = false;
const profileTimers = new Map<GPUDevice, GpuTimer>();
let ownPass = false;
{
  const timePass = (batch: ComputeBatch, pipeline: GPUComputePipeline) => {
    if (!profiling) return;
    const self = batch as unknown as BatchInternals;
    if (self.gpu.features.timestamps) {
      let timer = profileTimers.get(self.gpu.device);
      if (!timer) profileTimers.set(self.gpu.device, (timer = new GpuTimer(self.gpu.device, 2048)));
      self.timer = timer;
      ownPass = true;
      try {
        batch.beginPass(pipeline.label.split(':')[0] || 'unlabelled');
      } finally {
        ownPass = false;
      }
    }
  };
  // Passes the engine opens itself once the batch is timed (the forward plan's per-op passes) stay untimed while
  // profiling: each dispatch gets its own timed pass above, and an empty op pass would count as one more dispatch.
  const beginPass = ComputeBatch.prototype.beginPass;
  ComputeBatch.prototype.beginPass = function (this: ComputeBatch, label?: string) {
    const self = this as unknown as BatchInternals;
    if (!profiling || ownPass || !self.timer) return beginPass.call(this, label);
    const timer = self.timer;
    self.timer = null;
    try {
      return beginPass.call(this, label);
    } finally {
      self.timer = timer;
    }
  };
  const dispatch = ComputeBatch.prototype.dispatch;
  ComputeBatch.prototype.dispatch = function (this: ComputeBatch, pipeline, bindings, workgroups) {
    timePass(this, pipeline);
    return dispatch.call(this, pipeline, bindings, workgroups);
  };
  // The forward plan's steps dispatch prebuilt bind groups (dispatchGroup): without this the decode profile was
  // empty (steps 0) once decode went through src/model/forward-plan.ts.
  const dispatchGroup = ComputeBatch.prototype.dispatchGroup;
  ComputeBatch.prototype.dispatchGroup = function (this: ComputeBatch, pipeline, bindGroup, workgroups) {
    timePass(this, pipeline);
    return dispatchGroup.call(this, pipeline, bindGroup, workgroups);
  };
}

// ---------------------------------------------------------------- helpers

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};
const log = (message: string) => console.log(`[bench] ${message}`);

/** An engine that records when it yields each event. */
class TimedEngine implements Engine {
  firstTokenAt = 0;
  prefillDoneAt = 0;
  usage: { promptTokens: number; cachedTokens: number; completionTokens: number } | null = null;
  startedAt = 0;
  constructor(readonly inner: WebGpuEngine) {}
  listModels() {
    return this.inner.listModels();
  }
  tokenizePrompt(req: Pick<GenerateRequest, 'model' | 'messages' | 'tools' | 'enableThinking'>) {
    return this.inner.tokenizePrompt(req);
  }
  async checkConstraint(model: string, constraint: GenerateRequest['constraint']) {
    await this.inner.checkConstraint(model, constraint);
  }
  async *generate(req: GenerateRequest): AsyncIterable<GenerationEvent> {
    this.startedAt = performance.now();
    this.firstTokenAt = 0;
    this.prefillDoneAt = 0;
    for await (const event of this.inner.generate(req)) {
      if (event.type === 'prefill' && event.done === event.total) this.prefillDoneAt = performance.now();
      if (event.type === 'token' && !this.firstTokenAt) this.firstTokenAt = performance.now();
      if (event.type === 'done') this.usage = event.usage;
      yield event;
    }
  }
}

interface RunTimes {
  promptTokens: number;
  cachedTokens: number;
  tokens: number;
  finishReason: string;
  prefillMs: number;
  decodeMs: number;
  /** ms of each decode step (token i -> token i+1). */
  stepMs: number[];
}

async function generateTimed(engine: WebGpuEngine, model: string, prompt: string, maxTokens: number, onToken?: () => Promise<void>): Promise<RunTimes> {
  const start = performance.now();
  let prefillEnd = start;
  const tokenTimes: number[] = [];
  let usage = { promptTokens: 0, cachedTokens: 0, completionTokens: 0 };
  let finishReason = '';
  for await (const event of engine.generate({
    model,
    messages: [{ role: 'user', content: prompt }],
    tools: [],
    enableThinking: false,
    maxTokens,
    sampling: { temperature: 0, top_p: 1 },
    constraint: { kind: 'none' },
  })) {
    const now = performance.now();
    if (event.type === 'prefill') prefillEnd = now;
    else if (event.type === 'token') {
      tokenTimes.push(now);
      if (onToken) await onToken();
    } else {
      usage = event.usage;
      finishReason = event.finishReason;
    }
  }
  const stepMs = tokenTimes.slice(1).map((t, i) => t - tokenTimes[i]);
  return {
    promptTokens: usage.promptTokens,
    cachedTokens: usage.cachedTokens,
    tokens: tokenTimes.length,
    finishReason,
    prefillMs: prefillEnd - start,
    decodeMs: tokenTimes.length > 1 ? tokenTimes[tokenTimes.length - 1] - tokenTimes[0] : 0,
    stepMs,
  };
}

/** A user message whose templated prompt is about `target` tokens (a distinct first word per call: no prefix reuse). */
async function promptOfTokens(engine: WebGpuEngine, model: string, target: number, salt: string): Promise<string> {
  const unit = 'The quick brown fox jumps over the lazy dog while seven wizards quietly box. ';
  const count = async (text: string) => (await engine.tokenizePrompt({ model, messages: [{ role: 'user', content: text }], tools: [], enableThinking: false })).length;
  const base = await count(salt);
  const per = Math.max(1, ((await count(salt + unit.repeat(4))) - base) / 4);
  let reps = Math.max(0, Math.round((target - base) / per));
  let text = salt + unit.repeat(reps);
  // Trim or pad by characters to land within a couple of tokens of the target.
  for (let i = 0; i < 6; i++) {
    const n = await count(text);
    if (Math.abs(n - target) <= 2) break;
    const chars = Math.round(((target - n) * unit.length) / per);
    text = chars > 0 ? text + unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars) : text.slice(0, text.length + chars);
    reps = 0;
  }
  return text;
}

async function readSse(response: Response, onEvent: (type: string, data: Record<string, unknown>) => void): Promise<void> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
      if (!data || data === '[DONE]') continue;
      try {
        const parsed = JSON.parse(data) as Record<string, unknown>;
        onEvent(String(parsed.type), parsed);
      } catch {
        // a keep-alive or a non-JSON frame
      }
    }
  }
}

// ---------------------------------------------------------------- roofline

async function roofline(): Promise<Record<string, unknown>> {
  const gpu = await acquireGpu({ label: 'bench roofline' });
  const timer = createGpuTimer(gpu, 64);
  const pipelines = new PipelineCache(gpu.device);
  const n = 4096;
  const k = 2048;
  const bytes = n * k * 4;
  const data = createEmptyStorageBuffer(gpu.device, bytes);
  const words = bytes / 16;
  const workgroupSize = 64;
  const REPEATS = 8;
  const variants: Record<string, unknown>[] = [];
  let best = 0;
  for (const interleaved of [false, true]) {
    const chunk = interleaved ? 64 : k / 4;
    const invocations = Math.ceil(words / chunk);
    const sink = createEmptyStorageBuffer(gpu.device, invocations * 4);
    const pipeline = await pipelines.get(shaders.readRoofline, { WORKGROUP_SIZE: workgroupSize, CHUNK: chunk, INTERLEAVED: interleaved });
    const uniform = gpu.device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    gpu.device.queue.writeBuffer(uniform, 0, new Uint32Array([words, invocations, 0, 0]));
    const record = (b: ComputeBatch) => b.dispatch(pipeline, [data, sink, uniform], Math.ceil(invocations / workgroupSize));
    for (let i = 0; i < 2; i++) {
      const warm = new ComputeBatch(gpu, 'roofline warm-up');
      record(warm);
      warm.submit();
    }
    await gpu.device.queue.onSubmittedWorkDone();
    let seconds: number[] = [];
    let timing = 'wall';
    if (timer) {
      const batch = new ComputeBatch(gpu, 'roofline', timer);
      for (let i = 0; i < REPEATS; i++) {
        batch.beginPass('read_roofline');
        record(batch);
      }
      batch.submit();
      const ns = (await timer.read()).map((t) => t.nanoseconds);
      if (ns.every((t) => t > 0)) {
        seconds = ns.map((t) => t / 1e9);
        timing = 'gpu-timestamps';
      }
    }
    if (!seconds.length) {
      for (let i = 0; i < REPEATS; i++) {
        const batch = new ComputeBatch(gpu, 'roofline');
        const t0 = performance.now();
        record(batch);
        batch.submit();
        await gpu.device.queue.onSubmittedWorkDone();
        seconds.push((performance.now() - t0) / 1000);
      }
    }
    const gbPerS = bytes / Math.min(...seconds) / 1e9;
    best = Math.max(best, gbPerS);
    variants.push({ pattern: interleaved ? 'interleaved' : 'contiguous', bytes, timing, best_gb_s: round(gbPerS, 3), median_gb_s: round(bytes / median(seconds) / 1e9, 3) });
    sink.destroy();
    uniform.destroy();
  }
  data.destroy();
  timer?.destroy();
  const info = gpu.adapterInfo;
  const adapter = {
    ...info,
    features: [...gpu.adapter.features].sort(),
    wgslLanguageFeatures: [...(navigator.gpu.wgslLanguageFeatures ?? [])].sort(),
    maxStorageBufferBindingSize: gpu.limits.maxStorageBufferBindingSize,
    maxBufferSize: gpu.limits.maxBufferSize,
  };
  gpu.destroy();
  return { gb_per_s: round(best, 3), kernel: 'shaders/read_roofline.wgsl (as bench/kernels)', variants, adapter };
}

// ---------------------------------------------------------------- one model

export interface ModelBenchConfig {
  id: string;
  url: string;
  decodeTokens: number;
  prefillTokens: number[];
  ttftTokens: number;
  /** Also time /v1/responses with a tool on offer (text held for the phase; its prompt is ~10x longer). */
  ttftWithTools: boolean;
  profileSteps: number;
  contextLength: number;
  /** Skip the /v1/responses time-to-first-token runs (the real-size catalog models, where each costs minutes). */
  noTtft?: boolean;
  /**
   * Compare the engine's logits (engine.logits: one prefill of `tokens`, every position) with llama.cpp's, an f32
   * [position][vocab] file at `refUrl` (bench/real-sizes/build.ts writes it), right after the load.
   */
  logitsCheck?: { tokens: number[]; refUrl: string; vocab: number };
  /**
   * The least that gives decode and prefill speeds (the 3-4B shapes on a CPU adapter): a 2-token warm-up, one
   * generation of `decodeTokens` from a one-word prompt whose prefill gives the prefill speed; no prefill runs.
   */
  quick?: boolean;
  /** Load and the logits check only (no decode, prefill or profile). */
  logitsOnly?: boolean;
  /** Cap the engine's device at this binding and buffer size (see bindingCap). */
  bindingLimitBytes?: number;
  /** With profileSteps > 0: the per-dispatch decode profile only, not engine.profile's per-op one (its 32-token
   * prefill costs most of a minute on the 0.5B shape on a CPU adapter). */
  noOpsProfile?: boolean;
}

const NEAR_TIE = 0.02;

/** Max |ours - llama.cpp's| per position and whether the argmax agrees (the quantized tolerance of issue 15). */
async function logitsCheck(engine: WebGpuEngine, id: string, check: NonNullable<ModelBenchConfig['logitsCheck']>): Promise<Record<string, unknown>> {
  const response = await fetch(check.refUrl);
  if (!response.ok) throw new Error(`${check.refUrl}: HTTP ${response.status}`);
  const ref = new Float32Array(await response.arrayBuffer());
  const t0 = performance.now();
  const { logits } = await engine.logits(id, check.tokens);
  const ms = performance.now() - t0;
  if (logits.length !== check.tokens.length) throw new Error(`engine.logits gave ${logits.length} rows for ${check.tokens.length} tokens`);
  const perPosition: number[] = [];
  const margins: { position: number; llama_margin: number }[] = [];
  let agree = 0;
  const argmax = (v: ArrayLike<number>, at: number, n: number) => {
    let best = 0;
    for (let i = 1; i < n; i++) if (v[at + i] > v[at + best]) best = i;
    return best;
  };
  for (let p = 0; p < logits.length; p++) {
    const row = logits[p];
    if (row.length !== check.vocab) throw new Error(`position ${p}: ${row.length} logits, vocabulary ${check.vocab}`);
    let max = 0;
    for (let i = 0; i < check.vocab; i++) {
      const d = Math.abs(row[i] - ref[p * check.vocab + i]);
      if (!(d <= max)) max = d; // NaN propagates
    }
    perPosition.push(round(max, 4));
    const mine = argmax(row, 0, check.vocab);
    const theirs = argmax(ref, p * check.vocab, check.vocab);
    if (mine === theirs) agree++;
    // Where the argmax differs: llama.cpp's own margin between its token and ours (a near-tie when below the diff).
    else margins.push({ position: p, llama_margin: round(ref[p * check.vocab + theirs] - ref[p * check.vocab + mine], 4) });
  }
  const maxAbs = perPosition.reduce((a, b) => (b > a || Number.isNaN(b) ? b : a), 0);
  log(`${id}: logits vs llama.cpp: max |diff| ${maxAbs} over ${logits.length} positions, argmax equal at ${agree}/${logits.length}`);
  // Positions where llama.cpp's own top two are within NEAR_TIE: its 8-bit activations move logits by ~0.1, so
  // which of the two wins there is a coin flip, not a defect. `pass` is the criterion as stated;
  // `pass_excluding_near_ties` leaves those positions out of the agreement (the bench's exit status uses it).
  const nearTies = margins.filter((m) => m.llama_margin < NEAR_TIE).length;
  const decided = logits.length - nearTies;
  return {
    positions: logits.length, tokens: check.tokens, max_abs_diff: maxAbs, per_position: perPosition, greedy_agree: agree, greedy_agreement: round(agree / logits.length, 3), argmax_differs: margins,
    prefill_ms: round(ms), tolerance: 0.25, min_agreement: 0.9, near_tie: NEAR_TIE,
    pass: maxAbs < 0.25 && agree / logits.length >= 0.9,
    pass_excluding_near_ties: maxAbs < 0.25 && (decided === 0 || agree / decided >= 0.9),
  };
}

async function modelBench(cfg: ModelBenchConfig): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { id: cfg.id, url: cfg.url };
  // Put the file in Cache Storage (as the service worker's model cache does), outside the timing.
  const cache = await caches.open('bench-models');
  if (!(await cache.match(cfg.url))) await cache.add(cfg.url);
  const buffersBefore = liveBytes();
  const existing = new Set(liveBuffers.keys());
  peakBytes = buffersBefore;
  largestBuffer = { bytes: 0, label: '', maxStorageBufferBindingSize: 0, maxBufferSize: 0 };
  const loadStart = performance.now();
  const cached = await cache.match(cfg.url);
  const blob = await cached!.blob();
  const engine = createWebGpuEngine({ models: [{ id: cfg.id, gguf: blob, contextLength: cfg.contextLength }] });
  try {
    bindingCap = cfg.bindingLimitBytes ?? 0;
    try {
      await engine.load(cfg.id);
    } finally {
      bindingCap = 0;
    }
    const loadMs = performance.now() - loadStart;
    const stats = await engine.modelStats(cfg.id);
    out.file_bytes = blob.size;
    out.parameters = stats.parameters;
    out.weight_gpu_bytes = stats.weightGpuBytes;
    out.weight_bytes_per_token = stats.weightBytesPerToken;
    out.load_from_cache_ms = round(loadMs);
    out.load_mb_per_s = round(blob.size / 1e6 / (loadMs / 1000));
    const afterLoad = liveBytes() - buffersBefore;
    const byLabel = bytesByLabel(existing);
    const info = (await engine.listModels()).find((m) => m.id === cfg.id);
    out.context_length = info?.contextLength;
    log(`${cfg.id}: loaded in ${round(loadMs)} ms`);
    out.largest_buffer = { ...largestBuffer, within_binding_limit: largestBuffer.bytes <= largestBuffer.maxStorageBufferBindingSize };
    if (cfg.logitsCheck) out.logits_check = await logitsCheck(engine, cfg.id, cfg.logitsCheck);
    if (cfg.logitsOnly) {
      out.gpu_memory = { allocated_after_load_bytes: afterLoad, weight_gpu_bytes: stats.weightGpuBytes, by_label: byLabel.slice(0, 12) };
      return out;
    }

    // Warm-up, then decode.
    await generateTimed(engine, cfg.id, cfg.quick ? 'Hi.' : 'Warm up: say something.', cfg.quick ? 2 : 4);
    const decode = await generateTimed(engine, cfg.id, cfg.quick ? 'Go.' : 'Tell me a long story about a fox and a dog.', cfg.decodeTokens);
    const decodeTokS = decode.decodeMs > 0 ? ((decode.tokens - 1) * 1000) / decode.decodeMs : 0;
    out.dispatches_per_token = (await engine.modelStats(cfg.id)).lastStepDispatches;
    out.decode = {
      tokens: decode.tokens,
      finish_reason: decode.finishReason,
      decode_ms: round(decode.decodeMs),
      decode_tok_s: round(decodeTokS, 3),
      median_step_ms: round(median(decode.stepMs)),
      min_step_ms: round(Math.min(...decode.stepMs)),
      median_step_tok_s: round(1000 / median(decode.stepMs), 3),
    };
    out.decode_tok_s = round(decodeTokS, 3);
    out.decode_weight_gb_s = round((stats.weightBytesPerToken * decodeTokS) / 1e9, 4);
    log(`${cfg.id}: decode ${round(decodeTokS, 3)} tok/s over ${decode.tokens} tokens`);

    // Prefill at each prompt length (maxTokens 1: the time up to the last prefill chunk).
    const prefill: Record<string, unknown>[] = [];
    if (cfg.quick) {
      const processed = decode.promptTokens - decode.cachedTokens;
      prefill.push({ target: null, from: 'the decode run', prompt_tokens: decode.promptTokens, cached_tokens: decode.cachedTokens, prefill_ms: round(decode.prefillMs), prefill_tok_s: round((processed * 1000) / decode.prefillMs, 3) });
    }
    for (const target of cfg.quick ? [] : cfg.prefillTokens) {
      const prompt = await promptOfTokens(engine, cfg.id, target, `Prompt ${target}: `);
      const r = await generateTimed(engine, cfg.id, prompt, 1);
      const processed = r.promptTokens - r.cachedTokens;
      prefill.push({ target, prompt_tokens: r.promptTokens, cached_tokens: r.cachedTokens, prefill_ms: round(r.prefillMs), prefill_tok_s: round((processed * 1000) / r.prefillMs, 3) });
      log(`${cfg.id}: prefill ${r.promptTokens} tokens ${round((processed * 1000) / r.prefillMs, 2)} tok/s`);
    }
    out.prefill = prefill;
    const peakAfterWork = peakBytes - buffersBefore;

    // Time to first token through /v1/responses.
    const timed = new TimedEngine(engine);
    const handler = createResponsesHandler({ engine: timed, store: createMemoryStore() });
    const ttft: Record<string, unknown>[] = [];
    for (const withTools of cfg.noTtft ? [] : cfg.ttftWithTools ? [false, true] : [false]) {
      const body: Record<string, unknown> = {
        model: cfg.id,
        input: withTools ? 'What is the weather in Paris? Answer briefly.' : 'Say hello to the benchmark, briefly.',
        stream: true,
        max_output_tokens: cfg.ttftTokens,
        store: false,
        reasoning: { effort: 'none' },
      };
      if (withTools) {
        body.tools = [{ type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
      }
      const t0 = performance.now();
      const firsts: Record<string, number> = {};
      let status = 0;
      let error: string | undefined;
      let outputText = '';
      try {
        const response = await handler(new Request(`${location.origin}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
        status = response.status;
        if (response.ok) {
          await readSse(response, (type, data) => {
            if (!(type in firsts)) firsts[type] = round(performance.now() - t0);
            if (type === 'response.output_text.delta') outputText += String(data.delta ?? '');
            if (type === 'response.failed') error = JSON.stringify(data.response).slice(0, 300);
          });
        } else error = (await response.text()).slice(0, 300);
      } catch (e) {
        error = String(e);
      }
      const firstToken = timed.firstTokenAt ? round(timed.firstTokenAt - t0) : null;
      const firstDelta = firsts['response.output_text.delta'] ?? null;
      ttft.push({
        tools_on_offer: withTools,
        text_held_for_phase: withTools,
        status,
        error,
        prompt_tokens: timed.usage?.promptTokens ?? null,
        cached_tokens: timed.usage?.cachedTokens ?? null,
        generated_tokens: timed.usage?.completionTokens ?? null,
        prompt_prefill_ms: timed.prefillDoneAt ? round(timed.prefillDoneAt - timed.startedAt) : null,
        first_generated_token_ms: firstToken,
        first_output_text_delta_ms: firstDelta,
        // With a tool on offer the model may call it (the tool constraint applies): the call's first argument delta.
        first_function_call_delta_ms: firsts['response.function_call_arguments.delta'] ?? null,
        holding_cost_ms: firstDelta !== null && firstToken !== null ? round(firstDelta - firstToken) : null,
        completed_ms: firsts['response.completed'] ?? firsts['response.incomplete'] ?? null,
        first_event_ms_by_type: firsts,
        output_text_chars: outputText.length,
      });
      log(`${cfg.id}: /v1/responses tools=${withTools} first token ${firstToken} ms, first output_text.delta ${firstDelta} ms`);
    }
    out.responses_ttft = ttft;

    // Per-kernel GPU time of a few decode steps (each dispatch its own timed pass).
    if (cfg.profileSteps > 0) {
      const perKernel = new Map<string, { ns: number; count: number }>();
      let callbacks = 0;
      let timedDispatches = 0;
      let wallMs = 0;
      let last = 0;
      const collect = async (keep: boolean) => {
        for (const timer of profileTimers.values()) {
          for (const t of await timer.read()) {
            if (!keep) continue;
            timedDispatches++;
            const e = perKernel.get(t.label) ?? { ns: 0, count: 0 };
            e.ns += t.nanoseconds;
            e.count++;
            perKernel.set(t.label, e);
          }
        }
      };
      profiling = true;
      try {
        await generateTimed(engine, cfg.id, 'Profile: count from one to ten.', cfg.profileSteps + 1, async () => {
          const now = performance.now();
          // The first token's read holds the prefill (and maybe a decode step already in flight): dropped.
          await collect(last > 0);
          if (last) {
            callbacks++;
            wallMs += now - last;
          }
          last = performance.now();
        });
        await collect(true);
      } finally {
        profiling = false;
      }
      // Steps kept: timed dispatches over the dispatches of one decode step (with steps in flight a token's read
      // can hold zero, one or two steps, so the reads themselves do not count steps).
      const perStep = Number(out.dispatches_per_token) || 0;
      const steps = perStep > 0 ? timedDispatches / perStep : callbacks;
      const totalNs = [...perKernel.values()].reduce((s, e) => s + e.ns, 0);
      const productNs = [...perKernel.entries()].filter(([k]) => /^mat(mul|vec)/.test(k)).reduce((s, [, e]) => s + e.ns, 0);
      out.decode_profile = {
        method: 'timestamp-query, one compute pass per dispatch (patched into ComputeBatch from the bench), summed over decode steps',
        steps: round(steps, 2),
        gpu_ms_per_token: steps ? round(totalNs / 1e6 / steps) : null,
        wall_ms_per_token_while_profiling: callbacks ? round(wallMs / callbacks) : null,
        products_ms_per_token: steps ? round(productNs / 1e6 / steps, 3) : null,
        /** Weight bytes per token over the GPU time of the matmul/matvec dispatches: the products' own bandwidth. */
        products_weight_gb_s: steps && productNs ? round(stats.weightBytesPerToken / (productNs / steps), 4) : null,
        kernels: [...perKernel.entries()]
          .sort((a, b) => b[1].ns - a[1].ns)
          .map(([label, e]) => ({ kernel: label, dispatches_per_token: steps ? round(e.count / steps, 1) : e.count, ms_per_token: steps ? round(e.ns / 1e6 / steps, 3) : 0, share: round(e.ns / totalNs, 3) })),
      };
    }

    // The engine's own per-op profile (engine.profile: each op of one decode step in its own timed pass, after a
    // 32-token prefill), averaged over a few calls.
    if (cfg.profileSteps > 0 && !cfg.noOpsProfile && typeof engine.profile === 'function') {
      const prompt = await engine.tokenizePrompt({ model: cfg.id, messages: [{ role: 'user', content: 'Profile the decoder step by step, please.' }], tools: [], enableThinking: false });
      const byOp = new Map<string, { ms: number; count: number }>();
      let calls = 0;
      for (let i = 0; i < cfg.profileSteps; i++) {
        const p = await engine.profile(cfg.id, prompt.slice(0, 32));
        if (!p.decode) break;
        calls++;
        for (const t of p.decode) {
          const e = byOp.get(t.op) ?? { ms: 0, count: 0 };
          e.ms += t.ms;
          e.count += t.count;
          byOp.set(t.op, e);
        }
      }
      const total = [...byOp.values()].reduce((s, e) => s + e.ms, 0);
      out.decode_ops = calls
        ? {
            method: 'engine.profile: one decode step at position ~32, each op its own timestamped pass, mean over calls',
            calls,
            gpu_ms_per_token: round(total / calls),
            ops: [...byOp.entries()]
              .sort((a, b) => b[1].ms - a[1].ms)
              .map(([op, e]) => ({ op, ms_per_token: round(e.ms / calls, 3), dispatches: round(e.count / calls, 1), share: round(e.ms / total, 3) })),
          }
        : null;
    }

    out.gpu_memory = {
      method: 'bytes of GPUDevice.createBuffer alive (counted from the bench, destroy() subtracts)',
      allocated_after_load_bytes: afterLoad,
      peak_bytes: peakAfterWork,
      weight_gpu_bytes: stats.weightGpuBytes,
      ratio_to_weights: round(afterLoad / stats.weightGpuBytes, 3),
      by_label: byLabel.slice(0, 12),
    };
  } finally {
    await engine.dispose();
  }
  return out;
}

/** The model file at `url` as a Blob from the bench's Cache Storage (fetched into it on first use). */
async function cachedModelBlob(url: string): Promise<Blob> {
  const cache = await caches.open('bench-models');
  if (!(await cache.match(url))) await cache.add(url);
  return (await (await cache.match(url))!.blob());
}

/**
 * The engine and wllama on the same Blob, both loaded, decoding in alternation (engine, wllama, engine, ...):
 * the machine's load changes by the minute, so the ratio of neighbouring runs is the fair comparison.
 */
async function pairedDecode(cfg: { id: string; url: string; tokens: number; rounds: number; contextLength: number; threads: number }): Promise<Record<string, unknown>> {
  const blob = await cachedModelBlob(cfg.url);
  const engine = createWebGpuEngine({ models: [{ id: cfg.id, gguf: blob, contextLength: cfg.contextLength }] });
  const wllama = await openWllama(blob, { threads: cfg.threads, contextLength: cfg.contextLength });
  try {
    await engine.load(cfg.id);
    await generateTimed(engine, cfg.id, 'Warm up.', 4);
    await wllama.decodeTokS('Warm up.', 4);
    const engineTokS: number[] = [];
    const wllamaTokS: number[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < cfg.rounds; r++) {
      const e = await generateTimed(engine, cfg.id, `Round ${r}: tell me a long story about a fox and a dog.`, cfg.tokens);
      const eTokS = e.decodeMs > 0 ? ((e.tokens - 1) * 1000) / e.decodeMs : 0;
      const wTokS = (await wllama.decodeTokS(`Round ${r}: tell me a long story about a fox and a dog.`, cfg.tokens)) ?? 0;
      engineTokS.push(round(eTokS, 3));
      wllamaTokS.push(round(wTokS, 3));
      ratios.push(round(wTokS > 0 ? eTokS / wTokS : 0, 3));
      log(`${cfg.id}: paired round ${r}: engine ${round(eTokS, 2)} tok/s, wllama ${round(wTokS, 2)} tok/s`);
    }
    return { tokens: cfg.tokens, rounds: cfg.rounds, engine_tok_s: engineTokS, wllama_tok_s: wllamaTokS, engine_over_wllama: ratios, median_engine_over_wllama: median(ratios), median_engine_tok_s: median(engineTokS), median_wllama_tok_s: median(wllamaTokS) };
  } finally {
    await wllama.exit();
    await engine.dispose();
  }
}

/** The sampler cases issue 19 names (greedy, temperature, top-k + top-p, top-p alone, min-p) at `vocab` logits. */
async function samplingBench(cfg: { vocab: number; rounds: number; cases?: string[] }): Promise<Record<string, unknown>> {
  const wanted = cfg.cases ?? ['greedy', 'temperature 0.8', 'top-k 40, top-p 0.95, temperature 0.7', 'top-p 0.9, temperature 1', 'min-p 0.05, temperature 1'];
  const gpu = await acquireGpu({ label: 'bench sampling' });
  try {
    const rows = await timeSamplingSteps(gpu, cfg.vocab, cfg.rounds, { cases: SAMPLING_CASES.filter((c) => wanted.includes(c.name)) });
    for (const r of rows) log(`sampling at ${cfg.vocab}: ${r.name} ${r.median_ms} ms`);
    return { vocab: cfg.vocab, rounds: cfg.rounds, rows };
  } finally {
    gpu.destroy();
  }
}

/** One prefill of `tokens` random ids on the GGUF at `url` (decoder alone, KV cache past the context if need be). */
async function prefillLongBench(cfg: { url: string; tokens: number }): Promise<Record<string, unknown>> {
  const blob = await cachedModelBlob(cfg.url);
  const gpu = await acquireGpu({ label: 'bench long prefill' });
  try {
    let lastLog = performance.now();
    const r = await longPrefill(gpu, blob, cfg.tokens, {
      onProgress: (done, total) => {
        if (performance.now() - lastLog > 15_000) {
          lastLog = performance.now();
          log(`prefill ${cfg.tokens}: ${done}/${total} tokens`);
        }
      },
    });
    log(`prefill ${cfg.tokens}: ${r.seconds} s (${r.tok_s} tok/s)`);
    return { ...r };
  } finally {
    gpu.destroy();
  }
}

declare global {
  interface Window {
    __bench?: {
      sampling: (cfg: { vocab: number; rounds: number; cases?: string[] }) => Promise<Record<string, unknown>>;
      prefillLong: (cfg: { url: string; tokens: number }) => Promise<Record<string, unknown>>;
      roofline: () => Promise<Record<string, unknown>>;
      model: (cfg: ModelBenchConfig) => Promise<Record<string, unknown>>;
      q8Dot4: () => Promise<Record<string, unknown>>;
      paired: (cfg: { id: string; url: string; tokens: number; rounds: number; contextLength: number; threads: number }) => Promise<Record<string, unknown>>;
    };
  }
}

window.__bench = { roofline, model: modelBench, q8Dot4: () => q8Dot4Experiment(), paired: pairedDecode, sampling: samplingBench, prefillLong: prefillLongBench };
document.getElementById('out')!.textContent = 'ready';
