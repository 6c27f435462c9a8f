// llama.cpp (through node-llama-cpp, CPU build shipped with the package) as the oracle of the model-file
// tests: tokenization and raw logits of a GGUF file.

import { getLlama, type Llama, type LlamaModel, type Token } from '../../../tools/llama-oracle/node_modules/node-llama-cpp/dist/index.js';

let llamaPromise: Promise<Llama> | null = null;

function llama(): Promise<Llama> {
  llamaPromise ??= getLlama({ gpu: false, build: 'never', logLevel: 'error' as never });
  return llamaPromise;
}

/** Load a GGUF in llama.cpp; dispose() the result when done. */
export async function loadLlamaModel(path: string, options: { vocabOnly?: boolean } = {}): Promise<LlamaModel> {
  return (await llama()).loadModel({ modelPath: path, gpuLayers: 0, vocabOnly: options.vocabOnly });
}

/** llama.cpp's token ids of `text` (specialTokens: whether control tokens in the text are parsed). */
export async function llamaTokenize(path: string, text: string, specialTokens: boolean): Promise<number[]> {
  const model = await loadLlamaModel(path);
  try {
    return Array.from(model.tokenize(text, specialTokens), Number);
  } finally {
    await model.dispose();
  }
}

/** llama.cpp's raw logits (full vocabulary) after each of `tokens`, evaluated as one sequence from position 0. */
export async function llamaLogits(path: string, tokens: number[]): Promise<Float32Array[]> {
  const model = await loadLlamaModel(path);
  try {
    const context = await model.createContext({ contextSize: Math.max(64, tokens.length + 8), batchSize: Math.max(64, tokens.length) });
    try {
      const sequence = context.getSequence();
      const results = await sequence.controlledEvaluate(
        tokens.map((t) => [t as Token, { generateNext: { logits: true } }] as [Token, { generateNext: { logits: true } }]),
      );
      return results.map((r, i) => {
        const logits = r?.next?.logits;
        if (!logits) throw new Error(`llama.cpp returned no logits after token ${i}`);
        const out = new Float32Array(logits.size);
        for (const [id, value] of logits) out[Number(id)] = value;
        return out;
      });
    } finally {
      await context.dispose();
    }
  } finally {
    await model.dispose();
  }
}
