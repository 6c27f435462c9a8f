// Plain TypeScript references for the GPU kernels (computed in f64 from the same f32/f16 inputs), seeded random
// data, half-float conversion, and the tolerance the kernel tests use.

/** A seeded PRNG (mulberry32): the same seed gives the same data on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `length` f32 values uniform in [-scale, scale). */
export function randomF32(random: () => number, length: number, scale = 1): Float32Array {
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = (random() * 2 - 1) * scale;
  return out;
}

/** Random normal (not subnormal) half floats with magnitudes in [2^-6, 2^2), as raw 16-bit patterns. */
export function randomF16Bits(random: () => number, length: number): Uint16Array {
  const out = new Uint16Array(length);
  for (let i = 0; i < length; i++) {
    const sign = random() < 0.5 ? 0x8000 : 0;
    const exponent = 9 + Math.floor(random() * 8); // biased exponent 9..16: 2^-6 .. 2^1
    const mantissa = Math.floor(random() * 1024);
    out[i] = sign | (exponent << 10) | mantissa;
  }
  return out;
}

/** The value of an IEEE half-float bit pattern. */
export function f16BitsToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Half floats packed per the weight convention: element e in u32 word e>>1, low half for even e. */
export function packF16(bits: Uint16Array): Uint32Array {
  const words = new Uint32Array(Math.ceil(bits.length / 2));
  for (let e = 0; e < bits.length; e++) words[e >> 1] |= bits[e] << ((e & 1) * 16);
  return words;
}

export interface Reference {
  /** The exact-ish result (f64 arithmetic on the kernel's inputs). */
  values: Float64Array;
  /** Per output, the sum of |terms| that an f32 sum's rounding error is proportional to. */
  magnitude: Float64Array;
  /** Terms summed per output (for the rounding bound). */
  terms: number;
}

/** y[n] = W·x, W [n, k] row-major given as numbers (f32 or decoded f16). */
export function matvecReference(w: ArrayLike<number>, x: ArrayLike<number>, n: number, k: number): Reference {
  const values = new Float64Array(n);
  const magnitude = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    let sum = 0;
    let abs = 0;
    for (let j = 0; j < k; j++) {
      const t = w[r * k + j] * x[j];
      sum += t;
      abs += Math.abs(t);
    }
    values[r] = sum;
    magnitude[r] = abs;
  }
  return { values, magnitude, terms: k };
}

/** Y[m, n] = X[m, k]·Wᵀ, W [n, k] row-major. */
export function matmulReference(x: ArrayLike<number>, w: ArrayLike<number>, m: number, n: number, k: number): Reference {
  const values = new Float64Array(m * n);
  const magnitude = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let r = 0; r < n; r++) {
      let sum = 0;
      let abs = 0;
      for (let j = 0; j < k; j++) {
        const t = x[i * k + j] * w[r * k + j];
        sum += t;
        abs += Math.abs(t);
      }
      values[i * n + r] = sum;
      magnitude[i * n + r] = abs;
    }
  }
  return { values, magnitude, terms: k };
}

/** y = x / sqrt(mean(x²) + eps) * weight, per row of length n. */
export function rmsnormReference(x: ArrayLike<number>, weight: ArrayLike<number>, rows: number, n: number, eps: number): Float64Array {
  const out = new Float64Array(rows * n);
  for (let r = 0; r < rows; r++) {
    let squares = 0;
    for (let i = 0; i < n; i++) squares += x[r * n + i] ** 2;
    const scale = 1 / Math.sqrt(squares / n + eps);
    for (let i = 0; i < n; i++) out[r * n + i] = x[r * n + i] * scale * weight[i];
  }
  return out;
}

const F32_UNIT_ROUNDOFF = 2 ** -24;

/**
 * The first output that is further from the reference than an f32 sum in any order may be:
 * |got - exact| ≤ γ·Σ|terms| with γ = (terms + 2)·u (u = 2⁻²⁴; the classic bound for recursive or pairwise
 * summation with or without FMA, plus one rounding of each product and of the stored result), plus a tiny
 * absolute floor for sums that cancel to ~0. Returns null when every output is within it.
 */
export function firstSumMismatch(got: Float32Array, ref: Reference): string | null {
  const gamma = (ref.terms + 2) * F32_UNIT_ROUNDOFF;
  for (let i = 0; i < ref.values.length; i++) {
    const bound = gamma * ref.magnitude[i] + 1e-30;
    const error = Math.abs(got[i] - ref.values[i]);
    if (!(error <= bound)) {
      return `output ${i}: got ${got[i]}, expected ${ref.values[i]} (error ${error.toExponential(2)} > bound ${bound.toExponential(2)})`;
    }
  }
  if (got.length < ref.values.length) return `got ${got.length} outputs, expected ${ref.values.length}`;
  return null;
}

/** The first element whose relative error exceeds `relative` (with `absolute` as a floor), or null. */
export function firstMismatch(got: Float32Array, expected: Float64Array, relative: number, absolute: number): string | null {
  for (let i = 0; i < expected.length; i++) {
    const error = Math.abs(got[i] - expected[i]);
    if (!(error <= relative * Math.abs(expected[i]) + absolute)) {
      return `element ${i}: got ${got[i]}, expected ${expected[i]} (error ${error.toExponential(2)})`;
    }
  }
  return null;
}

/** Words of guard space after an output in the tests: a write past the end lands there. */
export const GUARD_WORDS = 16;
const SENTINEL = 0x7fc0dead; // a NaN pattern no kernel writes

/** The initial content of an output buffer of `length` f32s followed by guard words, all sentinel. */
export function sentinelOutput(length: number): Uint32Array {
  return new Uint32Array(length + GUARD_WORDS).fill(SENTINEL);
}

/** The outputs read back (length + guard words): null if the guard is intact, else which word was written. */
export function guardViolation(words: Uint32Array, length: number): string | null {
  for (let i = length; i < words.length; i++) {
    if (words[i] !== SENTINEL) return `a write past the end: word ${i} (output length ${length}) was overwritten`;
  }
  return null;
}

/**
 * shaders/moe_route.wgsl's reference: per token, the `used` largest of `experts` logits (ties to the lower id),
 * largest first, and the softmax over those chosen logits.
 */
export function moeRouteReference(logits: ArrayLike<number>, m: number, experts: number, used: number): { ids: number[]; weights: number[] } {
  const ids: number[] = [];
  const weights: number[] = [];
  for (let t = 0; t < m; t++) {
    const row = Array.from({ length: experts }, (_, e) => ({ e, v: logits[t * experts + e] }));
    const chosen = row.sort((a, b) => b.v - a.v || a.e - b.e).slice(0, used);
    const total = chosen.reduce((s, c) => s + Math.exp(c.v - chosen[0].v), 0);
    for (const c of chosen) {
      ids.push(c.e);
      weights.push(Math.exp(c.v - chosen[0].v) / total);
    }
  }
  return { ids, weights };
}
