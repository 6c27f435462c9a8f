// The GPU sampler's time per step at real vocabulary sizes, on Dawn in this Node process: for each case, the median
// wall time of one encoded sampling step (logits already on the GPU) submitted and read back, over `rounds` steps,
// and this process's CPU time per step (steps.ts times the cases; `npm run bench` runs the same in its page).
import { create, globals } from 'webgpu';
import { acquireGpu } from '../../src/gpu/device.ts';
import { CASES, timeSamplingSteps, type SamplingStepRow } from './steps.ts';

export { CASES };
/** CPU time per step is this process's (all threads: SwiftShader runs the GPU work on them): steadier than wall
 * time when the machine is shared. */
export type SamplingBenchRow = SamplingStepRow & { median_cpu_ms: number };

const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/** `dawn`: a GPU object (navigator.gpu-like) to use instead of a fresh Dawn instance (bench/gpu passes its own). */
export async function runSamplingBench(vocabs: number[], rounds: number, options: { dawn?: GPU; cases?: typeof CASES } = {}): Promise<{ adapter: string; rows: SamplingBenchRow[] }> {
  Object.assign(globalThis, globals);
  const dawn = options.dawn ?? create([]);
  const gpu = await acquireGpu({ gpu: dawn });
  const rows: SamplingBenchRow[] = [];
  try {
    for (const vocab of vocabs) rows.push(...((await timeSamplingSteps(gpu, vocab, rounds, { cases: options.cases, cpuMs })) as SamplingBenchRow[]));
  } finally {
    gpu.destroy();
  }
  return { adapter: gpu.adapterInfo?.description ?? 'unknown', rows };
}
