// The generated models the forward-pass tests run (shared by the Node fixture step and the Chromium tests).

export interface ForwardCase {
  id: string;
  /** TestModelOptions (tools/make-test-model), kept as plain JSON so the page can import this file. */
  options: {
    arch: 'llama' | 'qwen2' | 'qwen3';
    type: 'F32' | 'F16' | 'BF16' | 'Q8_0' | 'Q4_0' | 'Q4_K' | 'Q6_K';
    seed: number;
    hidden: number;
    heads: number;
    kvHeads: number;
    headDim?: number;
    layers?: number;
    tiedEmbeddings?: boolean;
    ropeScaling?: { factor: number; lowFreqFactor: number; highFreqFactor: number; originalContextLength: number };
  };
}

export interface ForwardFixtureIndex {
  hash: string;
  cases: {
    id: string;
    /** Paths the dev server serves. */
    gguf: string;
    hfDir: string;
    hfFiles: string[];
    /** llama.cpp: logits at every position of FORWARD_PROMPT + greedy[0..n-2], and its greedy tokens. */
    llama: { logits: number[][]; greedy: number[] };
  }[];
}

const TYPES = ['F32', 'F16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K'] as const;

export const FORWARD_CASES: ForwardCase[] = [];
for (const arch of ['llama', 'qwen2', 'qwen3'] as const) {
  for (const type of TYPES) {
    const kQuant = type === 'Q4_K' || type === 'Q6_K';
    FORWARD_CASES.push({ id: `${arch}-${type.toLowerCase()}`, options: { arch, type, seed: 11, hidden: kQuant ? 256 : 64, heads: 4, kvHeads: 2 } });
  }
}
FORWARD_CASES.push({ id: 'qwen2-bf16', options: { arch: 'qwen2', type: 'BF16', seed: 11, hidden: 64, heads: 4, kvHeads: 2 } });
FORWARD_CASES.push({
  id: 'llama-f32-tied-rope-scaling',
  options: { arch: 'llama', type: 'F32', seed: 3, hidden: 64, heads: 2, kvHeads: 2, tiedEmbeddings: true, ropeScaling: { factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalContextLength: 64 } },
});
// Awkward shapes: hidden 68 (a multiple of the F32/F16 product block of 4 but of nothing larger: odd row counts
// of blocks for every tile; heads of 32), and the 513 x 68 F16 embedding/LM head ends inside a 16-byte word.
// (A hidden size that is not a multiple of 4 is refused: test/gpu/forward.test.ts.)
for (const type of ['F32', 'F16'] as const) {
  FORWARD_CASES.push({ id: `qwen3-${type.toLowerCase()}-hidden68`, options: { arch: 'qwen3', type, seed: 5, hidden: 68, heads: 2, kvHeads: 1, headDim: 32 } });
}

export const FORWARD_PROMPT = [11, 300, 42, 7, 99, 250, 3, 180, 64, 12, 77, 201, 5, 140, 33, 260];
export const FORWARD_GREEDY = 32;
