// A plain TypeScript reference forward pass for the llama / qwen2 / qwen3 family: f32 weights (already
// dequantized), f64 accumulation, no tricks. It is the semantic yardstick the WGSL decoder is checked against
// (and is itself checked against llama.cpp in test/unit/forward-reference.test.ts).
// Optionally (Q8Activations) the products the GPU runs on 8-bit activations take their input as the GPU does:
// rounded to f32, then quantized as shaders/quantize_activations.wgsl does (quantizeInt8Activations: q8_0, a d per 16)
// and dequantized, d·q; the product itself stays f64, so only the GPU's f32 sums differ from it.
//
// Weights are row-major [N outputs, K inputs] with K contiguous (GGUF ne0 = K), like the GPU kernels use.
// RoPE style: 'interleaved' rotates pairs (2i, 2i+1) (GGUF `llama`, whose q/k rows llama.cpp's converter
// permuted); 'neox' rotates pairs (i, i + d/2) (Qwen, and every Hugging Face layout).

import { ggufMetadata, type GgufFile } from '../../src/model/gguf.ts';
import { dequantizeGguf } from '../../src/model/dequantize.ts';

export type RopeStyle = 'interleaved' | 'neox';

export interface ReferenceConfig {
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  vocabSize: number;
  rmsNormEps: number;
  ropeTheta: number;
  ropeStyle: RopeStyle;
  /** Per rotation pair (headDim/2) divisor of the frequency (Llama-3 scaling, GGUF `rope_freqs`); none = all 1. */
  ropeFreqFactors?: Float32Array;
}

export interface ReferenceLayerWeights {
  attnNorm: Float32Array;
  wq: Float32Array;
  wk: Float32Array;
  wv: Float32Array;
  bq?: Float32Array;
  bk?: Float32Array;
  bv?: Float32Array;
  /** Qwen3: RMSNorm weights over head_dim applied to each q / k head before RoPE. */
  qNorm?: Float32Array;
  kNorm?: Float32Array;
  wo: Float32Array;
  ffnNorm: Float32Array;
  wGate: Float32Array;
  wUp: Float32Array;
  wDown: Float32Array;
}

export interface ReferenceWeights {
  /** [vocab, hidden]. */
  tokenEmbedding: Float32Array;
  layers: ReferenceLayerWeights[];
  outputNorm: Float32Array;
  /** [vocab, hidden]; absent when tied to the embedding. */
  lmHead?: Float32Array;
}

/** Llama-3 rope scaling as GGUF's `rope_freqs` stores it: one divisor per rotation pair. */
export function llama3RopeFreqFactors(
  headDim: number,
  theta: number,
  s: { factor: number; lowFreqFactor: number; highFreqFactor: number; originalContextLength: number },
): Float32Array {
  const out = new Float32Array(headDim / 2);
  const lowWavelen = s.originalContextLength / s.lowFreqFactor;
  const highWavelen = s.originalContextLength / s.highFreqFactor;
  for (let i = 0; i < headDim / 2; i++) {
    const freq = 1 / theta ** ((2 * i) / headDim);
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < highWavelen) out[i] = 1;
    else if (wavelen > lowWavelen) out[i] = s.factor;
    else {
      const smooth = (s.originalContextLength / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
      out[i] = 1 / ((1 - smooth) / s.factor + smooth);
    }
  }
  return out;
}

/** f16 rounding (nearest, ties to even) of a finite value well inside the f16 range. */
export function f16Round(value: number): number {
  const a = Math.abs(value);
  if (a === 0) return value;
  let e = Math.max(Math.floor(Math.log2(a)), -14);
  if (e > -14 && 2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  const quantum = 2 ** (e - 10); // subnormal halves: 2^-24
  const n = a / quantum;
  const f = Math.floor(n);
  const r = n - f > 0.5 || (n - f === 0.5 && f % 2 === 1) ? f + 1 : f;
  return Math.sign(value) * r * quantum;
}

/** One row as the int8 products' activations (shaders/quantize_activations.wgsl): ggml's q8_0 with a d per 16 values. */
export interface Int8ActivationRow {
  /** Per value the code in [-127, 127]. */
  codes: Int8Array;
  /** Per half block of 16 values its scale as stored (f16, here as its value). */
  d: Float32Array;
  /** Per half block Σ codes. */
  sums: Int32Array;
}

/** Values per activation scale. */
export const INT8_ACTIVATION_BLOCK = 16;

/** Values of x·id nearer than this to a rounding tie are reported (Int8ActivationOptions.tie). */
export const Q8_TIE_DISTANCE = 1e-3;

export interface Int8ActivationOptions {
  /** Round value i the other way (toward the other nearest integer): a tie the GPU's f32 inputs took the other side of. */
  other?: (i: number) => boolean;
  /** Called for each value i whose x·id is within Q8_TIE_DISTANCE of a tie (distance |x·id - k - 1/2|). */
  tie?: (i: number, distance: number) => void;
}

/**
 * x (length a multiple of 32, each value first rounded to f32) as the int8 products' activations: ggml's
 * quantize_row_q8_0_ref per half block of 16: d = max|x| / 127 in f32, id = 1/d (0 for an all-zero half), code =
 * x·id rounded half away from zero (C's roundf), d stored as f16.
 */
export function quantizeInt8Activations(x: ArrayLike<number>, options: Int8ActivationOptions = {}): Int8ActivationRow {
  if (x.length % 32 !== 0) throw new RangeError(`int8 activations: ${x.length} values are not whole blocks of 32`);
  const B = INT8_ACTIVATION_BLOCK;
  const blocks = x.length / B;
  const codes = new Int8Array(x.length);
  const d = new Float32Array(blocks);
  const sums = new Int32Array(blocks);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    for (let j = 0; j < B; j++) amax = Math.max(amax, Math.abs(Math.fround(x[b * B + j])));
    const scale = Math.fround(amax / 127);
    const id = scale ? Math.fround(1 / scale) : 0;
    for (let j = 0; j < B; j++) {
      const i = b * B + j;
      const v = Math.fround(Math.fround(x[i]) * id);
      let q = Math.sign(v) * Math.round(Math.abs(v));
      const distance = Math.abs(Math.abs(v - Math.trunc(v)) - 0.5);
      if (distance < Q8_TIE_DISTANCE) {
        options.tie?.(i, distance);
        if (options.other?.(i)) q = Math.abs(q) > Math.abs(v) ? q - Math.sign(v) : q + Math.sign(v);
      }
      q = Math.max(-127, Math.min(127, q));
      codes[i] = q;
      sums[b] += q;
    }
    d[b] = f16Round(scale);
  }
  return { codes, d, sums };
}

/** The values an int8 activation row stands for: d·q per value (exact in f32). */
export function dequantizeInt8Activations(row: Int8ActivationRow): Float64Array {
  const out = new Float64Array(row.codes.length);
  for (let i = 0; i < out.length; i++) out[i] = row.d[Math.floor(i / INT8_ACTIVATION_BLOCK)] * row.codes[i];
  return out;
}

/**
 * Which products take their input as 8-bit activations in a step of m tokens (the GPU's choice: the Decoder's
 * ForwardKernels.int8Product of the weight's type); `tensor` is the GGUF name of the product's weight
 * ('blk.0.attn_q.weight', ... 'output.weight', which names the LM head also where it is the tied embedding).
 */
export type Q8Activations = ((tensor: string, m: number) => boolean) & {
  /**
   * The GPU's norms ride on the products (ForwardPlan.fusedNorms): a product whose input is a fused norm's (layer
   * l > 0's q/k/v, every gate/up, the LM head where it reads the normed stream: decode steps and 'all' logits)
   * gets Y·g quantized and the token's 1/rms applied to its sums, not RMSNorm(Y)·g quantized.
   */
  fusedNorms?: boolean;
};

function rmsNorm(x: Float32Array | Float64Array, w: Float32Array, eps: number, offset = 0, n = w.length): Float64Array {
  let ss = 0;
  for (let i = 0; i < n; i++) ss += x[offset + i] * x[offset + i];
  const scale = 1 / Math.sqrt(ss / n + eps);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = x[offset + i] * scale * w[i];
  return out;
}

/** y[N] = W[N,K] · x[K] (+ b). */
function matvec(w: Float32Array, x: ArrayLike<number>, n: number, k: number, b?: Float32Array): Float64Array {
  const y = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    let acc = 0;
    const base = r * k;
    for (let c = 0; c < k; c++) acc += w[base + c] * x[c];
    y[r] = acc + (b ? b[r] : 0);
  }
  return y;
}

function applyRope(v: Float64Array, offset: number, headDim: number, pos: number, cfg: ReferenceConfig): void {
  const half = headDim / 2;
  for (let i = 0; i < half; i++) {
    const factor = cfg.ropeFreqFactors ? cfg.ropeFreqFactors[i] : 1;
    const angle = (pos * cfg.ropeTheta ** ((-2 * i) / headDim)) / factor;
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    const i0 = cfg.ropeStyle === 'interleaved' ? offset + 2 * i : offset + i;
    const i1 = cfg.ropeStyle === 'interleaved' ? i0 + 1 : i0 + half;
    const x0 = v[i0];
    const x1 = v[i1];
    v[i0] = x0 * c - x1 * s;
    v[i1] = x0 * s + x1 * c;
  }
}

/** A stateful reference decoder: feed tokens one at a time, get each position's logits. */
export class ReferenceDecoder {
  private readonly keys: Float64Array[][];
  private readonly values: Float64Array[][];
  position = 0;

  constructor(
    private readonly cfg: ReferenceConfig,
    private readonly weights: ReferenceWeights,
    /** Products on int8 activations (none by default: every product reads f64 activations). */
    private readonly q8?: Q8Activations,
    /** Values (ReferenceDecoder.ties keys) to round the other way. */
    private readonly roundOther: ReadonlySet<string> = new Set(),
  ) {
    this.keys = weights.layers.map(() => []);
    this.values = weights.layers.map(() => []);
  }

  /**
   * The values quantized so far that came within Q8_TIE_DISTANCE of a rounding tie (key `position:site:index`,
   * site the product input: blk.N.attn_qkv, blk.N.attn_output, blk.N.ffn_gate_up, blk.N.ffn_down, output): the
   * GPU's f32 activations, a few ulps from these, may round them the other way (ReferenceOptions.roundOther).
   */
  readonly ties: { key: string; position: number; distance: number }[] = [];

  /**
   * Runs token `tok` at the next position and returns the logits over the vocabulary; m: the tokens of the GPU
   * step this position belongs to (1: a decode step), which decides the products on int8 activations; headM: the
   * rows of that step's LM head product (1 where the step returns only the last position's logits).
   */
  step(tok: number, m = 1, headM = m): Float32Array {
    const { cfg, weights } = this;
    const pos = this.position++;
    const seen = new Set<string>();
    // norm: the residual x (read now, before the layer adds to it) and the norm's weights g where v = RMSNorm(x)·g
    // came from a fused norm on the GPU.
    const input = (site: string, tensor: string, v: Float64Array, norm?: { x: Float64Array; g: Float32Array }): ArrayLike<number> => {
      if (!this.q8?.(tensor, tensor === 'output.weight' ? headM : m)) return v;
      const key = (i: number) => `${pos}:${site}:${i}`;
      const prenorm = norm && this.q8.fusedNorms;
      let r = 1;
      let values = v;
      if (prenorm) {
        let ss = 0;
        for (let i = 0; i < norm.x.length; i++) ss += norm.x[i] * norm.x[i];
        r = 1 / Math.sqrt(ss / norm.x.length + cfg.rmsNormEps);
        values = Float64Array.from(norm.x, (xi, i) => xi * norm.g[i]);
      }
      const q = dequantizeInt8Activations(quantizeInt8Activations(values, {
        other: (i) => this.roundOther.has(key(i)),
        tie: (i, distance) => {
          if (!seen.has(key(i))) this.ties.push({ key: key(i), position: pos, distance });
          seen.add(key(i));
        },
      }));
      if (prenorm) for (let i = 0; i < q.length; i++) q[i] *= r;
      return q;
    };
    const { hiddenSize: d, headDim: hd, numHeads: nh, numKvHeads: nkv, intermediateSize: ff, vocabSize: vocab } = cfg;
    const group = nh / nkv;
    if (!(Number.isInteger(tok) && tok >= 0 && tok < vocab)) throw new RangeError(`token ${tok} outside the vocabulary (${vocab})`);
    const x = new Float64Array(weights.tokenEmbedding.subarray(tok * d, (tok + 1) * d));
    weights.layers.forEach((L, l) => {
      const p = `blk.${l}.`;
      const h = rmsNorm(x, L.attnNorm, cfg.rmsNormEps);
      // Layer 0's norm is a dispatch of its own on the GPU; the later ones ride on the down product before them.
      const attnNorm = l > 0 ? { x, g: L.attnNorm } : undefined;
      const q = matvec(L.wq, input(p + 'attn_qkv', p + 'attn_q.weight', h, attnNorm), nh * hd, d, L.bq);
      const k = matvec(L.wk, input(p + 'attn_qkv', p + 'attn_k.weight', h, attnNorm), nkv * hd, d, L.bk);
      const v = matvec(L.wv, input(p + 'attn_qkv', p + 'attn_v.weight', h, attnNorm), nkv * hd, d, L.bv);
      if (L.qNorm) for (let hh = 0; hh < nh; hh++) q.set(rmsNorm(q, L.qNorm, cfg.rmsNormEps, hh * hd, hd), hh * hd);
      if (L.kNorm) for (let hh = 0; hh < nkv; hh++) k.set(rmsNorm(k, L.kNorm, cfg.rmsNormEps, hh * hd, hd), hh * hd);
      for (let hh = 0; hh < nh; hh++) applyRope(q, hh * hd, hd, pos, cfg);
      for (let hh = 0; hh < nkv; hh++) applyRope(k, hh * hd, hd, pos, cfg);
      this.keys[l].push(k);
      this.values[l].push(v);
      const attn = new Float64Array(nh * hd);
      const scale = 1 / Math.sqrt(hd);
      for (let hh = 0; hh < nh; hh++) {
        const kvh = Math.floor(hh / group);
        const scores = new Float64Array(pos + 1);
        let max = -Infinity;
        for (let t = 0; t <= pos; t++) {
          let s = 0;
          const kt = this.keys[l][t];
          for (let i = 0; i < hd; i++) s += q[hh * hd + i] * kt[kvh * hd + i];
          scores[t] = s * scale;
          if (scores[t] > max) max = scores[t];
        }
        let sum = 0;
        for (let t = 0; t <= pos; t++) sum += (scores[t] = Math.exp(scores[t] - max));
        for (let t = 0; t <= pos; t++) {
          const p = scores[t] / sum;
          const vt = this.values[l][t];
          for (let i = 0; i < hd; i++) attn[hh * hd + i] += p * vt[kvh * hd + i];
        }
      }
      const o = matvec(L.wo, input(p + 'attn_output', p + 'attn_output.weight', attn), d, nh * hd);
      for (let i = 0; i < d; i++) x[i] += o[i];
      const h2 = rmsNorm(x, L.ffnNorm, cfg.rmsNormEps);
      const ffnNorm = { x, g: L.ffnNorm };
      const g = matvec(L.wGate, input(p + 'ffn_gate_up', p + 'ffn_gate.weight', h2, ffnNorm), ff, d);
      const u = matvec(L.wUp, input(p + 'ffn_gate_up', p + 'ffn_up.weight', h2, ffnNorm), ff, d);
      for (let i = 0; i < ff; i++) g[i] = (g[i] / (1 + Math.exp(-g[i]))) * u[i];
      const down = matvec(L.wDown, input(p + 'ffn_down', p + 'ffn_down.weight', g), d, ff);
      for (let i = 0; i < d; i++) x[i] += down[i];
    });
    const hf = rmsNorm(x, weights.outputNorm, cfg.rmsNormEps);
    // The LM head reads the fused output norm where it takes every row (or the only one); else the last row's own norm.
    const outputNorm = headM === m ? { x, g: weights.outputNorm } : undefined;
    return Float32Array.from(matvec(weights.lmHead ?? weights.tokenEmbedding, input('output', 'output.weight', hf, outputNorm), vocab, d));
  }
}

/** Logits [tokens.length][vocab] of a causal forward pass over `tokens` from position 0 (q8: as one GPU step). */
export function referenceForward(cfg: ReferenceConfig, weights: ReferenceWeights, tokens: readonly number[], q8?: Q8Activations): Float32Array[] {
  const decoder = new ReferenceDecoder(cfg, weights, q8);
  return tokens.map((t) => decoder.step(t, tokens.length));
}

/** One position of a reference run: its token, its GPU step's m and LM head rows (default m). */
export interface ReferenceStep {
  token: number;
  m: number;
  headM?: number;
}

function maxAbs(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

/**
 * The reference along `steps` with q8 activations, against the GPU's logits `got` (null where a step returned
 * none): the values the reference quantized within Q8_TIE_DISTANCE of a rounding tie may round either way on the
 * GPU (its f32 inputs are a few ulps off the reference's), so where a position is off by more than `tolerance`,
 * the nearest ties at or before it are tried rounded the other way, one at a time (at most maxFlips in all). Only
 * such ties move; a wrong kernel stays off. Returns the reference's logits, the ties it rounded the other way and
 * the largest |got - reference| then.
 */
export function referenceNearTies(
  model: ReferenceModel,
  steps: readonly ReferenceStep[],
  q8: Q8Activations,
  got: readonly (Float32Array | null)[],
  tolerance: number,
  maxFlips = 4,
): { logits: Float32Array[]; flipped: string[]; maxDiff: number } {
  const run = (flips: ReadonlySet<string>) => {
    const decoder = new ReferenceDecoder(model.config, model.weights, q8, flips);
    const logits = steps.map((s) => decoder.step(s.token, s.m, s.headM ?? s.m));
    const diffs = logits.map((l, i) => (got[i] ? maxAbs(got[i]!, l) : 0));
    return { logits, diffs, first: diffs.findIndex((d) => !(d <= tolerance)), ties: decoder.ties };
  };
  let flips = new Set<string>();
  let current = run(flips);
  while (current.first >= 0 && flips.size < maxFlips) {
    const first = current.first;
    const candidates = current.ties.filter((t) => t.position <= first && !flips.has(t.key)).sort((a, b) => a.distance - b.distance).slice(0, 8);
    let next: typeof current | null = null;
    for (const c of candidates) {
      const trial = new Set([...flips, c.key]);
      const r = run(trial);
      if (r.first < 0 || r.first > first) {
        flips = trial;
        next = r;
        break;
      }
    }
    if (!next) break;
    current = next;
  }
  return { logits: current.logits, flipped: [...flips], maxDiff: Math.max(0, ...current.diffs) };
}

export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let j = 1; j < values.length; j++) if (values[j] > values[best]) best = j;
  return best;
}

/** Greedy continuation of `prompt` for `count` tokens (q8: the prompt as one GPU step, then decode steps). */
export function referenceGreedy(cfg: ReferenceConfig, weights: ReferenceWeights, prompt: readonly number[], count: number, q8?: Q8Activations): number[] {
  const decoder = new ReferenceDecoder(cfg, weights, q8);
  let logits: Float32Array = new Float32Array(0);
  for (const t of prompt) logits = decoder.step(t, prompt.length);
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const next = argmax(logits);
    out.push(next);
    if (i + 1 < count) logits = decoder.step(next);
  }
  return out;
}

// ---- loading a reference model from a GGUF file (any ByteSource: works in Node and in a page) ----------


export interface ReferenceModel {
  config: ReferenceConfig;
  weights: ReferenceWeights;
}

/** Every tensor of a GGUF file dequantized to f32, with the config its metadata gives. */
export async function referenceModelFromGguf(file: GgufFile): Promise<ReferenceModel> {
  const arch = ggufMetadata(file, 'general.architecture', 'string');
  if (arch !== 'llama' && arch !== 'qwen2' && arch !== 'qwen3') throw new Error(`reference forward: unsupported architecture ${arch}`);
  const num = (key: string) => ggufMetadata(file, `${arch}.${key}`, 'number');
  const optionalNum = (key: string) => (typeof file.metadata[`${arch}.${key}`] === 'number' ? num(key) : undefined);
  const tensor = async (name: string): Promise<Float32Array | undefined> => {
    const info = file.tensors.find((t) => t.name === name);
    if (!info) return undefined;
    return dequantizeGguf(info.type, await file.source.read(info.offset, info.byteLength));
  };
  const required = async (name: string): Promise<Float32Array> => {
    const t = await tensor(name);
    if (!t) throw new Error(`reference forward: missing tensor ${name}`);
    return t;
  };
  const hiddenSize = num('embedding_length');
  const numHeads = num('attention.head_count');
  const embedding = file.tensors.find((t) => t.name === 'token_embd.weight');
  if (!embedding) throw new Error('reference forward: missing token_embd.weight');
  const config: ReferenceConfig = {
    hiddenSize,
    intermediateSize: num('feed_forward_length'),
    numLayers: num('block_count'),
    numHeads,
    numKvHeads: optionalNum('attention.head_count_kv') ?? numHeads,
    headDim: optionalNum('attention.key_length') ?? hiddenSize / numHeads,
    vocabSize: embedding.shape[0],
    rmsNormEps: num('attention.layer_norm_rms_epsilon'),
    ropeTheta: optionalNum('rope.freq_base') ?? 10000,
    ropeStyle: arch === 'llama' ? 'interleaved' : 'neox',
    ropeFreqFactors: await tensor('rope_freqs.weight'),
  };
  const layers: ReferenceLayerWeights[] = [];
  for (let l = 0; l < config.numLayers; l++) {
    const p = `blk.${l}.`;
    layers.push({
      attnNorm: await required(p + 'attn_norm.weight'),
      wq: await required(p + 'attn_q.weight'),
      wk: await required(p + 'attn_k.weight'),
      wv: await required(p + 'attn_v.weight'),
      bq: await tensor(p + 'attn_q.bias'),
      bk: await tensor(p + 'attn_k.bias'),
      bv: await tensor(p + 'attn_v.bias'),
      qNorm: await tensor(p + 'attn_q_norm.weight'),
      kNorm: await tensor(p + 'attn_k_norm.weight'),
      wo: await required(p + 'attn_output.weight'),
      ffnNorm: await required(p + 'ffn_norm.weight'),
      wGate: await required(p + 'ffn_gate.weight'),
      wUp: await required(p + 'ffn_up.weight'),
      wDown: await required(p + 'ffn_down.weight'),
    });
  }
  const weights: ReferenceWeights = {
    tokenEmbedding: await required('token_embd.weight'),
    layers,
    outputNorm: await required('output_norm.weight'),
    lmHead: await tensor('output.weight'),
  };
  return { config, weights };
}
