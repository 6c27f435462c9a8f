// The normalized configuration of a decoder model (llama / mistral / qwen2 / qwen3 family, phi3, smollm3, gemma3, gpt-oss), read from GGUF
// metadata or a Hugging Face config.json, and the mapping of Hugging Face tensor names to the GGUF names
// that the engine uses for both formats.

import { ggufMetadata, type GgufFile, type GgufMetadataValue } from './gguf.ts';

export type ModelArch = 'llama' | 'qwen2' | 'qwen3' | 'gpt-oss' | 'phi3' | 'smollm3' | 'gemma3';

export const SUPPORTED_ARCHITECTURES = ['llama', 'mistral', 'qwen2', 'qwen3', 'gpt-oss', 'phi3', 'smollm3', 'gemma3'] as const;

export type RopeScaling =
  /** Llama 3.x: per-frequency divisors from these parameters (see llama3RopeFactors). */
  | { type: 'llama3'; factor: number; lowFreqFactor: number; highFreqFactor: number; originalContextLength: number }
  /** Positions divided by `factor`. */
  | { type: 'linear'; factor: number }
  /** YaRN (gpt-oss): frequencies between interpolation and extrapolation, magnitude scaled (see yarnRope). */
  | { type: 'yarn'; factor: number; originalContextLength: number; betaFast: number; betaSlow: number }
  /**
   * LongRoPE (phi3 "su"/"longrope"): per-frequency divisors, the short ones while the served context stays within
   * `originalContextLength`, the long ones beyond; the rotated q/k values scaled by `attnFactor`. The factors come
   * from config.json, or from GGUF's rope_factors_short/long tensors at load (see ropeFactorsFor).
   */
  | { type: 'longrope'; originalContextLength: number; attnFactor: number; shortFactors?: readonly number[]; longFactors?: readonly number[] };

export interface ModelConfig extends RopeLayout {
  arch: ModelArch;
  /** Where the config came from. */
  format: 'gguf' | 'safetensors';
  layers: number;
  hidden: number;
  intermediate: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  vocabSize: number;
  contextLength: number;
  ropeTheta: number;
  /**
   * Which rotation pairs RoPE uses on the weights as stored: 'interleaved' pairs (2i, 2i+1) (GGUF `llama`,
   * whose q/k rows llama.cpp's converter permuted), 'neox' pairs (i, i + headDim/2) (qwen2/qwen3 GGUF and
   * every Hugging Face checkpoint).
   */
  ropeStyle: 'interleaved' | 'neox';
  ropeScaling: RopeScaling | null;
  /** GGUF holds per-frequency RoPE divisors in the tensor rope_freqs.weight (Llama 3 scaling). */
  ropeFreqsTensor: boolean;
  rmsEps: number;
  /** No output.weight: the output projection is token_embd.weight. */
  tiedEmbeddings: boolean;
  /** q/k/v projections have biases (qwen2). */
  qkvBias: boolean;
  /** Per-head RMSNorm of q and k before RoPE (qwen3). */
  qkNorm: boolean;
  bosTokenId: number | null;
  /** Tokens that end generation. */
  eosTokenIds: number[];
  /** Mixture-of-experts feed-forward (gpt-oss): every layer's; `intermediate` is then each expert's width. */
  moe?: { experts: number; expertsUsed: number };
  /**
   * Sliding-window attention (gpt-oss): layer l attends to its last `size` positions when l % pattern < pattern - 1
   * (llama.cpp's swa pattern: 2 = even layers sliding, odd layers full).
   */
  slidingWindow?: { size: number; pattern: number };
  /** A learned attention-sink logit per head (gpt-oss: blk.N.attn_sinks.weight). */
  attentionSinks?: boolean;
  /** The gate's activation in the gated feed-forward: 'silu' (SwiGLU, absent) or 'gelu' (GeGLU, tanh GELU: Gemma 3). */
  ffnActivation?: 'silu' | 'gelu';
  /** The looked-up embedding rows are multiplied by this (Gemma 3: sqrt(hidden); the tied LM head is not). */
  embeddingScale?: number;
  /**
   * The attention scale is 1/sqrt(this) where it is not headDim (Gemma 3 27B: query_pre_attn_scalar = hidden/heads =
   * 168 with head_dim 128). Absent: 1/sqrt(headDim).
   */
  attentionScaleDim?: number;
  /**
   * Gemma 3's post norms: blk.N.post_attention_norm on the attention output and blk.N.post_ffw_norm on the
   * feed-forward output, each before its residual add.
   */
  postNorms?: boolean;
  /** The RoPE base of the sliding-window layers when it differs from ropeTheta (Gemma 3: 10000 local, 1e6 global). */
  ropeThetaSliding?: number;
}

/** Gemma 3: five sliding-window layers, then one global (llama.cpp's swa pattern 6: layers 5, 11, ... global). */
const GEMMA3_SWA_PATTERN = 6;
/** The layer count by which llama.cpp knows a Gemma 3 27B (and gives it the attention scale 1/sqrt(hidden / heads)). */
const GEMMA3_27B_LAYERS = 62;
/** Gemma 3's RoPE base on its sliding-window layers (llama.cpp's rope_freq_base_train_swa; HF rope_local_base_freq). */
const GEMMA3_ROPE_THETA_SLIDING = 10000;

/** The RoPE base of layer `layer`: ropeThetaSliding on sliding-window layers when set, else ropeTheta. */
export function layerRopeTheta(c: Pick<ModelConfig, 'slidingWindow' | 'ropeTheta' | 'ropeThetaSliding'>, layer: number): number {
  return c.ropeThetaSliding !== undefined && layerWindow(c, layer) > 0 ? c.ropeThetaSliding : c.ropeTheta;
}

/** The sliding window of layer `layer` (0: it attends to every position). */
export function layerWindow(c: Pick<ModelConfig, 'slidingWindow'>, layer: number): number {
  const w = c.slidingWindow;
  return w && layer % w.pattern < w.pattern - 1 ? w.size : 0;
}

/**
 * Dimensions of each q/k head that RoPE rotates, from the first (partial rotary: phi3's `rope.dimension_count`,
 * HF `partial_rotary_factor`; the rest pass through unrotated), and layers that apply no RoPE at all (SmolLM3's
 * NoPE layers): ModelConfig.ropeDims / noRopeLayers, absent for full RoPE on every layer.
 */
export interface RopeLayout {
  ropeDims?: number;
  noRopeLayers?: readonly number[];
}

/** Whether layer `layer` rotates q and k (SmolLM3 leaves every 4th layer without RoPE). */
export function layerUsesRope(c: RopeLayout, layer: number): boolean {
  return !c.noRopeLayers?.includes(layer);
}

/** SmolLM3's NoPE layers as llama.cpp places them (n_no_rope_layer_step 4: layer l when (l + 1) % 4 == 0). */
function smollm3NoRopeLayers(layers: number, interval = 4): number[] {
  return Array.from({ length: layers }, (_, l) => l).filter((l) => (l + 1) % interval === 0);
}

/** Partial rotary (a `rope.dimension_count` below the head size) and SmolLM3's NoPE layers, from GGUF. */
function ggufRopeLayout(arch: ModelArch, ropeDims: number | undefined, headDim: number, layers: number): RopeLayout {
  const out: RopeLayout = {};
  if (ropeDims !== undefined && ropeDims < headDim) {
    if (ropeDims % 2 !== 0 || ropeDims <= 0) throw new Error(`Model config: rope.dimension_count ${ropeDims} must be even and positive`);
    out.ropeDims = ropeDims;
  }
  if (arch === 'smollm3') out.noRopeLayers = smollm3NoRopeLayers(layers);
  return out;
}

function normalizeArch(name: string): ModelArch {
  const a = name.toLowerCase();
  if (a === 'llama' || a === 'mistral') return 'llama';
  if (a === 'qwen2' || a === 'qwen3' || a === 'gpt-oss' || a === 'phi3' || a === 'smollm3' || a === 'gemma3') return a;
  if (a === 'gemma3_text') return 'gemma3';
  throw new Error(`Unsupported model architecture "${name}" (supported: ${SUPPORTED_ARCHITECTURES.join(', ')})`);
}

function positiveInt(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new Error(`Model config: ${what} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

function optionalNumber(value: unknown, what: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`Model config: ${what} must be a number, got ${JSON.stringify(value)}`);
  return value;
}

/** The config of a GGUF file (metadata `<arch>.*`, `tokenizer.ggml.*`, and which tensors exist). */
export function modelConfigFromGguf(file: Pick<GgufFile, 'metadata' | 'tensors' | 'source'>): ModelConfig {
  const archName = ggufMetadata(file, 'general.architecture', 'string');
  const arch = normalizeArch(archName);
  const m = file.metadata;
  const key = (k: string) => `${archName}.${k}`;
  const num = (k: string): number => {
    let v: GgufMetadataValue | undefined = m[key(k)];
    if (Array.isArray(v)) v = v[0]; // per-layer arrays: the tiny models here are uniform
    if (v === undefined) throw new Error(`${file.source.name}: GGUF metadata key "${key(k)}" is missing`);
    if (typeof v !== 'number') throw new Error(`${file.source.name}: GGUF metadata key "${key(k)}" should be a number`);
    return v;
  };
  const optNum = (k: string): number | undefined => (m[k] === undefined ? undefined : typeof m[k] === 'number' ? (m[k] as number) : undefined);
  const names = new Set(file.tensors.map((t) => t.name));
  const hidden = positiveInt(num('embedding_length'), key('embedding_length'));
  const heads = positiveInt(num('attention.head_count'), key('attention.head_count'));
  const kvHeads = m[key('attention.head_count_kv')] === undefined ? heads : positiveInt(num('attention.head_count_kv'), key('attention.head_count_kv'));
  const tokens = m['tokenizer.ggml.tokens'];
  const embedding = file.tensors.find((t) => t.name === 'token_embd.weight');
  const vocabSize = optNum(key('vocab_size')) ?? (Array.isArray(tokens) ? tokens.length : embedding?.shape[0]);
  if (vocabSize === undefined) throw new Error(`${file.source.name}: cannot tell the vocabulary size (no ${key('vocab_size')}, tokenizer.ggml.tokens or token_embd.weight)`);
  let ropeScaling: RopeScaling | null = null;
  const scalingType = m[key('rope.scaling.type')];
  if (scalingType === 'linear') ropeScaling = { type: 'linear', factor: num('rope.scaling.factor') };
  else if (scalingType === 'yarn') {
    ropeScaling = {
      type: 'yarn',
      factor: num('rope.scaling.factor'),
      originalContextLength: num('rope.scaling.original_context_length'),
      betaFast: optNum(key('rope.scaling.yarn_beta_fast')) ?? 32,
      betaSlow: optNum(key('rope.scaling.yarn_beta_slow')) ?? 1,
    };
  } else if (scalingType !== undefined && scalingType !== 'none') {
    throw new Error(`${file.source.name}: unsupported RoPE scaling "${String(scalingType)}" in ${key('rope.scaling.type')}`);
  }
  if (ropeScaling === null && names.has('rope_factors_short.weight')) {
    // phi3's LongRoPE: llama.cpp's converter writes the factor tensors and these keys (no rope.scaling.type).
    ropeScaling = {
      type: 'longrope',
      originalContextLength: optNum(key('rope.scaling.original_context_length')) ?? num('context_length'),
      attnFactor: optNum(key('rope.scaling.attn_factor')) ?? 1,
    };
  }
  const eos = optNum('tokenizer.ggml.eos_token_id');
  const eot = optNum('tokenizer.ggml.eot_token_id');
  const eom = optNum('tokenizer.ggml.eom_token_id');
  const layers = positiveInt(num('block_count'), key('block_count'));
  const headDim = optNum(key('attention.key_length')) ?? hidden / heads;
  const moe = arch === 'gpt-oss'
    ? { experts: positiveInt(num('expert_count'), key('expert_count')), expertsUsed: positiveInt(num('expert_used_count'), key('expert_used_count')) }
    : undefined;
  return {
    arch,
    format: 'gguf',
    layers,
    hidden,
    intermediate: positiveInt(num(moe ? 'expert_feed_forward_length' : 'feed_forward_length'), key(moe ? 'expert_feed_forward_length' : 'feed_forward_length')),
    heads,
    kvHeads,
    headDim,
    vocabSize,
    contextLength: positiveInt(num('context_length'), key('context_length')),
    ropeTheta: optNum(key('rope.freq_base')) ?? 10000,
    // SmolLM3's converter permutes q/k rows as llama's does; phi3 is NEOX like qwen.
    ropeStyle: arch === 'llama' || arch === 'smollm3' ? 'interleaved' : 'neox',
    ropeScaling,
    ropeFreqsTensor: names.has('rope_freqs.weight'),
    rmsEps: optNum(key('attention.layer_norm_rms_epsilon')) ?? 1e-6,
    tiedEmbeddings: !names.has('output.weight'),
    qkvBias: names.has('blk.0.attn_q.bias'),
    qkNorm: names.has('blk.0.attn_q_norm.weight'),
    bosTokenId: optNum('tokenizer.ggml.bos_token_id') ?? null,
    eosTokenIds: [...new Set([eos, eot, eom].filter((x): x is number => x !== undefined))],
    ...ggufRopeLayout(arch, optNum(key('rope.dimension_count')), headDim, layers),
    ...(moe ? { moe, slidingWindow: { size: positiveInt(num('attention.sliding_window'), key('attention.sliding_window')), pattern: 2 }, attentionSinks: names.has('blk.0.attn_sinks.weight') } : {}),
    ...(arch === 'gemma3' ? gemma3Features(hidden, heads, layers, headDim, optNum(key('attention.sliding_window')), optNum(key('rope.freq_base_swa'))) : {}),
  };
}

/**
 * What Gemma 3 adds to the decoder (llama.cpp's gemma3 graph): GeGLU, embeddings scaled by sqrt(hidden), the
 * post-attention and post-feed-forward norms, and (with a window) sliding-window layers in a pattern of 6 with
 * their own RoPE base. Norm weights are used as stored: GGUF holds 1 + w (the converter adds the 1; Hugging Face
 * checkpoints hold w, and their loading adds it: hfNormShift). The attention scale: GGUF has no key for
 * query_pre_attn_scalar, and llama.cpp takes it from the model's size: 1/sqrt(hidden / heads) for the 27B (which it
 * knows by its 62 layers), 1/sqrt(head_dim) for every other size, where the two agree with the checkpoints' configs.
 */
function gemma3Features(hidden: number, heads: number, layers: number, headDim: number, window: number | undefined, ropeThetaSliding: number | undefined): Partial<ModelConfig> {
  const scaleDim = layers === GEMMA3_27B_LAYERS ? Math.floor(hidden / heads) : headDim;
  return {
    ...(scaleDim !== headDim ? { attentionScaleDim: scaleDim } : {}),
    ffnActivation: 'gelu',
    embeddingScale: Math.sqrt(hidden),
    postNorms: true,
    ...(window !== undefined && window > 0
      ? { slidingWindow: { size: window, pattern: GEMMA3_SWA_PATTERN }, ropeThetaSliding: ropeThetaSliding ?? GEMMA3_ROPE_THETA_SLIDING }
      : {}),
  };
}

/** The longrope (Phi-3 "su") scaling of a Hugging Face config: its short and long factor lists and attention factor. */
function hfLongRopeScaling(config: Record<string, unknown>, scaling: Record<string, unknown>): RopeScaling {
  const contextLength = positiveInt(config.max_position_embeddings ?? 4096, 'max_position_embeddings');
  const original = positiveInt(config.original_max_position_embeddings ?? scaling.original_max_position_embeddings ?? contextLength, 'original_max_position_embeddings');
  const scale = contextLength / original;
  const factors = (v: unknown, what: string) => {
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isFinite(x) && x > 0)) throw new Error(`Model config: rope_scaling.${what} must be a list of positive numbers`);
    return v as number[];
  };
  return {
    type: 'longrope',
    originalContextLength: original,
    // As llama.cpp's converter and transformers compute it when the config gives none.
    attnFactor: optionalNumber(scaling.attention_factor, 'rope_scaling.attention_factor') ?? (scale > 1 ? Math.sqrt(1 + Math.log(scale) / Math.log(original)) : 1),
    shortFactors: factors(scaling.short_factor, 'short_factor'),
    longFactors: factors(scaling.long_factor, 'long_factor'),
  };
}

/** The RoPE scaling of a Hugging Face config (rope_scaling, or rope_parameters): null for none or 'default'. */
function hfRopeScaling(config: Record<string, unknown>, scaling: Record<string, unknown> | null): RopeScaling | null {
  const scalingType = scaling ? (scaling.rope_type ?? scaling.type) : undefined;
  if (scaling && scalingType === 'llama3') {
    return {
      type: 'llama3',
      factor: optionalNumber(scaling.factor, 'rope_scaling.factor') ?? 8,
      lowFreqFactor: optionalNumber(scaling.low_freq_factor, 'rope_scaling.low_freq_factor') ?? 1,
      highFreqFactor: optionalNumber(scaling.high_freq_factor, 'rope_scaling.high_freq_factor') ?? 4,
      originalContextLength: optionalNumber(scaling.original_max_position_embeddings, 'rope_scaling.original_max_position_embeddings') ?? 8192,
    };
  }
  if (scaling && scalingType === 'linear') return { type: 'linear', factor: optionalNumber(scaling.factor, 'rope_scaling.factor') ?? 1 };
  if (scaling && (scalingType === 'longrope' || scalingType === 'su')) return hfLongRopeScaling(config, scaling);
  if (scaling && scalingType !== undefined && scalingType !== 'default') {
    throw new Error(`Model config: unsupported RoPE scaling "${String(scalingType)}"`);
  }
  return null;
}

/** BOS and EOS token ids of a Hugging Face config, completed by its generation config (EOS ids of both, once each). */
function hfTokenIds(config: Record<string, unknown>, generationConfig: Record<string, unknown> | undefined): { bos: number | null; eos: number[] } {
  const ids = (v: unknown): number[] => (Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : typeof v === 'number' ? [v] : []);
  const eos = [...new Set([...ids(config.eos_token_id), ...ids(generationConfig?.eos_token_id)])];
  const bos = ids(config.bos_token_id)[0] ?? ids(generationConfig?.bos_token_id)[0] ?? null;
  return { bos, eos };
}

/**
 * Which dimensions and layers RoPE turns: ropeDims (partial_rotary_factor < 1: that share of each head, even)
 * and the layers without RoPE (SmolLM3).
 */
function hfRopeLayers(config: Record<string, unknown>, arch: ModelArch, headDim: number, layers: number): { ropeDims: number | undefined; noRope: number[] } {
  const rotary = optionalNumber(config.partial_rotary_factor, 'partial_rotary_factor');
  const ropeDims = rotary !== undefined && rotary < 1 ? Math.round(headDim * rotary) : undefined;
  if (ropeDims !== undefined && (ropeDims % 2 !== 0 || ropeDims <= 0)) throw new Error(`Model config: partial_rotary_factor ${rotary} gives ${ropeDims} rotary dimensions (must be even and positive)`);
  // SmolLM3: no_rope_layers[l] is 1 where layer l uses RoPE, 0 where it does not.
  const noRope = Array.isArray(config.no_rope_layers)
    ? (config.no_rope_layers as unknown[]).flatMap((v, l) => (v === 0 ? [l] : []))
    : arch === 'smollm3' ? smollm3NoRopeLayers(layers, typeof config.no_rope_layer_interval === 'number' ? config.no_rope_layer_interval : 4) : [];
  return { ropeDims, noRope };
}

/**
 * The config of a Hugging Face checkpoint from its config.json (and generation_config.json when given).
 * `tensorNames` (when known) decides tied embeddings and biases from what the checkpoint holds.
 */
export function modelConfigFromHf(
  config: Record<string, unknown>,
  options: { tensorNames?: Iterable<string>; generationConfig?: Record<string, unknown> } = {},
): ModelConfig {
  const archName = typeof config.model_type === 'string' ? config.model_type : String((config.architectures as string[] | undefined)?.[0] ?? 'unknown');
  const arch = normalizeArch(archName);
  const hidden = positiveInt(config.hidden_size, 'hidden_size');
  const heads = positiveInt(config.num_attention_heads, 'num_attention_heads');
  const kvHeads = config.num_key_value_heads === undefined ? heads : positiveInt(config.num_key_value_heads, 'num_key_value_heads');
  const names = options.tensorNames ? new Set(options.tensorNames) : null;
  const ropeParameters = (config.rope_parameters ?? null) as Record<string, unknown> | null;
  const ropeScaling = hfRopeScaling(config, (config.rope_scaling ?? ropeParameters ?? null) as Record<string, unknown> | null);
  const { bos, eos } = hfTokenIds(config, options.generationConfig);
  const tied = names ? !names.has('lm_head.weight') : config.tie_word_embeddings === true;
  const qkvBias = names ? names.has('model.layers.0.self_attn.q_proj.bias') : arch === 'qwen2' || config.attention_bias === true;
  const headDim = config.head_dim === undefined || config.head_dim === null ? hidden / heads : positiveInt(config.head_dim, 'head_dim');
  const layers = positiveInt(config.num_hidden_layers, 'num_hidden_layers');
  const { ropeDims, noRope } = hfRopeLayers(config, arch, headDim, layers);
  return {
    arch,
    format: 'safetensors',
    layers,
    hidden,
    intermediate: positiveInt(config.intermediate_size, 'intermediate_size'),
    heads,
    kvHeads,
    headDim,
    vocabSize: positiveInt(config.vocab_size, 'vocab_size'),
    contextLength: positiveInt(config.max_position_embeddings ?? 4096, 'max_position_embeddings'),
    ropeTheta: optionalNumber(config.rope_theta ?? ropeParameters?.rope_theta, 'rope_theta') ?? 10000,
    ropeStyle: 'neox',
    ropeScaling,
    ropeFreqsTensor: false,
    rmsEps: optionalNumber(config.rms_norm_eps, 'rms_norm_eps') ?? 1e-6,
    tiedEmbeddings: tied,
    qkvBias,
    qkNorm: arch === 'qwen3' || arch === 'gemma3',
    bosTokenId: bos,
    eosTokenIds: eos,
    ...(ropeDims !== undefined ? { ropeDims } : {}),
    ...(noRope.length > 0 ? { noRopeLayers: noRope } : {}),
    ...(arch === 'gemma3' ? gemma3HfFeatures(config, hidden, headDim, layers) : {}),
  };
}

/**
 * Gemma 3 from a Gemma3ForCausalLM config.json (model_type gemma3_text): what gemma3Features gives a GGUF of the
 * same model. The sliding pattern from `layer_types` (or `sliding_window_pattern`, 6 by default, as llama.cpp
 * fixes it), the global layers' RoPE base `rope_theta`, the sliding ones' `rope_local_base_freq` (transformers 5:
 * rope_parameters.full_attention / sliding_attention). Refused where the decoder would compute something else:
 * multimodal checkpoints (text_config), another activation, logit soft-capping. The attention scale is
 * 1/sqrt(query_pre_attn_scalar) (27B: 168 where head_dim is 128). The norms' 1 + w is applied at load (hfNormShift).
 */
function gemma3HfFeatures(config: Record<string, unknown>, hidden: number, headDim: number, layers: number): Partial<ModelConfig> {
  const fail = (why: string) => {
    throw new Error(`Model config: Gemma 3 checkpoint: ${why}`);
  };
  if (config.text_config !== undefined) fail('a multimodal Gemma3ForConditionalGeneration checkpoint (text_config) is not supported; use a text-only Gemma3ForCausalLM folder or a GGUF file');
  const activation = config.hidden_activation ?? config.hidden_act ?? 'gelu_pytorch_tanh';
  if (activation !== 'gelu_pytorch_tanh') fail(`hidden_activation "${String(activation)}" is not supported (only gelu_pytorch_tanh)`);
  // transformers' default is 256.
  const scalar = optionalNumber(config.query_pre_attn_scalar, 'query_pre_attn_scalar') ?? 256;
  if (!(scalar > 0)) fail(`query_pre_attn_scalar ${scalar} must be positive`);
  for (const k of ['attn_logit_softcapping', 'final_logit_softcapping']) {
    if (config[k] !== undefined && config[k] !== null) fail(`${k} is not supported`);
  }
  const params = (config.rope_parameters ?? null) as Record<string, Record<string, unknown> | undefined> | null;
  const globalTheta = optionalNumber(config.rope_theta ?? params?.full_attention?.rope_theta, 'rope_theta') ?? 1e6;
  const localTheta = optionalNumber(config.rope_local_base_freq ?? params?.sliding_attention?.rope_theta, 'rope_local_base_freq') ?? GEMMA3_ROPE_THETA_SLIDING;
  const window = optionalNumber(config.sliding_window, 'sliding_window');
  let pattern = optionalNumber(config.sliding_window_pattern ?? config._sliding_window_pattern, 'sliding_window_pattern') ?? GEMMA3_SWA_PATTERN;
  if (Array.isArray(config.layer_types)) {
    const types = config.layer_types as unknown[];
    if (types.length !== layers || !types.every((t) => t === 'sliding_attention' || t === 'full_attention')) fail(`layer_types must name ${layers} layers sliding_attention or full_attention`);
    const sliding = types.map((t) => t === 'sliding_attention');
    const firstFull = sliding.indexOf(false);
    const fits = (p: number) => sliding.every((s, l) => s === (l % p < p - 1));
    const found = [pattern, firstFull + 1].find((p) => p >= 1 && fits(p));
    if (found === undefined) fail(`layer_types ${JSON.stringify(types)} is not a repeating pattern of sliding layers then one full layer`);
    pattern = found!;
  }
  return {
    ...(scalar !== headDim ? { attentionScaleDim: scalar } : {}),
    ffnActivation: 'gelu',
    embeddingScale: Math.sqrt(hidden),
    postNorms: true,
    ropeTheta: globalTheta,
    ...(window !== undefined && window > 0 && pattern > 1 ? { slidingWindow: { size: window, pattern }, ropeThetaSliding: localTheta } : {}),
  };
}

/**
 * What a Hugging Face tensor's values need added at load to be the decoder's (the GGUF converter's) values:
 * Gemma 3's RMSNorm weights are stored as w and used as 1 + w (llama.cpp's converter writes 1 + w); 0 otherwise.
 */
export function hfNormShift(arch: ModelArch, ggufName: string): number {
  return arch === 'gemma3' && ggufName.endsWith('norm.weight') ? 1 : 0;
}

/**
 * The RoPE factors a GGUF holds, read on the CPU at load (upload-weights.ts): `rope_freqs.weight` (Llama 3's
 * per-pair divisors), or LongRoPE's `rope_factors_short.weight` and `rope_factors_long.weight` (phi3), of which
 * ropeFactorsFor picks one.
 */
export type RopeFileFactors = { freqs: Float32Array } | { short: Float32Array; long: Float32Array };

/**
 * The per-frequency RoPE divisors a decoder serving `maxSeq` positions uses: the file's rope_freqs as loaded; for
 * LongRoPE the short or the long factors (config.json's, else the file's) by the served context, as llama.cpp
 * picks them (long when maxSeq > originalContextLength).
 */
export function ropeFactorsFor(c: Pick<ModelConfig, 'ropeScaling'>, maxSeq: number, file?: RopeFileFactors): ArrayLike<number> | undefined {
  const s = c.ropeScaling;
  if (s?.type !== 'longrope') return file && 'freqs' in file ? file.freqs : undefined;
  const long = maxSeq > s.originalContextLength;
  const fromConfig = long ? s.longFactors : s.shortFactors;
  if (fromConfig) return fromConfig;
  if (!file || !('short' in file)) throw new Error('LongRoPE: the model has no rope_factors_short/long tensors');
  return long ? file.long : file.short;
}

/** Llama-3 per-frequency RoPE divisors (frequency i is divided by factor i), as llama.cpp's rope_freqs.weight. */
export function llama3RopeFactors(theta: number, headDim: number, s: Omit<Extract<RopeScaling, { type: 'llama3' }>, 'type'>): Float32Array {
  const out = new Float32Array(headDim / 2);
  const lowFreqWavelen = s.originalContextLength / s.lowFreqFactor;
  const highFreqWavelen = s.originalContextLength / s.highFreqFactor;
  for (let i = 0; i < headDim / 2; i++) {
    const freq = 1 / theta ** ((2 * i) / headDim);
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < highFreqWavelen) out[i] = 1;
    else if (wavelen > lowFreqWavelen) out[i] = s.factor;
    else {
      const smooth = (s.originalContextLength / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
      out[i] = 1 / ((1 - smooth) / s.factor + smooth);
    }
  }
  return out;
}

const HF_LAYER_NAMES: Record<string, string> = {
  'input_layernorm.weight': 'attn_norm.weight',
  'self_attn.q_proj.weight': 'attn_q.weight',
  'self_attn.k_proj.weight': 'attn_k.weight',
  'self_attn.v_proj.weight': 'attn_v.weight',
  'self_attn.q_proj.bias': 'attn_q.bias',
  'self_attn.k_proj.bias': 'attn_k.bias',
  'self_attn.v_proj.bias': 'attn_v.bias',
  'self_attn.q_norm.weight': 'attn_q_norm.weight',
  'self_attn.k_norm.weight': 'attn_k_norm.weight',
  'self_attn.o_proj.weight': 'attn_output.weight',
  // phi3: q, k and v in one matrix (the decoder's concatenated q/k/v), gate and up in one (GGUF's fused ffn_up;
  // the weight loader splits it in two, see splitFusedGateUp).
  'self_attn.qkv_proj.weight': 'attn_qkv.weight',
  'mlp.gate_up_proj.weight': 'ffn_up.weight',
  'post_attention_layernorm.weight': 'ffn_norm.weight',
  'mlp.gate_proj.weight': 'ffn_gate.weight',
  'mlp.up_proj.weight': 'ffn_up.weight',
  'mlp.down_proj.weight': 'ffn_down.weight',
};

/**
 * Gemma 3's four norms per layer: post_attention_layernorm is the norm on the attention output (GGUF
 * post_attention_norm), not the one before the feed-forward (pre_feedforward_layernorm).
 */
const GEMMA3_HF_LAYER_NAMES: Record<string, string> = {
  ...HF_LAYER_NAMES,
  'post_attention_layernorm.weight': 'post_attention_norm.weight',
  'pre_feedforward_layernorm.weight': 'ffn_norm.weight',
  'post_feedforward_layernorm.weight': 'post_ffw_norm.weight',
};

/** The GGUF name of a Hugging Face tensor name (model.layers.3.mlp.up_proj.weight -> blk.3.ffn_up.weight), or null. */
export function ggufNameOfHfTensor(hfName: string, arch?: ModelArch): string | null {
  if (hfName === 'model.embed_tokens.weight') return 'token_embd.weight';
  if (hfName === 'model.norm.weight') return 'output_norm.weight';
  if (hfName === 'lm_head.weight') return 'output.weight';
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hfName);
  if (!m) return null;
  const suffix = (arch === 'gemma3' ? GEMMA3_HF_LAYER_NAMES : HF_LAYER_NAMES)[m[2]];
  return suffix ? `blk.${m[1]}.${suffix}` : null;
}
