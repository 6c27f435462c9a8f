// The decoder's vocabulary, apart from decoder.ts so that the forward plan (forward-plan.ts) and the decoder can
// both use it: the weights as they sit in GPU memory (matrices split by rows over buffers, vectors, a layer's
// weights), the logits modes, the token chooser a step is given, a step's result, and the matrices a layer's
// products read.
import type { GpuWeightFormatName } from '../common/weight-formats.ts';
import type { ComputeBatch } from '../gpu/dispatch.ts';
import type { RopeFileFactors } from './model-config.ts';
import type { MoeWeights } from './moe-ffn.ts';

/** Weight types as they sit in GPU memory (BF16 arrives widened to F32). */
/** The weight formats GPU buffers hold (src/common/weight-formats.ts). */
export type GpuWeightType = GpuWeightFormatName;

/** One buffer of a matrix: rows [rowStart, rowStart + rowCount) in the GPU layout of its type. */
export interface GpuWeightPart {
  buffer: GPUBuffer;
  rowStart: number;
  rowCount: number;
}

/** A weight matrix [rows, cols] (cols contiguous) in GPU memory, possibly split by rows over several buffers. */
export interface GpuMatrix {
  name: string;
  type: GpuWeightType;
  rows: number;
  cols: number;
  /**
   * Matrices of this shape held together (default 1): each part's buffer holds its rows of each in turn (the
   * weight loader's tensor groups; the gate and up matrices stack as 2).
   */
  stacked?: number;
  parts: GpuWeightPart[];
}

/** A layer's q, k and v projections: one concatenated matrix (rows q, then k, then v; one dispatch), or apart. */
export type QkvWeights = { concatenated: GpuMatrix } | { q: GpuMatrix; k: GpuMatrix; v: GpuMatrix };

/**
 * A layer's SwiGLU input projections: stacked in shared buffers (one dispatch computes silu(gate·x)·(up·x)), or
 * apart when a file gives them different types (two products and the SwiGLU kernel).
 */
export type GateUpWeights = { stacked: GpuMatrix } | { gate: GpuMatrix; up: GpuMatrix };

/** An f32 vector (norm weights, biases) in GPU memory. */
export interface GpuVector {
  name: string;
  buffer: GPUBuffer;
  length: number;
}

export interface DecoderLayerWeights {
  attnNorm: GpuVector;
  qkv: QkvWeights;
  bq?: GpuVector;
  bk?: GpuVector;
  bv?: GpuVector;
  qNorm?: GpuVector;
  kNorm?: GpuVector;
  wo: GpuMatrix;
  /** The output projection's bias (gpt-oss). */
  bo?: GpuVector;
  /** Attention-sink logits [heads] (gpt-oss). */
  sinks?: GpuVector;
  ffnNorm: GpuVector;
  /** Gemma 3: the RMSNorm of the attention output before its residual add (blk.N.post_attention_norm). */
  postAttnNorm?: GpuVector;
  /** Gemma 3: the RMSNorm of the feed-forward output before its residual add (blk.N.post_ffw_norm). */
  postFfnNorm?: GpuVector;
  /** The dense feed-forward (absent in mixture-of-experts layers, which have `moe`). */
  gateUp?: GateUpWeights;
  wDown?: GpuMatrix;
  moe?: MoeWeights;
}

export interface DecoderWeights {
  tokenEmbedding: GpuMatrix;
  layers: DecoderLayerWeights[];
  outputNorm: GpuVector;
  /** The LM head; the token embedding itself when tied. */
  lmHead: GpuMatrix;
  /** The file's RoPE factors (GGUF rope_freqs, or LongRoPE's short and long), read on the CPU. */
  ropeFreqFactors?: RopeFileFactors;
}

export type LogitsMode = 'none' | 'last' | 'all';

/**
 * Records, into the step's command buffer, the choice of the next token from the last position's logits
 * (f32 [vocabSize] in `logits`): token id into out[0] as a u32; out[1..3] are free for the chooser (e.g. the
 * chosen token's logprob bits) and come back in StepResult.chosen. The default is argmax (greedy). This is
 * where GPU sampling and constraint masks plug in (issue 5).
 */
export type TokenChooser = (batch: ComputeBatch, a: { logits: GPUBuffer; vocabSize: number; out: GPUBuffer }) => void;

export interface StepResult {
  /** The next token the chooser picked (default: argmax of the last position's logits, the greedy token). */
  nextToken: number;
  /** The 4 u32 words the chooser wrote (word 0 = nextToken; argmax puts the logit's f32 bits in word 1). */
  chosen: Uint32Array;
  /** 'last': one row; 'all': one row per input token. */
  logits?: Float32Array[];
}

export function qkvMatrices(q: QkvWeights): GpuMatrix[] {
  return 'concatenated' in q ? [q.concatenated] : [q.q, q.k, q.v];
}

export function gateUpMatrices(g: GateUpWeights): GpuMatrix[] {
  return 'stacked' in g ? [g.stacked] : [g.gate, g.up];
}

/** A layer's feed-forward matrices that the dense product kernels read (a mixture of experts: the router). */
export function ffnMatrices(l: DecoderLayerWeights): GpuMatrix[] {
  return l.moe ? [l.moe.router] : [...gateUpMatrices(l.gateUp!), l.wDown!];
}

/** The matrices the product kernels read (the token embedding is only looked up, unless it is the LM head). */
export function productMatrices(w: DecoderWeights): GpuMatrix[] {
  return [w.lmHead, ...w.layers.flatMap((l) => [...qkvMatrices(l.qkv), l.wo, ...ffnMatrices(l)])];
}
