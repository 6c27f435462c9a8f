// The shapes of the models in src/model-store/remote-catalog.ts (each model's config.json: layers, hidden, heads, kv heads,
// head dim, FFN, vocabulary, tied head, RoPE), and the llama-quantize file type its catalog file is. build.ts makes a
// random-weight model of each: one layer generated in F32 at the real vocabulary, quantized by llama.cpp's own
// llama_model_quantize to that file type, the layer then repeated to the real layer count (bench/gpu/models.ts's
// repeatLayers), so the file holds as many bytes, of the same types, as the published one (Q4_K_M's per-layer
// mix follows layer 0, which llama.cpp gives its "more bits" types: attn_v and ffn_down Q6_K in every layer).
import type { TestModelOptions } from '../../tools/make-test-model/build.ts';
import type { LlamaFtype } from '../../test/support/ggml-oracle.ts';

export interface RealSizeShape {
  /** The catalog entry (src/model-store/remote-catalog.ts id). */
  id: string;
  /** The published model. */
  name: string;
  /** llama-quantize's file type, as the catalog's file is. */
  ftype: LlamaFtype;
  /** make-test-model options of the real shape (layers: the real count; generated as one layer, repeated). */
  options: TestModelOptions;
  /** Vocabulary rows (config.json vocab_size). */
  vocab: number;
  /**
   * What the check does on this 2-core machine's CPU adapter (SwiftShader): 'full' (logits at 8 positions, 8 decode
   * tokens, a 32-token prefill, wllama the same), 'reduced' (the 1B and 3-4B shapes: logits at 3 positions, 3 decode
   * tokens, the prefill of their prompt), 'header' (gpt-oss-20b, ~12 GB: header and limits only, header-check.ts).
   */
  scope: 'full' | 'reduced' | 'header';
}

export const REAL_SIZE_SHAPES: RealSizeShape[] = [
  {
    id: 'qwen2.5-0.5b-instruct-q4_0', name: 'Qwen2.5-0.5B-Instruct', ftype: 'Q4_0', vocab: 151936, scope: 'full',
    options: { arch: 'qwen2', type: 'F32', tiedEmbeddings: true, layers: 24, hidden: 896, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, ropeTheta: 1000000, contextLength: 32768 },
  },
  {
    id: 'qwen2.5-0.5b-instruct-q8_0', name: 'Qwen2.5-0.5B-Instruct', ftype: 'Q8_0', vocab: 151936, scope: 'full',
    options: { arch: 'qwen2', type: 'F32', tiedEmbeddings: true, layers: 24, hidden: 896, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, ropeTheta: 1000000, contextLength: 32768 },
  },
  {
    id: 'smollm2-360m-instruct-q8_0', name: 'SmolLM2-360M-Instruct', ftype: 'Q8_0', vocab: 49152, scope: 'full',
    options: { arch: 'llama', type: 'F32', tiedEmbeddings: true, layers: 32, hidden: 960, heads: 15, kvHeads: 5, headDim: 64, intermediate: 2560, ropeTheta: 100000, rmsEps: 1e-5, contextLength: 8192 },
  },
  {
    id: 'qwen3-0.6b-q8_0', name: 'Qwen3-0.6B', ftype: 'Q8_0', vocab: 151936, scope: 'full',
    options: { arch: 'qwen3', type: 'F32', tiedEmbeddings: true, layers: 28, hidden: 1024, heads: 16, kvHeads: 8, headDim: 128, intermediate: 3072, ropeTheta: 1000000, contextLength: 40960 },
  },
  {
    id: 'llama-3.2-1b-instruct-q4_k_m', name: 'Llama-3.2-1B-Instruct', ftype: 'Q4_K_M', vocab: 128256, scope: 'reduced',
    options: {
      arch: 'llama', type: 'F32', tiedEmbeddings: true, layers: 16, hidden: 2048, heads: 32, kvHeads: 8, headDim: 64, intermediate: 8192, ropeTheta: 500000, rmsEps: 1e-5, contextLength: 131072,
      ropeScaling: { factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalContextLength: 8192 },
    },
  },
  {
    id: 'gemma-3-1b-it-q4_0', name: 'Gemma-3-1B-it', ftype: 'Q4_0', vocab: 262144, scope: 'reduced',
    options: { arch: 'gemma3', type: 'F32', tiedEmbeddings: true, layers: 26, hidden: 1152, heads: 4, kvHeads: 1, headDim: 256, intermediate: 6912, ropeTheta: 1000000, window: 512, contextLength: 32768 },
  },
  {
    id: 'phi-4-mini-instruct-q4_k_m', name: 'Phi-4-mini-instruct', ftype: 'Q4_K_M', vocab: 200064, scope: 'reduced',
    options: { arch: 'phi3', type: 'F32', tiedEmbeddings: true, layers: 32, hidden: 3072, heads: 24, kvHeads: 8, headDim: 128, intermediate: 8192, ropeTheta: 10000, rmsEps: 1e-5, ropeDims: 96, longRopeOriginalContext: 4096, contextLength: 131072 },
  },
  {
    id: 'smollm3-3b-q4_k_m', name: 'SmolLM3-3B', ftype: 'Q4_K_M', vocab: 128256, scope: 'reduced',
    options: { arch: 'smollm3', type: 'F32', tiedEmbeddings: true, layers: 36, hidden: 2048, heads: 16, kvHeads: 4, headDim: 128, intermediate: 11008, ropeTheta: 5000000, contextLength: 65536 },
  },
  {
    // Experts MXFP4, the rest Q8_0 (ggml-org's file; llama-quantize's MXFP4_MOE writes that mix). Untied head.
    id: 'gpt-oss-20b-mxfp4', name: 'gpt-oss-20b', ftype: 'MXFP4_MOE', vocab: 201088, scope: 'header',
    options: { arch: 'gpt-oss', type: 'F32', layers: 24, hidden: 2880, heads: 64, kvHeads: 8, headDim: 64, intermediate: 2880, experts: 32, expertsUsed: 4, window: 128, ropeTheta: 150000, yarnFactor: 32, yarnOriginalContext: 4096, contextLength: 131072 },
  },
];

export function realSizeShape(id: string): RealSizeShape {
  const shape = REAL_SIZE_SHAPES.find((s) => s.id === id);
  if (!shape) throw new Error(`no real-size shape for "${id}" (have: ${REAL_SIZE_SHAPES.map((s) => s.id).join(', ')})`);
  return shape;
}
