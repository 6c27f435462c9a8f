// The CPU reference of the GPU sampler (shaders/logits_process.wgsl, logits_bias.wgsl, sample_token.wgsl): the
// same processing, thresholds and Philox4x32-10 draw, in float64 where the GPU uses f32 (so a draw can differ only
// when u * Z falls within rounding of a boundary). Tests use it for exact distributions and expected tokens.
import type { SamplingParams } from '../../src/common/sampling-params.ts';

/** The most negative f32: what masked tokens become. */
export const LOWEST_F32 = -3.4028234663852886e38;

const f32 = Math.fround;

/** 32x32 -> 64-bit product as [hi, lo]. */
function mulWide(a: number, b: number): [number, number] {
  const product = BigInt(a >>> 0) * BigInt(b >>> 0);
  return [Number(product >> 32n) >>> 0, Number(product & 0xffffffffn) >>> 0];
}

/** Philox4x32-10 of a counter under a key (as sample_token.wgsl). */
export function philox4x32(counter: readonly [number, number, number, number], key: readonly [number, number]): [number, number, number, number] {
  let [c0, c1, c2, c3] = counter.map((x) => x >>> 0);
  let [k0, k1] = key.map((x) => x >>> 0);
  for (let round = 0; round < 10; round++) {
    const [hi0, lo0] = mulWide(0xd2511f53, c0);
    const [hi1, lo1] = mulWide(0xcd9e8d57, c2);
    [c0, c1, c2, c3] = [(hi1 ^ c1 ^ k0) >>> 0, lo1, (hi0 ^ c3 ^ k1) >>> 0, lo0];
    k0 = (k0 + 0x9e3779b9) >>> 0;
    k1 = (k1 + 0xbb67ae85) >>> 0;
  }
  return [c0, c1, c2, c3];
}

/** A seed as the two u32 words of its 64-bit two's complement value. */
/** The Philox key of a 64-bit seed, written apart from the sampler's own (src/sampling/gpu-sampler.ts) on purpose. */
export function seedWords(seed: number): [number, number] {
  const value = BigInt.asUintN(64, BigInt(Math.trunc(seed)));
  return [Number(value & 0xffffffffn) >>> 0, Number(value >> 32n) >>> 0];
}

/** The uniform in [0, 1) (24 bits) the sampler draws for this seed and step. */
export function uniformFor(seed: number, step: number): number {
  const [x] = philox4x32([step >>> 0, 0, 0, 0], seedWords(seed));
  return (x >>> 8) / 16777216;
}

function excluded(w: number): boolean {
  return !(w > LOWEST_F32);
}

/** The order-preserving u32 key of an f32 (0 for excluded values), as the shader computes it. */
export function f32Key(w: number): number {
  if (excluded(w)) return 0;
  const bits = new Uint32Array(new Float32Array([w]).buffer)[0];
  return (bits & 0x80000000 ? ~bits : bits | 0x80000000) >>> 0;
}

export interface ProcessOptions {
  /** How often each token was generated (penalties). */
  counts?: ArrayLike<number>;
  /** Constraint bitset: bit (i & 31) of word (i >> 5). */
  mask?: Uint32Array | null;
}

/** logits_process + logits_bias: the processed logits (f32 values). */
export function processLogits(logits: ArrayLike<number>, params: SamplingParams, options: ProcessOptions = {}): Float32Array {
  const out = new Float32Array(logits.length);
  const r = f32(params.repetition_penalty ?? 1);
  const freq = f32(params.frequency_penalty ?? 0);
  const presence = f32(params.presence_penalty ?? 0);
  for (let i = 0; i < logits.length; i++) {
    let w = f32(logits[i]);
    const seen = options.counts?.[i] ?? 0;
    if (seen > 0) {
      w = w > 0 ? f32(w / r) : f32(w * r);
      w = f32(f32(w - f32(freq * seen)) - presence);
    }
    if (options.mask && (options.mask[i >> 5] & (1 << (i & 31))) === 0) w = LOWEST_F32;
    out[i] = w;
  }
  for (const [id, bias] of Object.entries(params.logit_bias ?? {})) {
    const i = Number(id);
    if (i >= 0 && i < out.length && !excluded(out[i])) out[i] = f32(out[i] + f32(bias));
  }
  return out;
}

export interface Distribution {
  /** Probability of each token after temperature, min-p, top-k and top-p (sums to 1; all 0 if none kept). */
  probs: Float64Array;
  /** Greedy answer (T <= 0) or -1 when sampling. */
  greedy: number;
  /** log-softmax of the processed logits at T = 1. */
  logprobs: Float64Array;
}

/** The exact distribution sample_token draws from, for processed logits `w`. */
export function samplingDistribution(w: Float32Array, params: SamplingParams): Distribution {
  const n = w.length;
  let best = -1;
  for (let i = 0; i < n; i++) if (!excluded(w[i]) && (best < 0 || w[i] > w[best])) best = i;
  const probs = new Float64Array(n);
  const logprobs = new Float64Array(n).fill(-Infinity);
  if (best < 0) return { probs, greedy: -1, logprobs };
  const m = w[best];
  let z1 = 0;
  for (let i = 0; i < n; i++) if (!excluded(w[i])) z1 += Math.exp(w[i] - m);
  for (let i = 0; i < n; i++) if (!excluded(w[i])) logprobs[i] = w[i] - m - Math.log(z1);
  if (!(params.temperature > 0)) {
    probs[best] = 1;
    return { probs, greedy: best, logprobs };
  }
  const t = params.temperature;
  const q = (i: number) => Math.exp((w[i] - m) / t);
  const topKey = f32Key(m);
  let threshold = 1;
  if ((params.min_p ?? 0) > 0) threshold = Math.min(Math.max(threshold, f32Key(f32(m + f32(Math.log(params.min_p!) * t)))), topKey);
  const keys = Array.from(w, f32Key);
  const topK = params.top_k ?? 0;
  if (topK > 0 && topK < n) {
    // the largest key t with count(key >= t) >= k: the k-th largest key
    const sorted = keys.filter((k) => k >= threshold).sort((a, b) => b - a);
    threshold = sorted.length >= topK ? sorted[topK - 1] : threshold;
  }
  if (params.top_p < 1) {
    let kept = 0;
    for (let i = 0; i < n; i++) if (keys[i] >= threshold) kept += q(i);
    const target = params.top_p * kept;
    // Keys from the largest down, each key's tokens in index order: the mass of {key >= t} after each key.
    const order = Array.from(keys.keys())
      .filter((i) => keys[i] >= threshold)
      .sort((a, b) => keys[b] - keys[a] || a - b);
    let mass = 0;
    for (let j = 0; j < order.length; j++) {
      mass += q(order[j]);
      const key = keys[order[j]];
      if ((j + 1 === order.length || keys[order[j + 1]] !== key) && mass >= target) {
        threshold = key;
        break;
      }
    }
  }
  let z = 0;
  for (let i = 0; i < n; i++) if (keys[i] >= threshold) z += q(i);
  for (let i = 0; i < n; i++) if (keys[i] >= threshold) probs[i] = q(i) / z;
  return { probs, greedy: -1, logprobs };
}

/** The token the sampler draws for this seed and step, with the distance of u from the nearest boundary. */
export function referenceSample(dist: Distribution, seed: number, step: number): { token: number; margin: number } {
  if (dist.greedy >= 0) return { token: dist.greedy, margin: 1 };
  const u = uniformFor(seed, step);
  let cumulative = 0;
  let last = -1;
  for (let i = 0; i < dist.probs.length; i++) {
    if (dist.probs[i] <= 0) continue;
    last = i;
    const next = cumulative + dist.probs[i];
    if (u < next) return { token: i, margin: Math.min(u - cumulative, next - u) };
    cumulative = next;
  }
  return { token: last, margin: 0 };
}
