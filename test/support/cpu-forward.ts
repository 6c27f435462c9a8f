// A plain TypeScript reference forward pass for the llama / qwen2 / qwen3 family: f32 weights (already
// dequantized), f64 accumulation, no tricks. It is the semantic yardstick the WGSL decoder is checked against
// (and is itself checked against llama.cpp in test/unit/forward-reference.test.ts).
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
  ) {
    this.keys = weights.layers.map(() => []);
    this.values = weights.layers.map(() => []);
  }

  /** Runs token `tok` at the next position and returns the logits over the vocabulary. */
  step(tok: number): Float32Array {
    const { cfg, weights } = this;
    const pos = this.position++;
    const { hiddenSize: d, headDim: hd, numHeads: nh, numKvHeads: nkv, intermediateSize: ff, vocabSize: vocab } = cfg;
    const group = nh / nkv;
    if (!(Number.isInteger(tok) && tok >= 0 && tok < vocab)) throw new RangeError(`token ${tok} outside the vocabulary (${vocab})`);
    const x = new Float64Array(weights.tokenEmbedding.subarray(tok * d, (tok + 1) * d));
    weights.layers.forEach((L, l) => {
      const h = rmsNorm(x, L.attnNorm, cfg.rmsNormEps);
      const q = matvec(L.wq, h, nh * hd, d, L.bq);
      const k = matvec(L.wk, h, nkv * hd, d, L.bk);
      const v = matvec(L.wv, h, nkv * hd, d, L.bv);
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
      const o = matvec(L.wo, attn, d, nh * hd);
      for (let i = 0; i < d; i++) x[i] += o[i];
      const h2 = rmsNorm(x, L.ffnNorm, cfg.rmsNormEps);
      const g = matvec(L.wGate, h2, ff, d);
      const u = matvec(L.wUp, h2, ff, d);
      for (let i = 0; i < ff; i++) g[i] = (g[i] / (1 + Math.exp(-g[i]))) * u[i];
      const down = matvec(L.wDown, g, d, ff);
      for (let i = 0; i < d; i++) x[i] += down[i];
    });
    const hf = rmsNorm(x, weights.outputNorm, cfg.rmsNormEps);
    return Float32Array.from(matvec(weights.lmHead ?? weights.tokenEmbedding, hf, vocab, d));
  }
}

/** Logits [tokens.length][vocab] of a causal forward pass over `tokens` from position 0. */
export function referenceForward(cfg: ReferenceConfig, weights: ReferenceWeights, tokens: readonly number[]): Float32Array[] {
  const decoder = new ReferenceDecoder(cfg, weights);
  return tokens.map((t) => decoder.step(t));
}

export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let j = 1; j < values.length; j++) if (values[j] > values[best]) best = j;
  return best;
}

/** Greedy continuation of `prompt` for `count` tokens. */
export function referenceGreedy(cfg: ReferenceConfig, weights: ReferenceWeights, prompt: readonly number[], count: number): number[] {
  const decoder = new ReferenceDecoder(cfg, weights);
  let logits: Float32Array = new Float32Array(0);
  for (const t of prompt) logits = decoder.step(t);
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
