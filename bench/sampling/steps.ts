// The sampler's step timing, shared by the Node bench (bench.ts, Dawn in this process) and the Chromium page of
// `npm run bench` (bench/responses/bench.ts): for each case, `rounds` steps after one untimed step, each step one
// ComputeBatch with the sampler's kernels on logits already on the GPU, submitted and its token read back; then
// one more step with each kernel in a timed pass of its own (timestamp queries) for GPU ms per kernel.
// Imports nothing Node- or browser-specific: the caller brings the GpuContext (and a CPU clock where it has one).
import type { SamplingParams } from '../../src/common/sampling-params.ts';
import type { GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { createGpuTimer } from '../../src/gpu/timing.ts';
import { createStorageBuffer } from '../../src/gpu/transfer.ts';
import { createSampler } from '../../src/sampling/gpu-sampler.ts';

export interface SamplingCase {
  name: string;
  params: SamplingParams;
}

export interface SamplingStepRow {
  vocab: number;
  name: string;
  params: SamplingParams;
  /** Wall time of one step (submit, GPU, read back). */
  median_ms: number;
  min_ms: number;
  /** CPU time per step, where the caller gives a CPU clock (Node: this process, all threads). */
  median_cpu_ms?: number;
  /** GPU time per kernel of one more step, each kernel in a timed pass of its own (timestamp-query). */
  kernel_ms?: Record<string, number>;
  /** How the last step narrowed the vocabulary: candidates searched, overflow, rounds run (sampled cases). */
  search?: { candidates: number; overflow: boolean; rounds: number };
}

/** Roughly what an LM head gives: most logits in a few units, a handful well above (seeded, deterministic). */
export function logitsFor(n: number, seed: number): Float32Array {
  let state = seed >>> 0 || 1;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (random() + random() + random() - 1.5) * 3;
  for (let j = 0; j < 16; j++) out[Math.floor(random() * n)] += 8 + 4 * random();
  return out;
}

export const CASES: SamplingCase[] = [
  { name: 'greedy', params: { temperature: 0, top_p: 1 } },
  { name: 'temperature 0.8', params: { temperature: 0.8, top_p: 1, seed: 1 } },
  { name: 'top-k 40, top-p 0.95, temperature 0.7', params: { temperature: 0.7, top_p: 0.95, top_k: 40, seed: 2 } },
  { name: 'top-p 0.9, temperature 1', params: { temperature: 1, top_p: 0.9, seed: 3 } },
  { name: 'min-p 0.05, temperature 1', params: { temperature: 1, top_p: 1, min_p: 0.05, seed: 4 } },
  { name: 'top-k 20 with 5 top logprobs', params: { temperature: 0.6, top_p: 1, top_k: 20, top_logprobs: 5, seed: 5 } },
  { name: 'top-p 0.95 with 5 top logprobs, temperature 1', params: { temperature: 1, top_p: 0.95, top_logprobs: 5, seed: 6 } },
];

const fixed = (x: number) => +x.toFixed(3);

/** Times each case at this vocabulary on `gpu` (see the file's comment). `cpuMs`: a CPU clock in ms, if any. */
export async function timeSamplingSteps(gpu: GpuContext, vocab: number, rounds: number, options: { cases?: SamplingCase[]; cpuMs?: () => number } = {}): Promise<SamplingStepRow[]> {
  const rows: SamplingStepRow[] = [];
  const sampler = await createSampler(gpu, vocab);
  const logits = createStorageBuffer(gpu.device, logitsFor(vocab, vocab), 'bench logits');
  try {
    for (const c of options.cases ?? CASES) {
      const times: number[] = [];
      const cpu: number[] = [];
      for (let r = 0; r < rounds + 1; r++) {
        const c0 = options.cpuMs?.() ?? 0;
        const t0 = performance.now();
        const batch = new ComputeBatch(gpu, 'sampling bench');
        sampler.encode(batch, { buffer: logits }, c.params, r);
        batch.submit();
        await sampler.read();
        if (r > 0) {
          times.push(performance.now() - t0);
          if (options.cpuMs) cpu.push(options.cpuMs() - c0);
        }
      }
      times.sort((a, b) => a - b);
      cpu.sort((a, b) => a - b);
      let kernel_ms: Record<string, number> | undefined;
      const timer = createGpuTimer(gpu);
      if (timer) {
        const batch = new ComputeBatch(gpu, 'sampling bench (timed)', timer);
        sampler.encode(batch, { buffer: logits }, c.params, rounds + 1, { passPerKernel: true });
        batch.submit();
        await sampler.read();
        kernel_ms = {};
        for (const t of await timer.read()) kernel_ms[t.label] = fixed((kernel_ms[t.label] ?? 0) + t.nanoseconds / 1e6);
        timer.destroy();
      }
      const row: SamplingStepRow = { kernel_ms, vocab, name: c.name, params: c.params, median_ms: fixed(times[Math.floor(times.length / 2)]), min_ms: fixed(times[0]) };
      if (options.cpuMs) row.median_cpu_ms = fixed(cpu[Math.floor(cpu.length / 2)]);
      // Only where this step made candidates (top-k, top-p, top logprobs); head is stale otherwise.
      if (sampler.madeCandidates) {
        const { candidates, overflow, rounds } = await sampler.readSearchState();
        row.search = { candidates, overflow, rounds };
      }
      rows.push(row);
    }
  } finally {
    logits.destroy();
    sampler.destroy();
  }
  return rows;
}
