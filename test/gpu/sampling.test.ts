// The GPU sampler in headless Chromium (WebGPU on SwiftShader): the same checks as the Dawn tests
// (test/unit/sampling/sampler.dawn.test.ts). Both require every draw to equal the CPU reference draw for the same
// seed and step (Philox4x32-10), so Chromium and Dawn give the same tokens for the same seed; chi-square tests
// check each sampler against its exact distribution.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import {
  DISTRIBUTION_CASES,
  checkDistribution,
  checkGreedyAndLogprobs,
  checkFlatVocabulary,
  checkLargeVocabulary,
  checkSequentialSteps,
} from '../unit/sampling/sampling-checks.ts';

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.destroy());

describe('GPU sampler in Chromium', () => {
  for (const c of DISTRIBUTION_CASES) {
    test(`matches the exact distribution: ${c.name}`, async () => {
      expect(await checkDistribution(gpu, c)).toEqual([]);
    });
  }
  test('greedy, logprobs, top-N and masks', async () => {
    expect(await checkGreedyAndLogprobs(gpu)).toEqual([]);
  });
  test('a 152k vocabulary draws what the reference draws', async () => {
    expect(await checkLargeVocabulary(gpu)).toEqual([]);
  });
  test('top-p over a flat 152k vocabulary searches a window of candidates and draws what the reference draws', async () => {
    expect(await checkFlatVocabulary(gpu)).toEqual([]);
  });
  test('sequential steps with penalties replay under the same seed', async () => {
    expect((await checkSequentialSteps(gpu)).problems).toEqual([]);
  });
});
