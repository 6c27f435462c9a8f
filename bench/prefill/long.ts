// One long prefill of the decoder alone, as bench/prefill/bench.ts times it (no tokenizer, no sampler; seeded random
// token ids; the KV cache sized past the model's context where asked, for speed only; the current default
// attention kernels), but on a GpuContext and a GGUF the caller brings: `npm run bench` runs it in its Chromium page
// on the bundled model at 8192 tokens (issue 19's "prefill of an 8k prompt on the bundled model under 60 s").
// Wall seconds of the whole prefill (Decoder.forward in chunks of maxBatch, the last token's logits read back),
// and the GPU ms per op of one more 64-token chunk at the end of the prompt (Decoder.profile: the chunk where
// attention costs most). Imports nothing Node- or browser-specific.
import type { GpuContext } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { Decoder } from '../../src/model/decoder.ts';
import { assembleDecoderWeights } from '../../src/model/decoder-weights.ts';
import { readGguf } from '../../src/model/gguf.ts';
import { modelConfigFromGguf } from '../../src/model/model-config.ts';
import { uploadTensors } from '../../src/model/upload-weights.ts';
import { ggufTensorSources } from '../../src/model/weight-loader.ts';
import type { ModelConfig } from '../../src/model/model-config.ts';

export interface LongPrefillResult {
  tokens: number;
  seconds: number;
  tok_s: number;
  chunk_tokens: number;
  chunks: number;
  model: { architecture: string; layers: number; hidden: number; heads: number; kv_heads: number; head_dim: number; context: number; kv_cache_positions: number };
  /** GPU ms per op of one more 64-token chunk after the prompt (timestamp queries), largest first. */
  gpu_ms_per_op_last_chunk: { op: string; ms: number; count: number }[] | null;
  /** Wall seconds after each quarter of the prompt (where the time goes as the cached length grows). */
  seconds_at_quarters: number[];
  /**
   * Greedy decode right after the prompt (every step attends to all of it): tok/s over `tokens` steps (the decoder's
   * steps in flight), and the GPU ms per op of one more step there. What a conversation with a long history (a coding
   * agent's ~11k-token base prompt) decodes at, against the short-context rows of the bench.
   */
  decode_after: { tokens: number; tok_s: number; ms_per_step: number; gpu_ms_per_op: { op: string; ms: number; count: number }[] | null } | null;
}

export const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Seeded random token ids below `vocabSize` (an LCG from seed 1): `n` more at each call. */
export function seededTokens(vocabSize: number): (n: number) => number[] {
  let seed = 1;
  return (n) => Array.from({ length: n }, () => (seed = (seed * 1103515245 + 12345) >>> 0) % vocabSize);
}

/** The model fields the prefill benches report, with the KV cache's positions. */
export function modelSummary(config: ModelConfig, kvCachePositions: number): LongPrefillResult['model'] {
  return { architecture: config.arch, layers: config.layers, hidden: config.hidden, heads: config.heads, kv_heads: config.kvHeads, head_dim: config.headDim, context: config.contextLength, kv_cache_positions: kvCachePositions };
}

export async function longPrefill(gpu: GpuContext, gguf: Blob, tokens: number, options: { onProgress?: (done: number, total: number) => void; decodeTokens?: number } = {}): Promise<LongPrefillResult> {
  const file = await readGguf(gguf);
  const config = modelConfigFromGguf(file);
  const uploaded = await uploadTensors(gpu.device, ggufTensorSources(file));
  try {
    const weights = assembleDecoderWeights(config, (name) => uploaded.tensors.get(name), uploaded.ropeFreqFactors);
    const decodeTokens = options.decodeTokens ?? 16;
    // The prompt, the profiled chunk (at most 64) and step, the decode; past the model's context where asked: speed only.
    const maxSeq = tokens + 64 + 1 + decodeTokens;
    const decoder = await Decoder.create(gpu, config, weights, { maxSeq, pipelines: new PipelineCache(gpu.device) });
    try {
      const tokensOf = seededTokens(config.vocabSize);
      // Warm-up: one chunk compiles the prefill pipelines outside the timing (bench/prefill's first round pays it).
      await decoder.forward(tokensOf(Math.min(64, decoder.maxBatch)), { logits: 'last' });
      decoder.kv.clear();
      const prompt = tokensOf(tokens);
      const quarters: number[] = [];
      const t0 = performance.now();
      await decoder.forward(prompt, {
        logits: 'last',
        onProgress: (done, total) => {
          if (quarters.length < 4 && done >= ((quarters.length + 1) * total) / 4) quarters.push(round3((performance.now() - t0) / 1000));
          options.onProgress?.(done, total);
        },
      });
      const seconds = (performance.now() - t0) / 1000;
      const ops = await decoder.profile(tokensOf(Math.min(64, decoder.maxBatch)));
      let decodeAfter: LongPrefillResult['decode_after'] = null;
      if (decodeTokens > 0) {
        const stepOps = await decoder.profile(tokensOf(1));
        const d0 = performance.now();
        let n = 0;
        for await (const _ of decoder.decode(tokensOf(1)[0], { maxSteps: decodeTokens })) n++;
        const ms = performance.now() - d0;
        decodeAfter = {
          tokens: n,
          tok_s: round3((n * 1000) / ms),
          ms_per_step: round3(ms / n),
          gpu_ms_per_op: stepOps, // Decoder.profile: slowest first, ms to 3 decimals
        };
      }
      return {
        tokens,
        seconds: round3(seconds),
        tok_s: round3(tokens / seconds),
        chunk_tokens: decoder.maxBatch,
        chunks: Math.ceil(tokens / decoder.maxBatch),
        model: modelSummary(config, maxSeq),
        gpu_ms_per_op_last_chunk: ops,
        seconds_at_quarters: quarters,
        decode_after: decodeAfter,
      };
    } finally {
      decoder.destroy();
    }
  } finally {
    uploaded.destroy();
  }
}
