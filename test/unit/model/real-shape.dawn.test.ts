// The one real-shape case `npm test` runs (issue 15; the rest are `npm run check:real-sizes`, see bench/README.md):
// Qwen2.5-0.5B's layer shape (hidden 896, 14 query heads / 2 KV heads of 64, FFN 4864, qwen2 biases, tied head)
// with a small vocabulary (4096 rows) and 2 layers, one F32 layer quantized to Q4_0 by llama.cpp's own
// llama_model_quantize as Qwen's q4_0 file is (896 is no multiple of 256, so its fallbacks are llama.cpp's choice)
// and repeated (bench/real-sizes/build.ts, cached under .tmp/real-sizes). The engine's Decoder on Dawn against
// node-llama-cpp's logits on the same file: within the 0.25, and the same top token wherever llama.cpp's
// own top two are not a near-tie (its activations are rounded to 8 bits; ours are f32).
// Dawn needs a Vulkan driver (LD_LIBRARY_PATH / VK_ICD_FILENAMES, see vitest.config.ts).
import { openAsBlob, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildRealSize, REAL_SIZES_DIR, type RealSizeRef } from '../../../bench/real-sizes/build.ts';
import { realSizeShape, type RealSizeShape } from '../../../bench/real-sizes/shapes.ts';
import { BlobSource } from '../../../src/model/byte-source.ts';
import { readGguf } from '../../../src/model/gguf.ts';
import { modelConfigFromGguf } from '../../../src/model/model-config.ts';
import { ggufTensorSources } from '../../../src/model/weight-loader.ts';
import { acquireDawn, decoderLogits, type DawnDevice } from '../../support/dawn-decoder.ts';
import { maxAbsDiff } from '../../support/logit-diff.ts';

const base = realSizeShape('qwen2.5-0.5b-instruct-q4_0');
const SHAPE: RealSizeShape = { ...base, id: 'qwen2.5-0.5b-shape-vocab4096-2layers', vocab: 4096, options: { ...base.options, layers: 2, contextLength: 256 } };
const POSITIONS = 6;

let device: DawnDevice;
let ref: RealSizeRef;
beforeAll(async () => {
  device = await acquireDawn('real-shape');
  ref = await buildRealSize(SHAPE, POSITIONS, () => true);
}, 300_000);
afterAll(() => device?.gpu?.destroy());

const argmax = (row: ArrayLike<number>): number => {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
};
const margin = (row: ArrayLike<number>): number => {
  const sorted = Array.from(row).sort((a, b) => b - a);
  return sorted[0]! - sorted[1]!;
};

test("Qwen2.5-0.5B's layer shape in llama.cpp's Q4_0 mix: logits within 0.25 of llama.cpp's, same top token off near-ties", async () => {
  const path = join(REAL_SIZES_DIR, ref.dir, 'model.gguf');
  // llama.cpp wrote this mix: Q4_0 products, with the fallbacks it chose for rows that are not whole blocks.
  expect(ref.tensor_types.Q4_0).toBeGreaterThan(0);
  const file = await readGguf(new BlobSource(await openAsBlob(path), 'model.gguf'));
  const config = modelConfigFromGguf(file);
  expect(config).toMatchObject({ arch: 'qwen2', hidden: 896, layers: 2, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, vocabSize: 4096, qkvBias: true, tiedEmbeddings: true });
  const flat = new Float32Array(readFileSync(join(REAL_SIZES_DIR, ref.dir, 'ref-logits.f32')).buffer.slice(0));
  const theirs = ref.tokens.map((_, p) => flat.subarray(p * ref.vocab, (p + 1) * ref.vocab));
  // Prefill of the prompt, then one decode step per greedy token: both paths at the real widths.
  const ours = await decoderLogits(device, config, ggufTensorSources(file), ref.tokens, { prefill: ref.prompt.length });
  const diff = maxAbsDiff(ours, theirs);
  console.log(`real shape qwen2.5-0.5b (vocab 4096, 2 layers) Q4_0: max |logit - llama.cpp| = ${diff.toFixed(4)}; types ${JSON.stringify(ref.tensor_types)}`);
  expect(diff).toBeLessThan(0.25);
  const decided = theirs.map((row, p) => ({ p, m: margin(row) })).filter((x) => x.m > 0.05);
  expect(decided.length).toBeGreaterThan(0);
  for (const { p } of decided) expect(argmax(ours[p]!), `position ${p}`).toBe(argmax(theirs[p]!));
}, 300_000);
