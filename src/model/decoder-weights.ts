// Assembles the decoder's weights (DecoderWeights) from GPU tensors named as in GGUF (token_embd.weight,
// blk.N.attn_q.weight, ...; Hugging Face names map onto these in model-config.ts), whatever loaded them.
import type { DecoderLayerWeights, DecoderWeights, GateUpWeights, GpuExperts, GpuMatrix, GpuVector, GpuWeightType, MoeWeights, QkvWeights } from './decoder.ts';
import type { ModelConfig, RopeFileFactors } from './model-config.ts';
import { WEIGHT_FORMAT } from '../common/weight-formats.ts';

/** A tensor in GPU memory as the decoder needs it: a matrix in parts, or an f32 vector. */
export type GpuTensor = ({ kind: 'matrix' } & GpuMatrix) | ({ kind: 'vector' } & GpuVector);

/** Looks up a loaded tensor by its GGUF name (undefined when the model has none). */
export type GpuTensorLookup = (ggufName: string) => GpuTensor | undefined;

function need<T extends GpuTensor['kind']>(lookup: GpuTensorLookup, name: string, kind: T): Extract<GpuTensor, { kind: T }> {
  const t = lookup(name);
  if (!t) throw new Error(`The model has no tensor ${name}`);
  if (t.kind !== kind) throw new Error(`Tensor ${name} should be a ${kind}, it is a ${t.kind}`);
  return t as Extract<GpuTensor, { kind: T }>;
}

function optional<T extends GpuTensor['kind']>(lookup: GpuTensorLookup, name: string, kind: T): Extract<GpuTensor, { kind: T }> | undefined {
  return lookup(name) ? need(lookup, name, kind) : undefined;
}

function checkMatrix(m: GpuMatrix, rows: number, cols: number): GpuMatrix {
  if (m.rows !== rows || m.cols !== cols) throw new Error(`Tensor ${m.name} is [${m.rows}, ${m.cols}], expected [${rows}, ${cols}]`);
  const covered = m.parts.reduce((s, p) => s + p.rowCount, 0);
  if (covered !== rows) throw new Error(`Tensor ${m.name}: its parts hold ${covered} of ${rows} rows`);
  return m;
}

function checkVector(v: GpuVector | undefined, length: number): GpuVector | undefined {
  if (v && v.length !== length) throw new Error(`Tensor ${v.name} has ${v.length} values, expected ${length}`);
  return v;
}

/** A layer's q, k and v matrices: concatenated as blk.N.attn_qkv.weight (the weights upload does that when they share a type), else the three tensors. */
function qkvWeights(lookup: GpuTensorLookup, layer: number, c: ModelConfig): QkvWeights {
  const p = `blk.${layer}.`;
  const qDim = c.heads * c.headDim;
  const kvDim = c.kvHeads * c.headDim;
  const concatenated = optional(lookup, p + 'attn_qkv.weight', 'matrix');
  if (concatenated) return { concatenated: checkMatrix(concatenated, qDim + 2 * kvDim, c.hidden) };
  return {
    q: checkMatrix(need(lookup, p + 'attn_q.weight', 'matrix'), qDim, c.hidden),
    k: checkMatrix(need(lookup, p + 'attn_k.weight', 'matrix'), kvDim, c.hidden),
    v: checkMatrix(need(lookup, p + 'attn_v.weight', 'matrix'), kvDim, c.hidden),
  };
}

/**
 * A layer's gate and up matrices: stacked as blk.N.ffn_gate_up.weight (the weights upload stacks them when they
 * share type and shape), else the two tensors.
 */
function gateUpWeights(lookup: GpuTensorLookup, layer: number, c: ModelConfig): GateUpWeights {
  const p = `blk.${layer}.`;
  const stacked = optional(lookup, p + 'ffn_gate_up.weight', 'matrix');
  if (stacked) {
    if (stacked.stacked !== 2) throw new Error(`Tensor ${stacked.name} should stack 2 matrices (gate, up), it stacks ${stacked.stacked ?? 1}`);
    return { stacked: checkMatrix(stacked, c.intermediate, c.hidden) };
  }
  return {
    gate: checkMatrix(need(lookup, p + 'ffn_gate.weight', 'matrix'), c.intermediate, c.hidden),
    up: checkMatrix(need(lookup, p + 'ffn_up.weight', 'matrix'), c.intermediate, c.hidden),
  };
}

/** An f32 vector of `length` values: a vector tensor, or an F32 matrix in one buffer read flat (expert biases [experts, n]). */
function flatVector(lookup: GpuTensorLookup, name: string, length: number): GpuVector {
  const t = lookup(name);
  if (!t) throw new Error(`The model has no tensor ${name}`);
  if (t.kind === 'vector') return checkVector(t, length)!;
  if (t.type !== 'F32' || t.parts.length !== 1 || (t.stacked ?? 1) !== 1) throw new Error(`Tensor ${name} should be f32 values in one buffer`);
  return checkVector({ name, buffer: t.parts[0].buffer, length: t.rows * t.cols }, length)!;
}

/** Expert matrices [experts, rows, cols] from a loaded tensor of experts·rows rows whose parts hold whole experts. */
function expertMatrices(lookup: GpuTensorLookup, name: string, experts: number, rows: number, cols: number, stacked: number): GpuExperts {
  const m = need(lookup, name, 'matrix');
  checkMatrix(m, experts * rows, cols);
  if ((m.stacked ?? 1) !== stacked) throw new Error(`Tensor ${name} should stack ${stacked} matrices, it stacks ${m.stacked ?? 1}`);
  const parts = m.parts.map((p) => {
    if (p.rowStart % rows !== 0 || p.rowCount % rows !== 0) throw new Error(`Tensor ${name}: a buffer holds rows ${p.rowStart}..${p.rowStart + p.rowCount}, not whole experts of ${rows} rows`);
    return { buffer: p.buffer, expertStart: p.rowStart / rows, expertCount: p.rowCount / rows };
  });
  return { name, type: m.type, experts, rows, cols, stacked, parts };
}

/** A layer's mixture-of-experts feed-forward (gpt-oss; gate and up experts stacked as the weights upload groups them). */
function moeWeights(lookup: GpuTensorLookup, layer: number, c: ModelConfig & { moe: NonNullable<ModelConfig['moe']> }): MoeWeights {
  const p = `blk.${layer}.`;
  const { experts } = c.moe;
  const I = c.intermediate;
  if (!lookup(p + 'ffn_gate_up_exps.weight')) {
    throw new Error(`Layer ${layer}: the gate and up experts (${p}ffn_gate_exps.weight, ${p}ffn_up_exps.weight) must share one type and shape, which this runtime stacks`);
  }
  return {
    router: checkMatrix(need(lookup, p + 'ffn_gate_inp.weight', 'matrix'), experts, c.hidden),
    routerBias: flatVector(lookup, p + 'ffn_gate_inp.bias', experts),
    gateUp: expertMatrices(lookup, p + 'ffn_gate_up_exps.weight', experts, I, c.hidden, 2),
    gateBias: flatVector(lookup, p + 'ffn_gate_exps.bias', experts * I),
    upBias: flatVector(lookup, p + 'ffn_up_exps.bias', experts * I),
    down: expertMatrices(lookup, p + 'ffn_down_exps.weight', experts, c.hidden, I, 1),
    downBias: flatVector(lookup, p + 'ffn_down_exps.bias', experts * c.hidden),
  };
}

/** The decoder's weights from loaded tensors, with every shape checked against the config. */
export function assembleDecoderWeights(config: ModelConfig, lookup: GpuTensorLookup, ropeFreqFactors?: RopeFileFactors): DecoderWeights {
  const c = config;
  const qDim = c.heads * c.headDim;
  const kvDim = c.kvHeads * c.headDim;
  const layers: DecoderLayerWeights[] = [];
  for (let l = 0; l < c.layers; l++) {
    const p = `blk.${l}.`;
    if (!lookup(p + 'attn_q_norm.weight') !== !lookup(p + 'attn_k_norm.weight')) {
      throw new Error(`Layer ${l} has a q norm or a k norm but not both (${p}attn_q_norm.weight, ${p}attn_k_norm.weight)`);
    }
    layers.push({
      attnNorm: checkVector(need(lookup, p + 'attn_norm.weight', 'vector'), c.hidden)!,
      qkv: qkvWeights(lookup, l, c),
      bq: checkVector(optional(lookup, p + 'attn_q.bias', 'vector'), qDim),
      bk: checkVector(optional(lookup, p + 'attn_k.bias', 'vector'), kvDim),
      bv: checkVector(optional(lookup, p + 'attn_v.bias', 'vector'), kvDim),
      qNorm: checkVector(optional(lookup, p + 'attn_q_norm.weight', 'vector'), c.headDim),
      kNorm: checkVector(optional(lookup, p + 'attn_k_norm.weight', 'vector'), c.headDim),
      wo: checkMatrix(need(lookup, p + 'attn_output.weight', 'matrix'), c.hidden, qDim),
      bo: checkVector(optional(lookup, p + 'attn_output.bias', 'vector'), c.hidden),
      sinks: c.attentionSinks ? checkVector(need(lookup, p + 'attn_sinks.weight', 'vector'), c.heads) : undefined,
      // gpt-oss names the norm before the feed-forward post_attention_norm.
      ffnNorm: checkVector(need(lookup, p + (c.moe ? 'post_attention_norm.weight' : 'ffn_norm.weight'), 'vector'), c.hidden)!,
      // Gemma 3: a norm on the attention output and one on the feed-forward output, each before its residual add.
      ...(c.postNorms
        ? {
            postAttnNorm: checkVector(need(lookup, p + 'post_attention_norm.weight', 'vector'), c.hidden)!,
            postFfnNorm: checkVector(need(lookup, p + 'post_ffw_norm.weight', 'vector'), c.hidden)!,
          }
        : {}),
      ...(c.moe
        ? { moe: moeWeights(lookup, l, { ...c, moe: c.moe }) }
        : { gateUp: gateUpWeights(lookup, l, c), wDown: checkMatrix(need(lookup, p + 'ffn_down.weight', 'matrix'), c.hidden, c.intermediate) }),
    });
  }
  const tokenEmbedding = checkMatrix(need(lookup, 'token_embd.weight', 'matrix'), c.vocabSize, c.hidden);
  const output = optional(lookup, 'output.weight', 'matrix');
  return {
    tokenEmbedding,
    layers,
    outputNorm: checkVector(need(lookup, 'output_norm.weight', 'vector'), c.hidden)!,
    lmHead: output ? checkMatrix(output, c.vocabSize, c.hidden) : tokenEmbedding,
    ropeFreqFactors,
  };
}

/** The GPU weight type a file tensor type becomes (BF16 is widened to F32 at load): the table's gpuFormat. */
export function gpuWeightType(fileType: string): GpuWeightType {
  const format = (WEIGHT_FORMAT as Readonly<Record<string, (typeof WEIGHT_FORMAT)[keyof typeof WEIGHT_FORMAT] | undefined>>)[fileType];
  if (!format) throw new Error(`Unsupported weight type ${fileType}`);
  return format.gpuFormat;
}
