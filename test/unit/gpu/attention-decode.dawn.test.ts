// attention_decode.wgsl (kernel-shapes.ts attention.COOPERATIVE, GPUs' decode attention: a workgroup per KV head's
// chunk of query heads and split) inside the decoder (Node, Dawn), on generated models of the architectures whose
// decode steps take RoPE inside attention in every form it has: NEOX (qwen2), NEOX with the q/k norm and head dim
// 128 (qwen3: one value group in a workgroup of 32), NEOX over part of the head (phi3, 24 of 32 rotated dims),
// interleaved pairs with NoPE layers (smollm3: those layers store their keys by the rope op and attend without
// ROPE), a sliding window on 5 of 7 layers (gemma3). Each model's logits over a prefill of 20 tokens and 20 decode
// steps with the cooperative kernel (splits of 8 positions; and unsplit, positions in two tiles of 32) against the
// same decoder with this adapter's own attention.wgsl shapes: the same f32 arithmetic summed in another order, so
// within 1e-4 (logits up to ~4; measured below 3e-6). Both with GeGLU's GELU in f32 (geluF16 false): the f16 table's
// rounding turns gemma3's 1e-6 differences into 3.8e-4 at the last step. Dawn needs a Vulkan driver (vitest.config.ts).
import { openAsBlob } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readGguf } from '../../../src/model/gguf.ts';
import { BlobSource } from '../../../src/model/byte-source.ts';
import { modelConfigFromGguf } from '../../../src/model/model-config.ts';
import { ggufTensorSources } from '../../../src/model/weight-loader.ts';
import type { ForwardKernelShapes } from '../../../src/gpu/kernel-shapes.ts';
import { makeTestModel, type TestModelOptions } from '../../support/test-models.ts';
import { maxAbsDiff } from '../../support/logit-diff.ts';
import { acquireDawn, decoderLogits, type DawnDevice } from '../../support/dawn-decoder.ts';

const CASES: { name: string; options: TestModelOptions }[] = [
  { name: 'qwen2 (NEOX)', options: { arch: 'qwen2', type: 'F32', seed: 71, hidden: 64, heads: 4, kvHeads: 2, layers: 2 } },
  { name: 'qwen3 (q/k norm, head dim 128, 2:1 GQA)', options: { arch: 'qwen3', type: 'F32', seed: 72, hidden: 128, heads: 2, kvHeads: 1, headDim: 128, intermediate: 192, layers: 2 } },
  { name: 'phi3 (24 of 32 dims rotated, 3:1 GQA)', options: { arch: 'phi3', type: 'F32', seed: 73, hidden: 96, heads: 3, kvHeads: 1, headDim: 32, intermediate: 160, layers: 2, ropeDims: 24 } },
  { name: 'smollm3 (interleaved, layer 3 NoPE)', options: { arch: 'smollm3', type: 'F32', seed: 74, hidden: 64, heads: 4, kvHeads: 2, layers: 4 } },
  { name: 'gemma3 (window 6 on 5 of 7 layers)', options: { arch: 'gemma3', type: 'F32', seed: 75, hidden: 64, heads: 4, kvHeads: 2, layers: 7, window: 6, ropeTheta: 1e6, tiedEmbeddings: true } },
];

const LAYOUTS: Record<string, ForwardKernelShapes['attention']> = {
  'splits of 8': { WORKGROUP_SIZE: 32, SPLIT_POSITIONS: 8, HEADS: 8, COOPERATIVE: true },
  'unsplit, tiles of 32': { WORKGROUP_SIZE: 32, SPLIT_POSITIONS: 0, HEADS: 8, COOPERATIVE: true },
};

const TOKENS = Array.from({ length: 40 }, (_, i) => (i * 37 + 11) % 200);
const PREFILL = 20;

let device: DawnDevice = { gpu: null, pipelines: null, missing: 'not set up' };
beforeAll(async () => {
  device = await acquireDawn('attention_decode tests');
}, 120_000);
afterAll(() => device.gpu?.destroy());

describe.each(CASES)('$name', (c) => {
  test('decode steps through attention_decode.wgsl give the logits of attention.wgsl', async () => {
    const model = await makeTestModel(c.options);
    const file = await readGguf(new BlobSource(await openAsBlob(model.ggufPath), 'model.gguf'));
    const config = modelConfigFromGguf(file);
    const sources = ggufTensorSources(file);
    const own = await decoderLogits(device, config, sources, TOKENS, { prefill: PREFILL, decoder: { geluF16: false } });
    // Only the attention shapes differ from the run above: what the cache gains is attention_decode's pipeline (the
    // same one for both layouts, whose workgroup size and heads agree).
    const compiled = device.pipelines!.size;
    for (const [layout, attention] of Object.entries(LAYOUTS)) {
      const cooperative = await decoderLogits(device, config, sources, TOKENS, { prefill: PREFILL, decoder: { geluF16: false, shapes: { forward: { attention } } } });
      const diff = maxAbsDiff(cooperative, own);
      console.log(`${c.name}, ${layout}: max |attention_decode - attention| ${diff.toExponential(2)} over ${TOKENS.length} positions`);
      expect(cooperative.length).toBe(TOKENS.length);
      expect(diff).toBeLessThan(1e-4);
    }
    expect(device.pipelines!.size).toBeGreaterThan(compiled);
  }, 300_000);
});
