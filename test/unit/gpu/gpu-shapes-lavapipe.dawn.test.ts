// The kernel shapes a real GPU gets (src/gpu/kernel-shapes.ts for a non-CPU adapter: attention_decode.wgsl for
// decode attention, K split 8 products, workgroup-memory prefill attention) plus the tiled prefill products
// (matmul_tiled.wgsl, PREFILL_TILED), and the products' K splits bench/gpu's variants try (16 and 32 lanes a row
// group), run by a second Vulkan compiler: Mesa's lavapipe (NIR to LLVM), where SwiftShader is the other. Its
// subgroups of 8 lanes sum the GPU default's K split 8 by subgroup shuffles, which SwiftShader's 4 lanes never do;
// `LAVAPIPE_LANES=32 npx vitest run --project unit test/unit/gpu/gpu-shapes-lavapipe.dawn.test.ts` gives it NVIDIA's
// 32 (test/support/lavapipe-wide.ts; slow to compile) and adds the variants' K splits 16 and 32, summed by shuffles
// there (passed 2026-12-04: within 3.6e-6). GPU kernels have been timed on one real GPU
// only; a driver that compiles them differently (its subgroups, barriers, workgroup memory) is the check possible here. Generated models (qwen3 F32 with
// the q/k norm and NEOX RoPE, llama Q4_0 with interleaved RoPE): 70 prompt tokens (two 64-token tiles) then 10 decode
// steps past a 64-position split, with the GPU shapes against the same decoder with lavapipe's own (CPU-adapter)
// shapes: the same f32 arithmetic in another order, within 1e-4 (logits ~ N(0, 1)).
// Runs on lavapipe (test/support/lavapipe.ts, imported first, sets VK_ICD_FILENAMES); without it, fails saying how
// to install it (.ci/run does).
import { LAVAPIPE_INSTALL, lavapipeIcd } from '../../support/lavapipe-wide.ts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../../src/gpu/device.ts';
import { ForwardKernels } from '../../../src/gpu/forward-kernels.ts';
import { forwardKernelShapesFor, kernelShapesFor } from '../../../src/gpu/kernel-shapes.ts';
import { PipelineCache } from '../../../src/gpu/pipeline-cache.ts';
import { readGguf } from '../../../src/model/gguf.ts';
import { modelConfigFromGguf } from '../../../src/model/model-config.ts';
import { ggufTensorSources } from '../../../src/model/weight-loader.ts';
import { fileSource } from '../../../src/node-host/file-source.ts';
import { dawn, decoderLogits } from '../../support/dawn-decoder.ts';
import { maxAbsDiff } from '../../support/logit-diff.ts';
import { makeTestModel, type TestModelOptions } from '../../support/test-models.ts';

const CASES: { name: string; options: TestModelOptions }[] = [
  { name: 'qwen3 F32 (q/k norm, NEOX)', options: { arch: 'qwen3', type: 'F32', seed: 81, hidden: 128, heads: 4, kvHeads: 2, headDim: 32, intermediate: 192, layers: 2 } },
  { name: 'llama Q4_0 (interleaved)', options: { arch: 'llama', type: 'Q4_0', seed: 82, hidden: 128, heads: 4, kvHeads: 1, intermediate: 256, layers: 2 } },
];
const TOKENS = Array.from({ length: 80 }, (_, i) => (i * 53 + 7) % 250);
const PREFILL = 70;

let gpu: GpuContext | null = null;
let missing = '';
beforeAll(async () => {
  if (!lavapipeIcd) {
    missing = `no lavapipe Vulkan driver under /usr/share/vulkan/icd.d. ${LAVAPIPE_INSTALL}`;
    return;
  }
  try {
    gpu = await acquireGpu({ gpu: dawn, label: 'GPU shapes on lavapipe' });
  } catch (error) {
    missing = `no WebGPU adapter on Dawn over lavapipe (${lavapipeIcd}: ${error instanceof Error ? error.message : String(error)}). ${LAVAPIPE_INSTALL}`;
  }
}, 120_000);
afterAll(() => gpu?.destroy());

/** The K splits of bench/gpu's variants (lanes sharing 4 rows), beside the GPU default's 8. */
const K_SPLITS = [
  { WORKGROUP_SIZE: 64, K_SPLIT: 16, TILE_M: 4 },
  { WORKGROUP_SIZE: 32, K_SPLIT: 32, TILE_M: 4 },
  { WORKGROUP_SIZE: 64, K_SPLIT: 32, TILE_M: 4, PREFILL_TILED: true },
];

describe.each(CASES)('$name', (c) => {
  test('a GPU\'s shapes (attention_decode, K split 8, tiled prefill products) give the logits of lavapipe\'s own', async () => {
    if (!gpu) throw new Error(missing);
    const info = gpu.adapterInfo;
    // What forwardKernelShapesFor gives a GPU of this one's limits and subgroups.
    const asGpu = { ...info, vendor: 'nvidia', architecture: '', description: 'a GPU', isFallbackAdapter: false };
    const forward = forwardKernelShapesFor(asGpu, gpu.limits);
    const shapes = { kernels: kernelShapesFor(asGpu, gpu.limits), forward: { ...forward, product: { ...forward.product, PREFILL_TILED: true } } };
    expect(forward.attention.COOPERATIVE).toBe(true);
    const model = await makeTestModel(c.options);
    const file = await readGguf(fileSource(model.ggufPath));
    const config = modelConfigFromGguf(file);
    const sources = ggufTensorSources(file);
    const device = { gpu, pipelines: new PipelineCache(gpu.device), missing: '' };
    const run = { prefill: PREFILL, decoder: { maxSeq: 96 } };
    const own = await decoderLogits(device, config, sources, TOKENS, run);
    const asGpuLogits = await decoderLogits(device, config, sources, TOKENS, { ...run, decoder: { ...run.decoder, shapes } });
    const diff = maxAbsDiff(asGpuLogits, own);
    console.log(`${c.name} on lavapipe (subgroups ${info.subgroupMinSize}..${info.subgroupMaxSize}): max |GPU shapes - own shapes| ${diff.toExponential(2)} over ${TOKENS.length} positions`);
    expect(asGpuLogits.length).toBe(TOKENS.length);
    expect(diff).toBeLessThan(1e-4);
    // The variants' K splits (quantized products), where subgroups hold them (LAVAPIPE_LANES=32): summed by shuffles,
    // as on the H200. At 8 lanes they go through workgroup memory, as SwiftShader's tests have them already.
    if (c.options.type !== 'Q4_0' || (info.subgroupMinSize ?? 0) < 16) return;
    for (const product of K_SPLITS) {
      const kernels = new ForwardKernels(gpu, { shapes: { product } });
      expect(kernels.productSplit).toBe((info.subgroupMinSize ?? 0) >= product.K_SPLIT ? 'subgroup' : 'workgroup');
      kernels.destroy();
      const split = await decoderLogits(device, config, sources, TOKENS, { ...run, decoder: { ...run.decoder, shapes: { ...shapes, forward: { ...shapes.forward, product } } } });
      const d = maxAbsDiff(split, own);
      console.log(`${c.name}, products ${JSON.stringify(product)}: ${d.toExponential(2)}`);
      expect(d, JSON.stringify(product)).toBeLessThan(1e-4);
    }
  }, 600_000);
});
