// The GPU sampler's time per step at real vocabulary sizes, on Dawn in this Node process: for each case, the median
// wall time of one encoded sampling step (logits already on the GPU) submitted and read back, over `rounds` steps.
import { create, globals } from 'webgpu';
import { acquireGpu } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { createStorageBuffer } from '../../src/gpu/transfer.ts';
import { createSampler } from '../../src/sampling/gpu-sampler.ts';
import { createGpuTimer } from '../../src/gpu/timing.ts';
import type { SamplingParams } from '../../src/common/sampling-params.ts';

export interface SamplingBenchRow {
  vocab: number;
  name: string;
  params: SamplingParams;
  /** Wall time of one step (submit, GPU, read back). */
  median_ms: number;
  min_ms: number;
  /** CPU time of this process per step (all threads: SwiftShader runs the GPU work on them): steadier than wall
   * time when the machine is shared. */
  median_cpu_ms: number;
  /** GPU time per kernel of one more step, each kernel in a timed pass of its own (timestamp-query). */
  kernel_ms?: Record<string, number>;
}

function logitsFor(n: number, seed: number): Float32Array {
  let state = seed >>> 0 || 1;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  const out = new Float32Array(n);
  // Roughly what an LM head gives: most logits in a few units, a handful well above.
  for (let i = 0; i < n; i++) out[i] = (random() + random() + random() - 1.5) * 3;
  for (let j = 0; j < 16; j++) out[Math.floor(random() * n)] += 8 + 4 * random();
  return out;
}

export const CASES: { name: string; params: SamplingParams }[] = [
  { name: 'greedy', params: { temperature: 0, top_p: 1 } },
  { name: 'temperature 0.8', params: { temperature: 0.8, top_p: 1, seed: 1 } },
  { name: 'top-k 40, top-p 0.95, temperature 0.7', params: { temperature: 0.7, top_p: 0.95, top_k: 40, seed: 2 } },
  { name: 'top-p 0.9, temperature 1', params: { temperature: 1, top_p: 0.9, seed: 3 } },
  { name: 'min-p 0.05, temperature 1', params: { temperature: 1, top_p: 1, min_p: 0.05, seed: 4 } },
  { name: 'top-k 20 with 5 top logprobs', params: { temperature: 0.6, top_p: 1, top_k: 20, top_logprobs: 5, seed: 5 } },
  { name: 'top-p 0.95 with 5 top logprobs, temperature 1', params: { temperature: 1, top_p: 0.95, top_logprobs: 5, seed: 6 } },
];

/** `dawn`: a GPU object (navigator.gpu-like) to use instead of a fresh Dawn instance (bench/gpu passes its own). */
export async function runSamplingBench(vocabs: number[], rounds: number, options: { dawn?: GPU; cases?: typeof CASES } = {}): Promise<{ adapter: string; rows: SamplingBenchRow[] }> {
  Object.assign(globalThis, globals);
  const dawn = options.dawn ?? create([]);
  const gpu = await acquireGpu({ gpu: dawn });
  const rows: SamplingBenchRow[] = [];
  try {
    for (const vocab of vocabs) {
      const sampler = await createSampler(gpu, vocab);
      const logits = createStorageBuffer(gpu.device, logitsFor(vocab, vocab), 'bench logits');
      for (const c of options.cases ?? CASES) {
        const times: number[] = [];
        const cpu: number[] = [];
        for (let r = 0; r < rounds + 1; r++) {
          const c0 = process.cpuUsage();
          const t0 = performance.now();
          const batch = new ComputeBatch(gpu, 'sampling bench');
          sampler.encode(batch, { buffer: logits }, c.params, r);
          batch.submit();
          await sampler.read();
          if (r > 0) {
            times.push(performance.now() - t0);
            const c = process.cpuUsage(c0);
            cpu.push((c.user + c.system) / 1000);
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
          for (const t of await timer.read()) kernel_ms[t.label] = +((kernel_ms[t.label] ?? 0) + t.nanoseconds / 1e6).toFixed(3);
          timer.destroy();
        }
        rows.push({ kernel_ms, vocab, name: c.name, params: c.params, median_ms: +times[Math.floor(times.length / 2)].toFixed(3), min_ms: +times[0].toFixed(3), median_cpu_ms: +cpu[Math.floor(cpu.length / 2)].toFixed(3) });
      }
      logits.destroy();
      sampler.destroy();
    }
  } finally {
    gpu.destroy();
  }
  void dawn;
  return { adapter: gpu.adapterInfo?.description ?? 'unknown', rows };
}
