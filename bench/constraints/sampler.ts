// GPU sampler cost per step on Node/Dawn, printed as JSON: a 152k-token vocabulary, for greedy, temperature,
// top-k, top-p and all of them with a constraint mask and penalties (wall time of submit + read of one step,
// median of N, including the one readback a decode step does anyway).
// Run (vitest resolves the shaders' ?raw imports; Dawn under plain tsx crashed for large vocabularies here):
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json BENCH_VOCAB=151936 \
//   npx vitest run --config bench/constraints/vitest.sampler.config.ts
import { create, globals } from 'webgpu';
import type { SamplingParams } from '../../src/engine/types.ts';
import { acquireGpu } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { createStorageBuffer } from '../../src/gpu/transfer.ts';
import { createSampler } from '../../src/sampling/gpu-sampler.ts';

Object.assign(globalThis, globals);
// Dawn's GPU object must outlive every device made from it.
const dawn = create([]);

export async function runSamplerBench(vocab: number, steps: number): Promise<Record<string, unknown>> {
  const gpu = await acquireGpu({ gpu: dawn });
  const logits = new Float32Array(vocab);
  let seed = 7;
  for (let i = 0; i < vocab; i++) logits[i] = ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296) * 12 - 6;
  const logitsBuffer = createStorageBuffer(gpu.device, logits);
  const sampler = await createSampler(gpu, vocab);
  const mask = new Uint32Array(Math.ceil(vocab / 32));
  for (let i = 0; i < vocab; i += 3) mask[i >> 5] |= 1 << (i & 31);

  const cases: { name: string; params: SamplingParams; mask?: Uint32Array }[] = [
    { name: 'greedy', params: { temperature: 0, top_p: 1 } },
    { name: 'temperature 0.8', params: { temperature: 0.8, top_p: 1, seed: 1 } },
    { name: 'top_k 40', params: { temperature: 0.8, top_p: 1, top_k: 40, seed: 1 } },
    { name: 'top_p 0.9', params: { temperature: 0.8, top_p: 0.9, seed: 1 } },
    { name: 'top_k 40 + top_p 0.9 + min_p + penalties + mask + top 5 logprobs', params: { temperature: 0.8, top_p: 0.9, top_k: 40, min_p: 0.05, frequency_penalty: 0.5, presence_penalty: 0.5, top_logprobs: 5, seed: 1 }, mask },
  ];
  const results: Record<string, number>[] = [];
  for (const c of cases) {
    const times: number[] = [];
    for (let step = 0; step < steps; step++) {
      const start = performance.now();
      const batch = new ComputeBatch(gpu, 'bench');
      sampler.encode(batch, logitsBuffer, c.params, step, { mask: c.mask ?? null });
      batch.submit();
      await sampler.read();
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    results.push({ [c.name]: Math.round(times[Math.floor(times.length / 2)] * 100) / 100 });
  }
  sampler.destroy();
  gpu.destroy();
  return { adapter: gpu.adapterInfo, vocab, median_ms_per_step: results };
}
