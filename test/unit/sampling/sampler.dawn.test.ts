// The GPU sampler in Node on Dawn (the `webgpu` package): the same checks as test/gpu/sampling.test.ts in
// Chromium. Both compare against the CPU reference draw for the same seed and step, so Chromium and Dawn give
// the same tokens for the same seed. Needs
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
// without an adapter these tests are skipped, saying why.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { create, globals } from 'webgpu';
import { acquireGpu, type GpuContext } from '../../../src/gpu/device.ts';
import { DISTRIBUTION_CASES, checkDistribution, checkGreedyAndLogprobs, checkFlatVocabulary, checkLargeVocabulary, checkSequentialSteps } from './sampling-checks.ts';
import { needDawnAdapter } from '../../support/dawn-adapter.ts';

Object.assign(globalThis, globals);
// Dawn's GPU object must outlive every device made from it.
const dawn = create([]);

let gpu: GpuContext | null = null;
let missing = '';
beforeAll(async () => {
  try {
    gpu = await acquireGpu({ gpu: dawn });
  } catch (error) {
    missing = `no WebGPU adapter on Dawn (${error instanceof Error ? error.message : String(error)})`;
  }
});
afterAll(() => gpu?.destroy());

function need(ctx: { skip: (note?: string) => void }): GpuContext {
  return needDawnAdapter(ctx, gpu, missing);
}

describe('GPU sampler on Dawn', () => {
  for (const c of DISTRIBUTION_CASES) {
    test(`matches the exact distribution: ${c.name}`, async (ctx) => {
      expect(await checkDistribution(need(ctx), c)).toEqual([]);
    });
  }
  test('greedy, logprobs, top-N and masks', async (ctx) => {
    expect(await checkGreedyAndLogprobs(need(ctx))).toEqual([]);
  });
  test('a 152k vocabulary draws what the reference draws', async (ctx) => {
    expect(await checkLargeVocabulary(need(ctx))).toEqual([]);
  });
  test('top-p over a flat 152k vocabulary searches a window of candidates and draws what the reference draws', async (ctx) => {
    expect(await checkFlatVocabulary(need(ctx))).toEqual([]);
  });
  test("the same in a GPU's kernel shapes (256-wide one-workgroup kernels over 1024 units)", async (ctx) => {
    expect(await checkFlatVocabulary(need(ctx), { cpuShapes: false })).toEqual([]);
  });
  test('sequential steps with penalties replay under the same seed', async (ctx) => {
    expect((await checkSequentialSteps(need(ctx))).problems).toEqual([]);
  });
});
