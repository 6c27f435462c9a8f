// The test-model generator: deterministic tiny random decoder models (llama, qwen2, qwen3, phi3, smollm3, gemma3) built both as
// a GGUF file and as a Hugging Face directory (model.safetensors, config.json, tokenizer.json,
// tokenizer_config.json) that hold the same weights, with a byte-level BPE tokenizer and a ChatML chat
// template with tools and <think>. Pure (no Node APIs): runs in Node and in the browser; index.ts writes
// the files to disk. See README.md.

import { dequantizeGguf } from '../../src/model/dequantize.ts';
import { llama3RopeFactors } from '../../src/model/model-config.ts';
import { TENSOR_TYPE_LAYOUTS, type TensorType } from '../../src/model/tensor-types.ts';
import { buildByteLevelBpeVocab, sentencePieceVocab, tokenizerConfigJson, tokenizerJson, type TestVocab } from './byte-level-bpe.ts';
import { tokenizerSourceFromGguf } from '../../src/model/tokenizer.ts';
import { CHATML_TOOLS_TEMPLATE } from './chatml-template.ts';
import type { RealTokenizerVocab } from './real-tokenizer.ts';
import type { GgufMetadataValue } from '../../src/model/gguf.ts';
import { encodeGguf, gv, type GgufWriteTensor, type GgufWriteValue } from './gguf-writer.ts';
import { encodeTensor } from './quantize.ts';
import { SeededRandom } from './random.ts';
import { encodeSafetensorsCheckpoint, type SafetensorsWriteTensor } from './safetensors-writer.ts';

export type TestModelArch = 'llama' | 'qwen2' | 'qwen3' | 'gpt-oss' | 'phi3' | 'smollm3' | 'gemma3';
export const TEST_MODEL_ARCHS: readonly TestModelArch[] = ['llama', 'qwen2', 'qwen3', 'gpt-oss', 'phi3', 'smollm3', 'gemma3'];

export interface Llama3RopeScaling {
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalContextLength: number;
}

export interface TestModelOptions {
  arch: TestModelArch;
  /** Type of the 2-D weight matrices in the GGUF (norms and biases stay F32, as llama.cpp keeps them). */
  type: TensorType;
  seed?: number;
  layers?: number;
  hidden?: number;
  intermediate?: number;
  heads?: number;
  kvHeads?: number;
  headDim?: number;
  /** Number of BPE merges learned (the vocabulary is 256 bytes + merges + 7 special tokens). */
  merges?: number;
  /** 'bpe': GPT-2-style byte-level BPE (GGUF "gpt2"); 'spm': llama SentencePiece with byte fallback (GGUF "llama"). */
  tokenizer?: 'bpe' | 'spm';
  contextLength?: number;
  ropeTheta?: number;
  rmsEps?: number;
  /** No output.weight / lm_head.weight: the output projection is the token embedding. */
  tiedEmbeddings?: boolean;
  /** Type of token_embd.weight (default: `type`). */
  embeddingType?: TensorType;
  /** Type of output.weight (default: `type`). */
  outputType?: TensorType;
  /** Llama-3 RoPE scaling (llama only): GGUF gets rope_freqs.weight, config.json gets rope_scaling. */
  ropeScaling?: Llama3RopeScaling | null;
  /** Number of safetensors shards (more than 1 writes model.safetensors.index.json). */
  shards?: number;
  /** gpt-oss: type of the expert tensors (default `type`; MXFP4 is written by this tool's round-to-nearest quantizer). */
  expertType?: TensorType;
  /**
   * gpt-oss: round the expert weights through this format before writing them as `expertType`: an F32 model that
   * holds exactly the values of the MXFP4 one (same seed), to compare an MXFP4 forward with an unquantized one.
   */
  expertValuesOf?: TensorType | null;
  /** gpt-oss: experts per layer (default 8). */
  experts?: number;
  /** gpt-oss: experts each token uses (default 2). */
  expertsUsed?: number;
  /**
   * gpt-oss: the sliding window of the even layers (default 128; the odd layers attend to everything); gemma3: of
   * every layer but each 6th (attention.sliding_window; llama.cpp fixes the pattern at 6).
   */
  window?: number;
  /** gpt-oss: YaRN RoPE scaling factor (default 32) over `yarnOriginalContext` positions (default 4096); 0 turns it off. */
  yarnFactor?: number;
  yarnOriginalContext?: number;
  /** phi3: dimensions of each q/k head that RoPE rotates (partial rotary; default headDim). */
  ropeDims?: number;
  /**
   * phi3: LongRoPE over this many original positions (0: none, the default): GGUF gets rope_factors_short/long
   * (random divisors in [1, 4)) and rope.scaling.original_context_length / attn_factor, config.json rope_scaling
   * {type: longrope, short_factor, long_factor} and original_max_position_embeddings.
   */
  longRopeOriginalContext?: number;
  /**
   * Dequantization probe: every layer matrix is zero, token t < hidden embeds to a scaled one-hot vector
   * that the final norm maps exactly to e_t, so the logits of token t are column t of output.weight.
   */
  probe?: boolean;
  /** Write model.gguf only, no `hf/` files (the real-size bench models: half the memory at a 200k vocabulary). */
  ggufOnly?: boolean;
  /** Standard deviation of the token embedding (default 1; gemma3 always 1/sqrt(hidden)). A tied head over N(0, 1) rows gives logits of std sqrt(hidden). */
  embeddingStd?: number;
}

/** What a generated model is (everything but the file bytes). */
export interface TestModelInfo {
  options: Required<Omit<TestModelOptions, 'ropeScaling' | 'ggufOnly' | 'embeddingStd'>> & { ropeScaling: Llama3RopeScaling | null };
  vocabSize: number;
  bosId: number;
  eosId: number;
  specialTokens: { id: number; content: string }[];
  chatTemplate: string;
  /** Tensor names in GGUF naming with their shapes in PyTorch order (rows first). */
  tensors: { gguf: string; hf: string; shape: number[] }[];
}

/** A generated model written to disk. */
export interface TestModel extends TestModelInfo {
  ggufPath: string;
  hfDir: string;
}

/** A generated model in memory: file name (model.gguf, hf/config.json, ...) to its bytes as chunks. */
export interface BuiltTestModel {
  info: TestModelInfo;
  files: Record<string, Uint8Array[]>;
}

/** Options with every default filled in (also what caches key on). */
export function resolveTestModelOptions(o: TestModelOptions): TestModelInfo['options'] {
  const heads = o.heads ?? 4;
  const hidden = o.hidden ?? 256;
  const resolved: TestModelInfo['options'] = {
    arch: o.arch,
    type: o.type,
    seed: o.seed ?? 1,
    layers: o.layers ?? 2,
    hidden,
    intermediate: o.intermediate ?? (o.arch === 'gpt-oss' ? hidden : 2 * hidden),
    heads,
    kvHeads: o.kvHeads ?? Math.max(1, heads / 2),
    headDim: o.headDim ?? hidden / heads,
    merges: o.merges ?? 250,
    tokenizer: o.tokenizer ?? 'bpe',
    contextLength: o.contextLength ?? 4096,
    ropeTheta: o.ropeTheta ?? 10000,
    rmsEps: o.rmsEps ?? 1e-6,
    tiedEmbeddings: o.tiedEmbeddings ?? false,
    embeddingType: o.embeddingType ?? o.type,
    outputType: o.outputType ?? o.type,
    shards: o.shards ?? 1,
    probe: o.probe ?? false,
    ropeScaling: o.ropeScaling ?? null,
    ropeDims: o.ropeDims ?? o.headDim ?? hidden / heads,
    longRopeOriginalContext: o.longRopeOriginalContext ?? 0,
    expertType: o.expertType ?? o.type,
    expertValuesOf: o.expertValuesOf ?? null,
    experts: o.experts ?? 8,
    expertsUsed: o.expertsUsed ?? 2,
    window: o.window ?? 128,
    yarnFactor: o.yarnFactor ?? 32,
    yarnOriginalContext: o.yarnOriginalContext ?? 4096,
  };
  if (resolved.arch === 'gpt-oss') {
    if (resolved.expertsUsed < 1 || resolved.expertsUsed > resolved.experts) throw new Error('expertsUsed must be 1..experts');
    if (resolved.window < 1) throw new Error('window must be at least 1');
    if (resolved.tokenizer !== 'bpe' || resolved.probe || resolved.shards !== 1) throw new Error('gpt-oss test models have the BPE tokenizer, no probe and no Hugging Face shards');
  }
  if (!TEST_MODEL_ARCHS.includes(resolved.arch)) throw new Error(`Unknown test model architecture "${resolved.arch}"`);
  if (resolved.ropeScaling && resolved.arch !== 'llama') throw new Error('ropeScaling is only for arch llama');
  if (resolved.heads % resolved.kvHeads !== 0) throw new Error('heads must be a multiple of kvHeads');
  if (resolved.longRopeOriginalContext !== 0 && (resolved.arch !== 'phi3' || resolved.longRopeOriginalContext < 1)) throw new Error('longRopeOriginalContext is for arch phi3');
  if (resolved.ropeDims !== resolved.headDim && (resolved.arch !== 'phi3' || resolved.ropeDims % 2 !== 0 || resolved.ropeDims <= 0 || resolved.ropeDims > resolved.headDim)) {
    throw new Error('ropeDims (partial rotary) is for arch phi3: even, at most headDim');
  }
  if (resolved.headDim % 2 !== 0) throw new Error('headDim must be even');
  if (resolved.probe && resolved.tiedEmbeddings) throw new Error('probe needs an output.weight (tiedEmbeddings false)');
  return resolved;
}

interface Tensor {
  gguf: string;
  hf: string;
  /** PyTorch order: rows first. */
  shape: number[];
  values: Float32Array;
  /** File type in the GGUF. */
  ggufType: TensorType;
  /** Rows of q/k that GGUF's llama layout permutes: the head count. */
  permuteHeads?: number;
  /**
   * The Hugging Face file stores the values minus this (gemma3's norms: the checkpoint holds w, llama.cpp's converter
   * writes 1 + w): `values` are what the GGUF holds.
   */
  hfShift?: number;
}

/** Generate a model in memory: `model.gguf` and the `hf/` files (`realTokenizer`: a real vocabulary, real-tokenizer.ts). */
export function buildTestModel(options: TestModelOptions, realTokenizer?: RealTokenizerVocab): BuiltTestModel {
  const o = resolveTestModelOptions(options);
  const vocab: AnyVocab = realTokenizer ?? (o.tokenizer === 'spm' ? sentencePieceVocab(buildByteLevelBpeVocab(o.merges)) : buildByteLevelBpeVocab(o.merges));
  const vocabSize = vocab.tokens.length;
  const rng = new SeededRandom(o.seed);
  const hfDtype: TensorType = o.type === 'F16' || o.type === 'BF16' ? o.type : 'F32';
  const { hidden, heads, kvHeads, headDim, intermediate } = o;
  const qDim = heads * headDim;
  const kvDim = kvHeads * headDim;

  const tensors: Tensor[] = [];
  const matrix = (gguf: string, hf: string, rows: number, cols: number, type: TensorType, permuteHeads?: number) => {
    const values = o.probe ? new Float32Array(rows * cols) : rng.normals(rows * cols, 1 / Math.sqrt(cols));
    tensors.push({ gguf, hf, shape: [rows, cols], values, ggufType: type, permuteHeads });
  };
  const norm = (gguf: string, hf: string, size: number, hfShift?: number) => {
    const values = o.probe ? new Float32Array(size).fill(1) : rng.normals(size, 0.1, 1);
    tensors.push({ gguf, hf, shape: [size], values, ggufType: 'F32', ...(hfShift !== undefined ? { hfShift } : {}) });
  };
  const bias = (gguf: string, hf: string, size: number) => {
    const values = o.probe ? new Float32Array(size) : rng.normals(size, 0.1);
    tensors.push({ gguf, hf, shape: [size], values, ggufType: 'F32' });
  };

  // Token embedding: N(0, 1) rows (RMSNorm brings them to unit scale anyway). gemma3: N(0, 1/hidden), small as
  // Gemma's are: the model scales them by sqrt(hidden) to unit size, and its tied head then gives unit-scale logits.
  const embedding = rng.normals(vocabSize * hidden, o.arch === 'gemma3' ? 1 / Math.sqrt(hidden) : (options.embeddingStd ?? 1));
  let outputNormValue = 1;
  if (o.probe) {
    // Row t < hidden is c * e_t; with output_norm = sqrt(c^2/hidden + eps)/c the final norm yields e_t.
    const c = 16;
    for (let t = 0; t < Math.min(hidden, vocabSize); t++) {
      embedding.fill(0, t * hidden, (t + 1) * hidden);
      embedding[t * hidden + t] = c;
    }
    outputNormValue = Math.sqrt((c * c) / hidden + o.rmsEps) / c;
  }
  tensors.push({ gguf: 'token_embd.weight', hf: 'model.embed_tokens.weight', shape: [vocabSize, hidden], values: embedding, ggufType: o.embeddingType });
  if (o.ropeScaling) {
    tensors.push({ gguf: 'rope_freqs.weight', hf: '', shape: [headDim / 2], values: llama3RopeFactors(o.ropeTheta, headDim, o.ropeScaling), ggufType: 'F32' });
  }
  const longRope = o.longRopeOriginalContext > 0 ? longRopeFactors(o) : null;
  if (longRope) {
    tensors.push({ gguf: 'rope_factors_long.weight', hf: '', shape: [o.ropeDims / 2], values: longRope.long, ggufType: 'F32' });
    tensors.push({ gguf: 'rope_factors_short.weight', hf: '', shape: [o.ropeDims / 2], values: longRope.short, ggufType: 'F32' });
  }
  if (o.probe) {
    tensors.push({ gguf: 'output_norm.weight', hf: 'model.norm.weight', shape: [hidden], values: new Float32Array(hidden).fill(outputNormValue), ggufType: 'F32' });
    tensors.push({ gguf: 'output.weight', hf: 'lm_head.weight', shape: [vocabSize, hidden], values: rng.normals(vocabSize * hidden, 1 / Math.sqrt(hidden)), ggufType: o.outputType });
  } else {
    norm('output_norm.weight', 'model.norm.weight', hidden, o.arch === 'gemma3' ? 1 : undefined);
    if (!o.tiedEmbeddings) matrix('output.weight', 'lm_head.weight', vocabSize, hidden, o.outputType);
  }
  for (let l = 0; l < o.layers && o.arch === 'gpt-oss'; l++) {
    // gpt-oss (llama.cpp's names and shapes; no Hugging Face side): attention with q/k/v/o biases and a sink
    // logit per head, a router with a bias, per-expert SwiGLU with biases. Gate and up experts are drawn 3x wider
    // than 1/sqrt(fan_in) so that some of their outputs pass the activation's clamp at 7.
    const g = `blk.${l}.`;
    const { experts } = o;
    const wide = (name: string, shape: number[], scale: number) => {
      let values = rng.normals(shape.reduce((a, b) => a * b, 1), scale);
      if (shape.length === 3 && o.expertValuesOf) values = dequantizeGguf(o.expertValuesOf, encodeTensor(o.expertValuesOf, values));
      tensors.push({ gguf: g + name, hf: '', shape, values, ggufType: shape.length === 3 ? o.expertType : 'F32' });
    };
    norm(g + 'attn_norm.weight', '', hidden);
    matrix(g + 'attn_q.weight', '', qDim, hidden, o.type);
    bias(g + 'attn_q.bias', '', qDim);
    matrix(g + 'attn_k.weight', '', kvDim, hidden, o.type);
    bias(g + 'attn_k.bias', '', kvDim);
    matrix(g + 'attn_v.weight', '', kvDim, hidden, o.type);
    bias(g + 'attn_v.bias', '', kvDim);
    matrix(g + 'attn_output.weight', '', hidden, qDim, o.type);
    bias(g + 'attn_output.bias', '', hidden);
    wide('attn_sinks.weight', [heads], 1);
    norm(g + 'post_attention_norm.weight', '', hidden);
    matrix(g + 'ffn_gate_inp.weight', '', experts, hidden, 'F32');
    bias(g + 'ffn_gate_inp.bias', '', experts);
    wide('ffn_gate_exps.weight', [experts, intermediate, hidden], 3 / Math.sqrt(hidden));
    wide('ffn_gate_exps.bias', [experts, intermediate], 0.5);
    wide('ffn_up_exps.weight', [experts, intermediate, hidden], 3 / Math.sqrt(hidden));
    wide('ffn_up_exps.bias', [experts, intermediate], 0.5);
    wide('ffn_down_exps.weight', [experts, hidden, intermediate], 1 / Math.sqrt(intermediate));
    wide('ffn_down_exps.bias', [experts, hidden], 0.1);
  }
  for (let l = 0; l < o.layers && o.arch === 'phi3'; l++) {
    // phi3 (llama.cpp's converter): q, k, v in one attn_qkv [q; k; v] and gate, up in one ffn_up [gate; up]; NEOX
    // RoPE, so no row permutation. HF names as Phi-3's checkpoints (qkv_proj, gate_up_proj).
    const g = `blk.${l}.`;
    const h = `model.layers.${l}.`;
    norm(g + 'attn_norm.weight', h + 'input_layernorm.weight', hidden);
    matrix(g + 'attn_qkv.weight', h + 'self_attn.qkv_proj.weight', qDim + 2 * kvDim, hidden, o.type);
    matrix(g + 'attn_output.weight', h + 'self_attn.o_proj.weight', hidden, qDim, o.type);
    norm(g + 'ffn_norm.weight', h + 'post_attention_layernorm.weight', hidden);
    matrix(g + 'ffn_up.weight', h + 'mlp.gate_up_proj.weight', 2 * intermediate, hidden, o.type);
    matrix(g + 'ffn_down.weight', h + 'mlp.down_proj.weight', hidden, intermediate, o.type);
  }
  for (let l = 0; l < o.layers && o.arch === 'gemma3'; l++) {
    // gemma3 (llama.cpp's converter): q/k norms per head, a norm after the attention output and one after ffn_down
    // (post_attention_norm, post_ffw_norm), NEOX RoPE (no permutation). Norms are drawn around 1: the converter
    // stores Gemma's 1 + w; the HF side (Gemma3ForCausalLM's names: input_layernorm, post_attention_layernorm,
    // pre_feedforward_layernorm, post_feedforward_layernorm, self_attn.q_norm/k_norm) holds w (hfShift 1).
    const g = `blk.${l}.`;
    const h = `model.layers.${l}.`;
    norm(g + 'attn_norm.weight', h + 'input_layernorm.weight', hidden, 1);
    matrix(g + 'attn_q.weight', h + 'self_attn.q_proj.weight', qDim, hidden, o.type);
    matrix(g + 'attn_k.weight', h + 'self_attn.k_proj.weight', kvDim, hidden, o.type);
    matrix(g + 'attn_v.weight', h + 'self_attn.v_proj.weight', kvDim, hidden, o.type);
    norm(g + 'attn_q_norm.weight', h + 'self_attn.q_norm.weight', headDim, 1);
    norm(g + 'attn_k_norm.weight', h + 'self_attn.k_norm.weight', headDim, 1);
    matrix(g + 'attn_output.weight', h + 'self_attn.o_proj.weight', hidden, qDim, o.type);
    norm(g + 'post_attention_norm.weight', h + 'post_attention_layernorm.weight', hidden, 1);
    norm(g + 'ffn_norm.weight', h + 'pre_feedforward_layernorm.weight', hidden, 1);
    matrix(g + 'ffn_gate.weight', h + 'mlp.gate_proj.weight', intermediate, hidden, o.type);
    matrix(g + 'ffn_up.weight', h + 'mlp.up_proj.weight', intermediate, hidden, o.type);
    matrix(g + 'ffn_down.weight', h + 'mlp.down_proj.weight', hidden, intermediate, o.type);
    norm(g + 'post_ffw_norm.weight', h + 'post_feedforward_layernorm.weight', hidden, 1);
  }
  for (let l = 0; l < o.layers && o.arch !== 'gpt-oss' && o.arch !== 'phi3' && o.arch !== 'gemma3'; l++) {
    const g = `blk.${l}.`;
    const h = `model.layers.${l}.`;
    norm(g + 'attn_norm.weight', h + 'input_layernorm.weight', hidden);
    // SmolLM3's converter is llama's: q/k rows permuted for interleaved RoPE.
    const permute = o.arch === 'llama' || o.arch === 'smollm3';
    matrix(g + 'attn_q.weight', h + 'self_attn.q_proj.weight', qDim, hidden, o.type, permute ? heads : undefined);
    matrix(g + 'attn_k.weight', h + 'self_attn.k_proj.weight', kvDim, hidden, o.type, permute ? kvHeads : undefined);
    matrix(g + 'attn_v.weight', h + 'self_attn.v_proj.weight', kvDim, hidden, o.type);
    if (o.arch === 'qwen2') {
      bias(g + 'attn_q.bias', h + 'self_attn.q_proj.bias', qDim);
      bias(g + 'attn_k.bias', h + 'self_attn.k_proj.bias', kvDim);
      bias(g + 'attn_v.bias', h + 'self_attn.v_proj.bias', kvDim);
    }
    if (o.arch === 'qwen3') {
      norm(g + 'attn_q_norm.weight', h + 'self_attn.q_norm.weight', headDim);
      norm(g + 'attn_k_norm.weight', h + 'self_attn.k_norm.weight', headDim);
    }
    matrix(g + 'attn_output.weight', h + 'self_attn.o_proj.weight', hidden, qDim, o.type);
    norm(g + 'ffn_norm.weight', h + 'post_attention_layernorm.weight', hidden);
    matrix(g + 'ffn_gate.weight', h + 'mlp.gate_proj.weight', intermediate, hidden, o.type);
    matrix(g + 'ffn_up.weight', h + 'mlp.up_proj.weight', intermediate, hidden, o.type);
    matrix(g + 'ffn_down.weight', h + 'mlp.down_proj.weight', hidden, intermediate, o.type);
  }

  const ggufTensors: GgufWriteTensor[] = [];
  const hfTensors: SafetensorsWriteTensor[] = [];
  for (const t of tensors) {
    const cols = t.shape[t.shape.length - 1];
    const blockElements = TENSOR_TYPE_LAYOUTS[t.ggufType].blockElements;
    if (cols % blockElements !== 0) {
      throw new Error(`Tensor ${t.gguf}: ${cols} columns is not a multiple of the ${t.ggufType} block size ${blockElements}`);
    }
    // Round through the Hugging Face dtype first so that both files hold exactly the same numbers.
    // (An f32 round trip is the identity: skipped, which saves two copies of a 200k-row embedding.)
    // A shifted tensor (gemma3's norms): the HF file holds w = values - shift in its dtype, the GGUF w + shift in
    // F32 (exact: w is a short float), as llama.cpp's converter adds the 1 in f32.
    const shift = t.hfShift;
    const hfValues = shift !== undefined
      ? roundThrough(hfDtype, Float32Array.from(t.values, (v) => v - shift))
      : roundThrough(hfDtype, t.values);
    const ggufBase = shift !== undefined ? Float32Array.from(hfValues, (w) => w + shift) : hfValues;
    const ggufValues = t.permuteHeads ? permuteForInterleavedRope(ggufBase, t.shape[0], cols, t.permuteHeads) : ggufBase;
    const ggufBytes = encodeTensor(t.ggufType, ggufValues);
    ggufTensors.push({ name: t.gguf, dims: [...t.shape].reverse(), ggmlType: TENSOR_TYPE_LAYOUTS[t.ggufType].ggmlType, data: ggufBytes });
    if (!t.hf || options.ggufOnly) continue;
    // Quantized weights go to the HF side as their dequantized values (undoing the llama permutation).
    let hfStored = hfValues;
    if (TENSOR_TYPE_LAYOUTS[t.ggufType].blockElements > 1 || t.ggufType !== hfDtype && t.ggufType !== 'F32') {
      const dequantized = dequantizeGguf(t.ggufType, ggufBytes);
      hfStored = t.permuteHeads ? unpermuteForInterleavedRope(dequantized, t.shape[0], cols, t.permuteHeads) : dequantized;
    }
    hfTensors.push({ name: t.hf, dtype: hfDtype as 'F32' | 'F16' | 'BF16', shape: t.shape, data: encodeTensor(hfDtype, hfStored) });
  }

  const json = (value: unknown, indent?: number) => [new TextEncoder().encode(JSON.stringify(value, null, indent))];
  const files: Record<string, Uint8Array[]> = { 'model.gguf': encodeGguf(ggufMetadata(o, vocab), ggufTensors) };
  if (o.arch === 'gpt-oss' || options.ggufOnly) return { info: modelInfo(o, vocab, tensors), files };
  for (const [name, bytes] of Object.entries(encodeSafetensorsCheckpoint(hfTensors, o.shards))) files[`hf/${name}`] = bytes;
  files['hf/config.json'] = json(hfConfig(o, vocab), 2);
  if (vocab.model === 'real') {
    files['hf/tokenizer.json'] = json(vocab.tokenizerJson);
    files['hf/tokenizer_config.json'] = json({ chat_template: CHATML_TOOLS_TEMPLATE, ...vocab.tokenizerConfig }, 2);
  } else if (vocab.model === 'gpt2') {
    files['hf/tokenizer.json'] = json(tokenizerJson(vocab));
    files['hf/tokenizer_config.json'] = json(tokenizerConfigJson(vocab, CHATML_TOOLS_TEMPLATE, o.contextLength), 2);
  } else {
    // The SentencePiece vocabulary as a Llama-style tokenizer.json (BPE with byte fallback).
    const source = tokenizerSourceFromGguf(plainTokenizerMetadata(vocab));
    files['hf/tokenizer.json'] = json(source.tokenizerJson);
    files['hf/tokenizer_config.json'] = json({ ...source.tokenizerConfig, chat_template: CHATML_TOOLS_TEMPLATE, model_max_length: o.contextLength }, 2);
  }
  files['hf/generation_config.json'] = json({ bos_token_id: vocab.bosId, eos_token_id: vocab.eosId }, 2);

  return { info: modelInfo(o, vocab, tensors), files };
}

type AnyVocab = TestVocab | RealTokenizerVocab;

/** `values` rounded through `dtype` (F32: as they are; an f32 round trip is the identity, which saves two copies of a 200k-row embedding). */
function roundThrough(dtype: TensorType, values: Float32Array): Float32Array {
  return dtype === 'F32' ? values : dequantizeGguf(dtype, encodeTensor(dtype, values));
}

function modelInfo(o: TestModelInfo['options'], vocab: AnyVocab, tensors: Tensor[]): TestModelInfo {
  return {
    options: o,
    vocabSize: vocab.tokens.length,
    bosId: vocab.bosId,
    eosId: vocab.eosId,
    specialTokens: vocab.specialTokens.map(({ id, content }) => ({ id, content })),
    chatTemplate: vocab.model === 'real' ? (vocab.chatTemplate ?? CHATML_TOOLS_TEMPLATE) : CHATML_TOOLS_TEMPLATE,
    tensors: tensors.map((t) => ({ gguf: t.gguf, hf: t.hf, shape: t.shape })),
  };
}

/** phi3 LongRoPE test factors: deterministic divisors in [1, 4) per rotated pair, drawn apart from the weights. */
function longRopeFactors(o: TestModelInfo['options']): { short: Float32Array; long: Float32Array } {
  const rng = new SeededRandom(o.seed * 7919 + 17);
  const draw = () => Float32Array.from({ length: o.ropeDims / 2 }, () => 1 + 3 * Math.abs(rng.normals(1, 0.6)[0]! % 1));
  return { short: draw(), long: draw() };
}

/** llama.cpp's converter's LongRoPE attention factor: sqrt(1 + ln(scale) / ln(original)), scale = context / original. */
function longRopeAttnFactor(o: TestModelInfo['options']): number {
  const scale = o.contextLength / o.longRopeOriginalContext;
  return scale > 1 ? Math.sqrt(1 + Math.log(scale) / Math.log(o.longRopeOriginalContext)) : 1;
}

/**
 * GGUF's `llama` layout of q/k rows: within each head, HF row (s * headDim/2 + j) goes to row (2j + s), so
 * that interleaved RoPE on GGUF rows equals NEOX (rotate-half) RoPE on HF rows (llama.cpp's convert script).
 */
export function permuteForInterleavedRope(values: Float32Array, rows: number, cols: number, heads: number): Float32Array {
  return mapRows(values, rows, cols, heads, (headRow, half) => {
    const s = headRow < half ? 0 : 1;
    const j = headRow - s * half;
    return 2 * j + s;
  });
}

/** The inverse of permuteForInterleavedRope. */
export function unpermuteForInterleavedRope(values: Float32Array, rows: number, cols: number, heads: number): Float32Array {
  return mapRows(values, rows, cols, heads, (headRow, half) => (headRow % 2) * half + (headRow >> 1));
}

/** out[h, target(r)] = in[h, r] for each head h and row r within the head. */
function mapRows(values: Float32Array, rows: number, cols: number, heads: number, target: (headRow: number, half: number) => number): Float32Array {
  const headDim = rows / heads;
  const half = headDim / 2;
  const out = new Float32Array(values.length);
  for (let h = 0; h < heads; h++) {
    for (let r = 0; r < headDim; r++) {
      const src = (h * headDim + r) * cols;
      out.set(values.subarray(src, src + cols), (h * headDim + target(r, half)) * cols);
    }
  }
  return out;
}

/** The tokenizer.ggml.* keys of a SentencePiece vocabulary as plain values. */
function plainTokenizerMetadata(vocab: Extract<TestVocab, { model: 'llama' }>): Record<string, GgufMetadataValue> {
  return {
    'tokenizer.ggml.model': 'llama',
    'tokenizer.ggml.tokens': vocab.tokens,
    'tokenizer.ggml.token_type': vocab.tokenTypes,
    'tokenizer.ggml.scores': vocab.scores,
    'tokenizer.ggml.unknown_token_id': vocab.unkId,
    'tokenizer.ggml.bos_token_id': vocab.bosId,
    'tokenizer.ggml.eos_token_id': vocab.eosId,
    'tokenizer.ggml.padding_token_id': vocab.padId,
    'tokenizer.ggml.add_bos_token': false,
    'tokenizer.ggml.add_eos_token': false,
  };
}

function ggufTokenizerMetadata(vocab: AnyVocab): Record<string, GgufWriteValue> {
  if (vocab.model === 'real') return vocab.gguf;
  const common = {
    'tokenizer.ggml.tokens': gv.strings(vocab.tokens),
    'tokenizer.ggml.token_type': gv.i32s(vocab.tokenTypes),
    'tokenizer.ggml.bos_token_id': gv.u32(vocab.bosId),
    'tokenizer.ggml.eos_token_id': gv.u32(vocab.eosId),
    'tokenizer.ggml.padding_token_id': gv.u32(vocab.padId),
    'tokenizer.ggml.add_bos_token': gv.bool(false),
    'tokenizer.ggml.add_eos_token': gv.bool(false),
  };
  if (vocab.model === 'gpt2') {
    return { 'tokenizer.ggml.model': gv.str('gpt2'), 'tokenizer.ggml.pre': gv.str('qwen2'), ...common, 'tokenizer.ggml.merges': gv.strings(vocab.merges) };
  }
  return {
    'tokenizer.ggml.model': gv.str('llama'),
    ...common,
    'tokenizer.ggml.scores': gv.f32s(vocab.scores),
    'tokenizer.ggml.unknown_token_id': gv.u32(vocab.unkId),
  };
}

function ggufMetadata(o: TestModelInfo['options'], vocab: AnyVocab): Record<string, GgufWriteValue> {
  const a = o.arch;
  const quantized = [o.type, o.embeddingType, o.outputType, o.expertType].some((t) => TENSOR_TYPE_LAYOUTS[t].blockElements > 1);
  const meta: Record<string, GgufWriteValue> = {
    'general.architecture': gv.str(a),
    // Not "phi3" in the name: llama.cpp sets token attributes of Phi-3's own vocabulary (</s>, <|endoftext|>) by name.
    'general.name': gv.str(`test-${a === 'phi3' ? 'phi' : a}-${o.type.toLowerCase()}-seed${o.seed}`),
    [`${a}.context_length`]: gv.u32(o.contextLength),
    [`${a}.embedding_length`]: gv.u32(o.hidden),
    [`${a}.block_count`]: gv.u32(o.layers),
    [`${a}.feed_forward_length`]: gv.u32(o.intermediate),
    [`${a}.attention.head_count`]: gv.u32(o.heads),
    [`${a}.attention.head_count_kv`]: gv.u32(o.kvHeads),
    [`${a}.attention.key_length`]: gv.u32(o.headDim),
    [`${a}.attention.value_length`]: gv.u32(o.headDim),
    [`${a}.attention.layer_norm_rms_epsilon`]: gv.f32(o.rmsEps),
    [`${a}.rope.freq_base`]: gv.f32(o.ropeTheta),
    [`${a}.rope.dimension_count`]: gv.u32(o.ropeDims),
    [`${a}.vocab_size`]: gv.u32(vocab.tokens.length),
    'tokenizer.chat_template': gv.str(CHATML_TOOLS_TEMPLATE),
    ...ggufTokenizerMetadata(vocab),
  };
  if (a === 'gpt-oss') {
    meta[`${a}.expert_count`] = gv.u32(o.experts);
    meta[`${a}.expert_used_count`] = gv.u32(o.expertsUsed);
    meta[`${a}.expert_feed_forward_length`] = gv.u32(o.intermediate);
    meta[`${a}.attention.sliding_window`] = gv.u32(o.window);
    if (o.yarnFactor > 0) {
      meta[`${a}.rope.scaling.type`] = gv.str('yarn');
      meta[`${a}.rope.scaling.factor`] = gv.f32(o.yarnFactor);
      meta[`${a}.rope.scaling.original_context_length`] = gv.u32(o.yarnOriginalContext);
    }
  }
  if (a === 'gemma3') meta[`${a}.attention.sliding_window`] = gv.u32(o.window);
  if (o.longRopeOriginalContext > 0) {
    meta[`${a}.rope.scaling.original_context_length`] = gv.u32(o.longRopeOriginalContext);
    meta[`${a}.rope.scaling.attn_factor`] = gv.f32(longRopeAttnFactor(o));
  }
  if (quantized) meta['general.quantization_version'] = gv.u32(2);
  return meta;
}

function hfConfig(o: TestModelInfo['options'], vocab: AnyVocab): Record<string, unknown> {
  if (o.arch === 'gemma3') return gemma3HfConfig(o, vocab);
  const architectures = ({ llama: 'LlamaForCausalLM', qwen2: 'Qwen2ForCausalLM', qwen3: 'Qwen3ForCausalLM', phi3: 'Phi3ForCausalLM', smollm3: 'SmolLM3ForCausalLM', 'gpt-oss': 'GptOssForCausalLM' } as Record<string, string>)[o.arch];
  const dtype = o.type === 'F16' ? 'float16' : o.type === 'BF16' ? 'bfloat16' : 'float32';
  return {
    architectures: [architectures],
    model_type: o.arch,
    vocab_size: vocab.tokens.length,
    hidden_size: o.hidden,
    intermediate_size: o.intermediate,
    num_hidden_layers: o.layers,
    num_attention_heads: o.heads,
    num_key_value_heads: o.kvHeads,
    head_dim: o.headDim,
    hidden_act: 'silu',
    max_position_embeddings: o.contextLength,
    rms_norm_eps: o.rmsEps,
    rope_theta: o.ropeTheta,
    rope_scaling: o.ropeScaling
      ? {
          rope_type: 'llama3',
          factor: o.ropeScaling.factor,
          low_freq_factor: o.ropeScaling.lowFreqFactor,
          high_freq_factor: o.ropeScaling.highFreqFactor,
          original_max_position_embeddings: o.ropeScaling.originalContextLength,
        }
      : null,
    attention_bias: o.arch === 'qwen2',
    tie_word_embeddings: o.tiedEmbeddings,
    bos_token_id: vocab.bosId,
    eos_token_id: vocab.eosId,
    torch_dtype: dtype,
    ...(o.arch === 'phi3' && o.ropeDims !== o.headDim ? { partial_rotary_factor: o.ropeDims / o.headDim } : {}),
    ...(o.longRopeOriginalContext > 0
      ? (() => {
          const { short, long } = longRopeFactors(o);
          return { rope_scaling: { type: 'longrope', short_factor: Array.from(short), long_factor: Array.from(long) }, original_max_position_embeddings: o.longRopeOriginalContext };
        })()
      : {}),
    // SmolLM3: 1 where the layer uses RoPE; every 4th layer has none (as its checkpoints and llama.cpp place them).
    ...(o.arch === 'smollm3' ? { no_rope_layers: Array.from({ length: o.layers }, (_, l) => ((l + 1) % 4 === 0 ? 0 : 1)), no_rope_layer_interval: 4 } : {}),
  };
}

/** llama.cpp fixes Gemma 3's pattern: every 6th layer global (full attention), the others sliding. */
const GEMMA3_PATTERN = 6;

/**
 * A Gemma3ForCausalLM config.json as transformers writes it (model_type gemma3_text): GELU-tanh GeGLU, head_dim and
 * query_pre_attn_scalar (the attention scale is 1/sqrt of it: head_dim, but hidden / heads for 62 layers, which is
 * how llama.cpp knows the 27B, whose checkpoint has 168 where head_dim is 128),
 * sliding_window with both spellings of the pattern (layer_types; sliding_window_pattern of older releases),
 * rope_theta for the global layers and rope_local_base_freq 10000 for the sliding ones, no soft-capping.
 */
function gemma3HfConfig(o: TestModelInfo['options'], vocab: AnyVocab): Record<string, unknown> {
  return {
    architectures: ['Gemma3ForCausalLM'],
    model_type: 'gemma3_text',
    vocab_size: vocab.tokens.length,
    hidden_size: o.hidden,
    intermediate_size: o.intermediate,
    num_hidden_layers: o.layers,
    num_attention_heads: o.heads,
    num_key_value_heads: o.kvHeads,
    head_dim: o.headDim,
    hidden_activation: 'gelu_pytorch_tanh',
    query_pre_attn_scalar: o.layers === 62 ? Math.floor(o.hidden / o.heads) : o.headDim,
    max_position_embeddings: o.contextLength,
    rms_norm_eps: o.rmsEps,
    rope_theta: o.ropeTheta,
    rope_local_base_freq: 10000,
    rope_scaling: null,
    sliding_window: o.window,
    sliding_window_pattern: GEMMA3_PATTERN,
    layer_types: Array.from({ length: o.layers }, (_, l) => ((l + 1) % GEMMA3_PATTERN === 0 ? 'full_attention' : 'sliding_attention')),
    attn_logit_softcapping: null,
    final_logit_softcapping: null,
    attention_bias: false,
    tie_word_embeddings: o.tiedEmbeddings,
    bos_token_id: vocab.bosId,
    eos_token_id: vocab.eosId,
    torch_dtype: o.type === 'F16' ? 'float16' : o.type === 'BF16' ? 'bfloat16' : 'float32',
  };
}
