// GPU sampler checks shared by the Chromium tests (test/gpu/sampling.test.ts) and the Dawn tests
// (test/unit/sampling/sampler.dawn.test.ts): each returns a list of problems (empty = pass), comparing the GPU
// against the CPU reference (test/support/sampling-reference.ts): chi-square against the exact distribution
// over thousands of independent streams, token-for-token agreement with the reference draw, logprobs, top-N,
// greedy, masks, bias and penalties.
import type { SamplingParams } from '../../../src/engine/types.ts';
import type { GpuContext } from '../../../src/gpu/device.ts';
import { ComputeBatch } from '../../../src/gpu/dispatch.ts';
import { createStorageBuffer } from '../../../src/gpu/transfer.ts';
import { PipelineCache } from '../../../src/gpu/pipeline-cache.ts';
import { type GpuSampler, type SamplerOptions, createSampler as createSamplerUncached } from '../../../src/sampling/gpu-sampler.ts';
import { processLogits, referenceSample, samplingDistribution } from '../../support/sampling-reference.ts';

// One pipeline cache per device, so the checks compile the sampler's kernels once.
const pipelineCaches = new WeakMap<GPUDevice, PipelineCache>();
function createSampler(gpu: GpuContext, vocab: number, options: SamplerOptions = {}): Promise<GpuSampler> {
  let pipelines = pipelineCaches.get(gpu.device);
  if (!pipelines) pipelineCaches.set(gpu.device, (pipelines = new PipelineCache(gpu.device)));
  return createSamplerUncached(gpu, vocab, { ...options, pipelines });
}

export function seededLogits(n: number, seed: number, scale = 2): Float32Array {
  let state = seed >>> 0 || 1;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (random() + random() + random() - 1.5) * scale;
  if (n > 8) out[7] = out[3]; // a tie
  return out;
}

/** Chi-square critical value at p = 0.001 (Wilson-Hilferty). */
function chiSquareCritical(df: number): number {
  const z = 3.0902;
  const a = 2 / (9 * df);
  return df * Math.pow(1 - a + z * Math.sqrt(a), 3);
}

export interface SamplerCase {
  name: string;
  vocab: number;
  params: SamplingParams;
  counts?: number[];
  mask?: (i: number) => boolean;
  /** A candidate capacity below what the case keeps: the sampler must refine its levels, then search every logit. */
  maxCandidates?: number;
  /** Refine while more candidates than this remain (the sampler's option). */
  refineAbove?: number;
  /** The thresholds must be searched over candidates (no overflow to the whole-vocabulary search). */
  windowed?: boolean;
  /** The sampler's kernel shapes (false: a GPU's, 256-wide workgroups and unrolled per-level sums, on any adapter). */
  cpuShapes?: boolean;
  /** The logits' spread (seededLogits' scale; default 2: within ±3). */
  scale?: number;
}

export const DISTRIBUTION_CASES: SamplerCase[] = [
  { name: 'temperature 1', vocab: 40, params: { temperature: 1, top_p: 1, seed: 11 } },
  { name: 'temperature 0.6 with top-k 8', vocab: 48, params: { temperature: 0.6, top_p: 1, top_k: 8, seed: 12 } },
  { name: 'temperature 1.4 with top-p 0.7', vocab: 48, params: { temperature: 1.4, top_p: 0.7, seed: 13 } },
  { name: 'min-p 0.15', vocab: 40, params: { temperature: 1, top_p: 1, min_p: 0.15, seed: 14 } },
  { name: 'top-k 12, top-p 0.9, min-p 0.02', vocab: 64, params: { temperature: 0.9, top_p: 0.9, top_k: 12, min_p: 0.02, seed: 15 } },
  {
    name: 'penalties, logit bias and a mask',
    vocab: 40,
    params: { temperature: 1, top_p: 1, repetition_penalty: 1.3, presence_penalty: 0.4, frequency_penalty: 0.25, logit_bias: { 2: 3, 5: -100, 9: 1.5 }, seed: 16 },
    counts: [1, 1, 2, 5, 5, 9, 20, 33, 33, 33],
    mask: (i) => i % 7 !== 3,
  },
  // The sampler narrows to candidates; with room for too few it refines, then searches the whole vocabulary.
  { name: 'top-k 8 with room for 4 candidates', vocab: 48, params: { temperature: 0.6, top_p: 1, top_k: 8, seed: 17 }, maxCandidates: 4 },
  { name: 'top-p 0.7 with room for 12 candidates', vocab: 48, params: { temperature: 1.4, top_p: 0.7, seed: 18 }, maxCandidates: 12 },
  // Top-p alone keeps most of a flat vocabulary: the candidates are only the levels its threshold can lie in (a
  // window, refined), with the top-N's upper set apart from it; the draw walks the units.
  { name: 'top-p 0.8 over a flat vocabulary, a window of at most 40 candidates', vocab: 600, params: { temperature: 1, top_p: 0.8, seed: 19 }, maxCandidates: 40, refineAbove: 8, windowed: true },
  {
    name: 'top-p 0.85 with 3 top logprobs, a window and the upper set apart',
    vocab: 600,
    params: { temperature: 1.1, top_p: 0.85, top_logprobs: 3, seed: 20 },
    maxCandidates: 48,
    refineAbove: 8,
    windowed: true,
  },
  { name: 'top-p 0.9 and min-p 0.05 over a flat vocabulary, windowed', vocab: 600, params: { temperature: 1, top_p: 0.9, min_p: 0.05, seed: 21 }, maxCandidates: 40, refineAbove: 8, windowed: true },
  {
    name: "top-p 0.85 with 3 top logprobs, windowed, in a GPU's kernel shapes",
    vocab: 600,
    params: { temperature: 1.1, top_p: 0.85, top_logprobs: 3, seed: 22 },
    maxCandidates: 48,
    refineAbove: 8,
    windowed: true,
    cpuShapes: false,
  },
  { name: "top-k 12, top-p 0.9 in a GPU's kernel shapes", vocab: 64, params: { temperature: 0.9, top_p: 0.9, top_k: 12, seed: 23 }, cpuShapes: false },
  // Logits 44 wide at a high temperature: the top-p threshold lies 26 (34) below the maximum, in the first round's
  // level 10 (11) of 12, so every level's count and mass is read.
  { name: 'top-p 0.97 at temperature 6 over logits 44 wide: the threshold in level 10', vocab: 600, scale: 16, params: { temperature: 6, top_p: 0.97, seed: 24 }, maxCandidates: 64, refineAbove: 8, windowed: true },
  { name: 'top-p 0.99 at temperature 10 over logits 44 wide: the threshold in the last level', vocab: 600, scale: 16, params: { temperature: 10, top_p: 0.99, seed: 24 }, maxCandidates: 64, refineAbove: 8, windowed: true },
  // Vocabularies that are not a multiple of 4: the sampler reads its padded copy (4 logits a load), not the logits.
  { name: 'temperature 1.2 over 43 tokens', vocab: 43, params: { temperature: 1.2, top_p: 1, seed: 26 } },
  { name: 'top-p 0.8 over 601 tokens, windowed', vocab: 601, params: { temperature: 1, top_p: 0.8, seed: 27 }, maxCandidates: 40, refineAbove: 8, windowed: true },
  // Top-p 0.9995 asks for more than the kept mass at the window's far edge (top_p * 1.001 > 1), so every round's
  // window runs to the last level; the refining rounds walk the stage, which then holds every token below the
  // first window, and must still narrow it (104 candidates after the first round, 37 after the third).
  { name: 'top-p 0.9995 at temperature 10: the window reaches the last level in every round', vocab: 600, scale: 16, params: { temperature: 10, top_p: 0.9995, seed: 25 }, maxCandidates: 64, refineAbove: 8, windowed: true },
];

function maskBits(vocab: number, allowed?: (i: number) => boolean): Uint32Array | null {
  if (!allowed) return null;
  const mask = new Uint32Array(Math.ceil(vocab / 32));
  for (let i = 0; i < vocab; i++) if (allowed(i)) mask[i >> 5] |= 1 << (i & 31);
  return mask;
}

async function drawStreams(gpu: GpuContext, sampler: GpuSampler, logits: GPUBuffer, c: SamplerCase, step: number, streams: number) {
  sampler.resetCounts(c.counts ?? []);
  const batch = new ComputeBatch(gpu, 'sample');
  sampler.encode(batch, logits, c.params, step, { mask: maskBits(c.vocab, c.mask), streams });
  batch.submit();
  return sampler.read();
}

/** The top-N against the reference: the best ids (ties to the lower id) and their logprobs. */
function topProblems(top: { id: number; logprob: number }[], logprobs: Float64Array, n: number, name: string): string[] {
  const problems: string[] = [];
  const order = Array.from(logprobs.keys())
    .filter((i) => logprobs[i] > -Infinity)
    .sort((a, b) => logprobs[b] - logprobs[a] || a - b)
    .slice(0, n);
  if (top.map((t) => t.id).join() !== order.join()) problems.push(`${name}: top ids ${top.map((t) => t.id)}, reference ${order}`);
  for (const t of top) {
    if (Math.abs(t.logprob - logprobs[t.id]) > 1e-3) problems.push(`${name}: top logprob of ${t.id}: ${t.logprob} vs ${logprobs[t.id]}`);
  }
  return problems;
}

/** Many independent streams: chi-square against the exact distribution, no token outside its support. */
export async function checkDistribution(gpu: GpuContext, c: SamplerCase, streams = 8192): Promise<string[]> {
  const problems: string[] = [];
  const logitsData = seededLogits(c.vocab, c.vocab * 31 + (c.params.seed ?? 0), c.scale);
  const logits = createStorageBuffer(gpu.device, logitsData);
  const sampler = await createSampler(gpu, c.vocab, { maxStreams: streams, maxCandidates: c.maxCandidates, refineAbove: c.refineAbove, cpuShapes: c.cpuShapes });
  try {
    const results = await drawStreams(gpu, sampler, logits, c, 1000, streams);
    if (c.windowed) {
      const state = await sampler.readSearchState();
      if (state.overflow) problems.push(`the candidates overflowed (${state.candidates} > ${c.maxCandidates}): every logit was searched`);
    }
    const counts = new Float64Array(c.vocab);
    const countsInput = new Array<number>(c.vocab).fill(0);
    for (const t of c.counts ?? []) countsInput[t]++;
    const dist = samplingDistribution(processLogits(logitsData, c.params, { counts: countsInput, mask: maskBits(c.vocab, c.mask) }), c.params);
    let disagreements = 0;
    results.forEach((r, s) => {
      if (r.token < 0 || r.token >= c.vocab) {
        problems.push(`stream ${s}: token ${r.token} out of range`);
        return;
      }
      counts[r.token]++;
      if (dist.probs[r.token] === 0) problems.push(`stream ${s}: token ${r.token} has probability 0`);
      const expected = referenceSample(dist, c.params.seed ?? 0, 1000 + s);
      if (expected.token !== r.token && expected.margin > 1e-5) disagreements++;
    });
    problems.push(...topProblems(results[0].top, dist.logprobs, c.params.top_logprobs ?? 0, c.name));
    if (disagreements > 0) problems.push(`${disagreements} of ${streams} draws differ from the reference draw for the same seed and step`);
    // chi-square, pooling bins with expected count < 5
    let chi = 0;
    let df = -1;
    let pooledObserved = 0;
    let pooledExpected = 0;
    for (let i = 0; i < c.vocab; i++) {
      const expected = dist.probs[i] * streams;
      if (expected === 0) continue;
      if (expected < 5) {
        pooledObserved += counts[i];
        pooledExpected += expected;
        continue;
      }
      chi += (counts[i] - expected) ** 2 / expected;
      df++;
    }
    if (pooledExpected > 0) {
      chi += (pooledObserved - pooledExpected) ** 2 / pooledExpected;
      df++;
    }
    if (df >= 1 && chi > chiSquareCritical(df)) problems.push(`chi-square ${chi.toFixed(1)} > ${chiSquareCritical(df).toFixed(1)} (df ${df})`);
    if (df < 1) problems.push(`degenerate case: support too small (df ${df})`);
  } finally {
    sampler.destroy();
    logits.destroy();
  }
  return problems;
}

/** Greedy, logprobs and top-N against the reference; a fully masked vocabulary gives -1. */
export async function checkGreedyAndLogprobs(gpu: GpuContext): Promise<string[]> {
  const problems: string[] = [];
  const vocab = 1000;
  const logitsData = seededLogits(vocab, 99, 4);
  logitsData[500] = logitsData[400] = 30; // a tie for the maximum: the lower index wins
  const logits = createStorageBuffer(gpu.device, logitsData);
  const sampler = await createSampler(gpu, vocab);
  try {
    const params: SamplingParams = { temperature: 0, top_p: 1, top_logprobs: 5 };
    const [r] = await drawStreams(gpu, sampler, logits, { name: 'greedy', vocab, params }, 0, 1);
    const dist = samplingDistribution(processLogits(logitsData, params), params);
    if (r.token !== 400) problems.push(`greedy picked ${r.token}, expected 400 (the lower index of a tie)`);
    if (Math.abs(r.logprob - dist.logprobs[400]) > 1e-4) problems.push(`logprob ${r.logprob} vs ${dist.logprobs[400]}`);
    const order = Array.from(dist.logprobs.keys()).sort((a, b) => dist.logprobs[b] - dist.logprobs[a] || a - b).slice(0, 5);
    if (r.top.map((t) => t.id).join() !== order.join()) problems.push(`top ids ${r.top.map((t) => t.id)} vs ${order}`);
    r.top.forEach((t) => {
      if (Math.abs(t.logprob - dist.logprobs[t.id]) > 1e-4) problems.push(`top logprob of ${t.id}: ${t.logprob} vs ${dist.logprobs[t.id]}`);
    });
    const masked = await drawStreams(gpu, sampler, logits, { name: 'masked', vocab, params: { temperature: 0.8, top_p: 1 }, mask: (i) => i === 777 }, 3, 1);
    if (masked[0].token !== 777) problems.push(`with one allowed token the sampler picked ${masked[0].token}`);
    if (Math.abs(masked[0].logprob) > 1e-6) problems.push(`the only allowed token's logprob is ${masked[0].logprob}, expected 0`);
    const none = await drawStreams(gpu, sampler, logits, { name: 'none', vocab, params: { temperature: 0.8, top_p: 1 }, mask: () => false }, 3, 1);
    if (none[0].token !== -1) problems.push(`with an empty mask the sampler picked ${none[0].token}, expected -1`);
  } finally {
    sampler.destroy();
    logits.destroy();
  }
  return problems;
}

/** A large vocabulary: each draw equals the reference draw for the same seed and step (chunked cumulative sums). */
/** The truncations a large vocabulary is drawn under: through candidates (top-k, top-p), or over every unit. */
export const LARGE_VOCABULARY_PARAMS: SamplingParams[] = [
  { temperature: 0.8, top_p: 0.95, top_k: 50, seed: 2024 },
  { temperature: 1, top_p: 0.5, seed: 2025 },
  { temperature: 0.9, top_p: 1, seed: 2026 },
  { temperature: 1, top_p: 1, min_p: 0.2, seed: 2027, top_logprobs: 5 },
];

export async function checkLargeVocabulary(gpu: GpuContext, vocab = 151936, draws = 16): Promise<string[]> {
  const problems: string[] = [];
  const logitsData = seededLogits(vocab, 5, 6);
  const logits = createStorageBuffer(gpu.device, logitsData);
  const sampler = await createSampler(gpu, vocab, { maxStreams: draws });
  try {
    for (const params of LARGE_VOCABULARY_PARAMS) {
      const results = await drawStreams(gpu, sampler, logits, { name: 'large', vocab, params }, 7, draws);
      const dist = samplingDistribution(processLogits(logitsData, params), params);
      results.forEach((r, s) => {
        const expected = referenceSample(dist, params.seed ?? 0, 7 + s);
        if (r.token !== expected.token && expected.margin > 1e-5) problems.push(`${JSON.stringify(params)} draw ${s}: ${r.token}, reference ${expected.token}`);
      });
      const top = results[0].top;
      for (const t of top) {
        if (Math.abs(t.logprob - dist.logprobs[t.id]) > 1e-3) problems.push(`${JSON.stringify(params)} top logprob of ${t.id}: ${t.logprob} vs ${dist.logprobs[t.id]}`);
      }
      if (top.length !== (params.top_logprobs ?? 0)) problems.push(`${JSON.stringify(params)}: ${top.length} alternatives`);
    }
  } finally {
    sampler.destroy();
    logits.destroy();
  }
  return problems;
}

/** Top-p alone over a flat 152k vocabulary (kept sets of tens of thousands of tokens, more than MAX_CANDIDATES):
 * the thresholds are searched over a window of candidates, never every logit, and each draw equals the reference
 * draw. */
export const FLAT_VOCABULARY_PARAMS: SamplingParams[] = [
  { temperature: 1, top_p: 0.9, seed: 3031 },
  { temperature: 1, top_p: 0.95, top_logprobs: 5, seed: 3032 },
  { temperature: 1.3, top_p: 0.7, min_p: 0.01, seed: 3033 },
];

export async function checkFlatVocabulary(gpu: GpuContext, options: { vocab?: number; draws?: number; cpuShapes?: boolean } = {}): Promise<string[]> {
  const { vocab = 151936, draws = 16 } = options;
  const problems: string[] = [];
  const logitsData = seededLogits(vocab, 8, 3);
  const logits = createStorageBuffer(gpu.device, logitsData);
  const sampler = await createSampler(gpu, vocab, { maxStreams: draws, cpuShapes: options.cpuShapes });
  try {
    for (const params of FLAT_VOCABULARY_PARAMS) {
      const results = await drawStreams(gpu, sampler, logits, { name: 'flat', vocab, params }, 11, draws);
      const state = await sampler.readSearchState();
      const dist = samplingDistribution(processLogits(logitsData, params), params);
      const kept = dist.probs.reduce((n, p) => n + (p > 0 ? 1 : 0), 0);
      if (state.overflow) problems.push(`${JSON.stringify(params)}: ${state.candidates} candidates overflowed: every logit was searched`);
      if (!(state.candidates < kept)) problems.push(`${JSON.stringify(params)}: ${state.candidates} candidates for a kept set of ${kept}: not a window`);
      results.forEach((r, s) => {
        const expected = referenceSample(dist, params.seed ?? 0, 11 + s);
        if (r.token !== expected.token && expected.margin > 1e-5) problems.push(`${JSON.stringify(params)} draw ${s}: ${r.token}, reference ${expected.token}`);
      });
      problems.push(...topProblems(results[0].top, dist.logprobs, params.top_logprobs ?? 0, JSON.stringify(params)));
    }
  } finally {
    sampler.destroy();
    logits.destroy();
  }
  return problems;
}

/** Sequential steps with penalties: counts are updated on the GPU and the same seed replays the same tokens. */
export async function checkSequentialSteps(gpu: GpuContext): Promise<{ problems: string[]; tokens: number[] }> {
  const problems: string[] = [];
  const vocab = 300;
  const logitsData = seededLogits(vocab, 3, 3);
  const logits = createStorageBuffer(gpu.device, logitsData);
  const sampler = await createSampler(gpu, vocab);
  const params: SamplingParams = { temperature: 0.9, top_p: 0.95, frequency_penalty: 0.8, presence_penalty: 0.3, seed: 77 };
  const run = async () => {
    sampler.resetCounts([]);
    const tokens: number[] = [];
    const counts = new Array<number>(vocab).fill(0);
    for (let step = 0; step < 12; step++) {
      const batch = new ComputeBatch(gpu, 'step');
      sampler.encode(batch, logits, params, step);
      batch.submit();
      const [r] = await sampler.read();
      const expected = referenceSample(samplingDistribution(processLogits(logitsData, params, { counts }), params), 77, step);
      if (r.token !== expected.token && expected.margin > 1e-5) problems.push(`step ${step}: ${r.token}, reference ${expected.token}`);
      tokens.push(r.token);
      counts[r.token]++;
    }
    return tokens;
  };
  try {
    const first = await run();
    const second = await run();
    if (first.join() !== second.join()) problems.push(`the same seed gave ${first} then ${second}`);
    return { problems, tokens: first };
  } finally {
    sampler.destroy();
    logits.destroy();
  }
}
