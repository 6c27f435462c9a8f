// The inverse frequencies RoPE rotates by (the `inv_freq` buffer of shaders/rope.wgsl): one per rotation pair,
// inv_freq[p] = theta^(-2p / headDim) / factor[p] / linearScale, computed in f64 and rounded once to f32.
// factor[p] is 1 for plain RoPE, GGUF's `rope_freqs` tensor when the file has one (Llama 3.x), or the
// Llama-3 scaling factors computed from a Hugging Face config's `rope_scaling` (rope_type "llama3"), or YaRN's
// (gpt-oss; its magnitude factor goes into the attention scale, see yarnMagnitude).

export interface Llama3RopeScaling {
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  /** `original_max_position_embeddings`. */
  originalMaxPositions: number;
}

export interface RopeFrequencyOptions {
  headDim: number;
  /** The rotary base (`rope_theta`, GGUF `rope.freq_base`). */
  theta: number;
  /** Per-pair divisors of the frequency (GGUF `rope_freqs`), length headDim / 2. */
  freqFactors?: ArrayLike<number>;
  /** Llama-3 scaling; ignored when `freqFactors` is given (GGUF files carry the factors precomputed). */
  llama3?: Llama3RopeScaling;
  /** Linear position scaling (`rope_scaling` type "linear"; GGUF `rope.scaling.factor`): positions divided by it. */
  linearScale?: number;
  /** YaRN (gpt-oss): see yarnFrequencyFactors. */
  yarn?: YarnRopeScaling;
}

export interface YarnRopeScaling {
  factor: number;
  originalContextLength: number;
  betaFast: number;
  betaSlow: number;
}

/**
 * YaRN's frequency divisors, one per pair, as ggml's rope computes them (ext_factor 1): pair p rotates by
 * theta_p · (s·(1 - r_p) + r_p), s = 1/factor, r_p = 1 - clamp((p - lo) / max(0.001, hi - lo), 0, 1), where lo and hi
 * are the pairs whose wavelengths fit betaFast and betaSlow turns into the original context
 * (floor/ceil of headDim·ln(ctx / (beta·2π)) / (2 ln theta), clamped to [0, headDim - 1]).
 */
export function yarnFrequencyFactors(headDim: number, theta: number, y: YarnRopeScaling): Float64Array {
  const corrDim = (beta: number) => (headDim * Math.log(y.originalContextLength / (beta * 2 * Math.PI))) / (2 * Math.log(theta));
  const lo = Math.max(0, Math.floor(corrDim(y.betaFast)));
  const hi = Math.min(headDim - 1, Math.ceil(corrDim(y.betaSlow)));
  const s = 1 / y.factor;
  const out = new Float64Array(headDim / 2);
  for (let p = 0; p < headDim / 2; p++) {
    const r = 1 - Math.min(1, Math.max(0, (p - lo) / Math.max(0.001, hi - lo)));
    out[p] = 1 / (s * (1 - r) + r);
  }
  return out;
}

/** YaRN's magnitude factor on the rotated q and k (both), 1 + 0.1 ln(factor): attention scores scale by its square. */
export function yarnMagnitude(factor: number): number {
  return 1 + 0.1 * Math.log(factor);
}

/** Llama-3 frequency divisors, one per pair (the values GGUF converters store as `rope_freqs`). */
export function llama3FrequencyFactors(headDim: number, theta: number, s: Llama3RopeScaling): Float64Array {
  const out = new Float64Array(headDim / 2);
  const lowFreqWavelength = s.originalMaxPositions / s.lowFreqFactor;
  const highFreqWavelength = s.originalMaxPositions / s.highFreqFactor;
  for (let p = 0; p < headDim / 2; p++) {
    const frequency = theta ** ((-2 * p) / headDim);
    const wavelength = (2 * Math.PI) / frequency;
    if (wavelength < highFreqWavelength) out[p] = 1;
    else if (wavelength > lowFreqWavelength) out[p] = s.factor;
    else {
      const smooth = (s.originalMaxPositions / wavelength - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
      out[p] = 1 / ((1 - smooth) / s.factor + smooth);
    }
  }
  return out;
}

/** The f32 inverse frequencies [headDim / 2] for shaders/rope.wgsl. */
export function ropeInverseFrequencies(options: RopeFrequencyOptions): Float32Array {
  const { headDim, theta } = options;
  if (!Number.isInteger(headDim) || headDim <= 0 || headDim % 2 !== 0) {
    throw new RangeError(`RoPE head dimension must be a positive even integer, got ${headDim}`);
  }
  if (!(theta > 0)) throw new RangeError(`RoPE theta must be positive, got ${theta}`);
  const pairs = headDim / 2;
  const factors = options.freqFactors
    ?? (options.llama3 ? llama3FrequencyFactors(headDim, theta, options.llama3) : options.yarn ? yarnFrequencyFactors(headDim, theta, options.yarn) : undefined);
  if (factors && factors.length !== pairs) {
    throw new RangeError(`RoPE frequency factors have ${factors.length} entries, expected headDim / 2 = ${pairs}`);
  }
  const linearScale = options.linearScale ?? 1;
  const out = new Float32Array(pairs);
  for (let p = 0; p < pairs; p++) out[p] = theta ** ((-2 * p) / headDim) / (factors ? factors[p] : 1) / linearScale;
  return out;
}
