// The quantized files the quant-mix tests run (browser-safe: plain data shared by the Node fixture step,
// quant-mix-fixtures.ts, and the Chromium test, quant-mix.test.ts): F32 models from tools/make-test-model quantized
// by llama.cpp's own llama_model_quantize to each mix llama-quantize writes, at a width whose rows are whole
// 256-weight super-blocks (K-quants as named) and at one whose rows are not (llama-quantize falls back per tensor:
// Q4_K -> Q5_0, Q5_K -> Q5_1, Q2_K/Q3_K -> Q4_0..., IQ4_XS -> IQ4_NL, Q6_K -> Q8_0, ...).

export const QUANT_MIX_FTYPES = [
  'Q4_K_M', 'Q4_K_S', 'Q5_K_M', 'Q5_K_S', 'Q3_K_S', 'Q3_K_M', 'Q3_K_L', 'Q2_K',
  'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q6_K', 'Q8_0', 'IQ4_NL', 'IQ4_XS',
] as const;
export type QuantMixFtype = (typeof QUANT_MIX_FTYPES)[number];

export interface QuantMixShape {
  id: string;
  arch: 'llama' | 'qwen2' | 'qwen3';
  hidden: number;
  intermediate: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  layers: number;
  seed: number;
  /** Whether the matrix rows are whole 256-weight super-blocks: all of them, none (every K-quant falls back), or some. */
  superBlockRows: 'all' | 'none' | 'some';
  /** The mixes to make of this shape (default: all). */
  ftypes?: readonly QuantMixFtype[];
  /** Formats every mix of this shape must hold (e.g. F16 for rows that are not whole 32-weight blocks). */
  alwaysHolds?: readonly string[];
}

export const QUANT_MIX_SHAPES: QuantMixShape[] = [
  { id: 'w256', arch: 'llama', hidden: 256, intermediate: 768, heads: 4, kvHeads: 2, headDim: 64, layers: 2, seed: 21, superBlockRows: 'all' },
  { id: 'w384', arch: 'qwen2', hidden: 384, intermediate: 640, heads: 6, kvHeads: 2, headDim: 64, layers: 2, seed: 22, superBlockRows: 'none' },
  // ffn_down's rows (640) are not whole super-blocks, the rest are: K-quants and their fallbacks in one file.
  { id: 'w256-ffn640', arch: 'qwen3', hidden: 256, intermediate: 640, heads: 4, kvHeads: 2, headDim: 64, layers: 2, seed: 23, superBlockRows: 'some' },
  // SmolLM2-135M's width and heads (576 = 9 x 64, 3 KV heads; its FFN of 1536 is whole super-blocks).
  { id: 'w576', arch: 'llama', hidden: 576, intermediate: 1536, heads: 9, kvHeads: 3, headDim: 64, layers: 1, seed: 24, superBlockRows: 'some', ftypes: ['Q4_K_M', 'Q5_K_M', 'Q3_K_M', 'Q2_K', 'IQ4_XS', 'Q6_K'] },
  // ffn_down's rows (176) are not whole 32-weight blocks either: llama-quantize writes them F16, the rest 32-weight
  // fallbacks (as in published files of narrow models).
  { id: 'w96-ffn176', arch: 'qwen2', hidden: 96, intermediate: 176, heads: 3, kvHeads: 1, headDim: 32, layers: 2, seed: 25, superBlockRows: 'none', ftypes: ['Q4_K_M', 'Q5_K_S', 'Q2_K', 'IQ4_XS', 'Q8_0'], alwaysHolds: ['F16'] },
];

export interface QuantMixCase {
  id: string;
  ftype: QuantMixFtype;
  shape: QuantMixShape;
}

export const QUANT_MIX_CASES: QuantMixCase[] = QUANT_MIX_SHAPES.flatMap((shape) =>
  (shape.ftypes ?? QUANT_MIX_FTYPES).map((ftype) => ({ id: `${shape.id}-${ftype.toLowerCase()}`, ftype, shape })),
);

export const QUANT_MIX_PROMPT = [11, 300, 42, 7, 99, 250, 3, 180, 64, 12, 77, 201, 5, 140, 33, 260];
export const QUANT_MIX_GREEDY = 32;

export interface QuantMixFixtureIndex {
  hash: string;
  cases: {
    id: string;
    /** Path the dev server serves. */
    gguf: string;
    /** Each tensor's ggml type id as node-llama-cpp's GGUF reader sees the file. */
    llamaTypes: Record<string, number>;
    /** llama.cpp: logits at every position of QUANT_MIX_PROMPT + greedy[0..n-2], and its greedy tokens. */
    llama: { logits: number[][]; greedy: number[] };
  }[];
}
