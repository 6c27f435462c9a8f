// The floors a decode step stands on, measured on the adapter beside the models (bench/gpu/bench.ts `floor`):
// - read: the bytes per second a WGSL kernel reads through Dawn (shaders/read_roofline.wgsl over one large buffer,
//   neighbouring lanes on neighbouring words and each invocation on its own run of words), the bandwidth a decode
//   step can hope for rather than the datasheet's;
// - dispatch chain: the GPU time of N dispatches in one compute pass, each reading and writing the buffer the one
//   before wrote (as a decode step's ops do, so Dawn puts a barrier between them), of 1 workgroup and of 28 (a
//   small product's): what a step of N ops costs however little each does.
// GPU timestamps (each a pass's begin and end); the median of REPEATS.
import { acquireGpu } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import * as shaders from '../../src/gpu/shaders.ts';
import { createGpuTimer } from '../../src/gpu/timing.ts';

const REPEATS = 7;

export interface FloorReport {
  read: { bytes: number; pattern: 'interleaved' | 'contiguous'; chunk_words: number; gb_s: number }[];
  /** The fastest pattern's GB/s. */
  read_gb_s: number;
  dispatch_chain: { dispatches: number; workgroups: number; gpu_ms: number; us_per_dispatch: number }[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The floors on `dawn`'s adapter, reading a buffer of `bytes` (a multiple of 16). */
export async function runFloorBench(dawn: GPU, bytes: number): Promise<FloorReport> {
  const gpu = await acquireGpu({ gpu: dawn });
  const timer = createGpuTimer(gpu, 2 * REPEATS);
  if (!timer) throw new Error('the adapter has no timestamp-query: no floors measured');
  const { device } = gpu;
  const pipelines = new PipelineCache(device);
  const workgroupSize = Math.min(256, gpu.limits.maxComputeInvocationsPerWorkgroup);
  const size = Math.min(bytes, gpu.limits.maxStorageBufferBindingSize - (gpu.limits.maxStorageBufferBindingSize % 16));
  const data = device.createBuffer({ label: 'floor data', size, usage: GPUBufferUsage.STORAGE });
  const sink = device.createBuffer({ label: 'floor sink', size: Math.max(256, (size / 16 / 16) * 4), usage: GPUBufferUsage.STORAGE });
  const uniforms: GPUBuffer[] = [];
  const params = (words: number, invocations: number): GPUBuffer => {
    const u = device.createBuffer({ label: 'floor params', size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(u, 0, new Uint32Array([words, invocations, 0, 0]));
    uniforms.push(u);
    return u;
  };
  /** Median GPU ms of a pass recorded by `record`, after one untimed run. */
  const passMs = async (label: string, record: (batch: ComputeBatch) => void): Promise<number> => {
    const warm = new ComputeBatch(gpu, `${label} warm-up`);
    record(warm);
    warm.submit();
    await device.queue.onSubmittedWorkDone();
    const batch = new ComputeBatch(gpu, label, timer);
    for (let i = 0; i < REPEATS; i++) {
      batch.beginPass(label);
      record(batch);
    }
    batch.submit();
    return median((await timer.read()).map((t) => t.nanoseconds)) / 1e6;
  };
  try {
    const report: FloorReport = { read: [], read_gb_s: 0, dispatch_chain: [] };
    const words = size / 16;
    for (const [pattern, chunk] of [['interleaved', 16], ['interleaved', 64], ['contiguous', 16]] as const) {
      const invocations = Math.ceil(words / chunk);
      const pipeline = await pipelines.get(shaders.readRoofline, { WORKGROUP_SIZE: workgroupSize, CHUNK: chunk, INTERLEAVED: pattern === 'interleaved' });
      const u = params(words, invocations);
      const ms = await passMs(`read ${pattern} ${chunk}`, (b) => b.dispatch(pipeline, [data, sink, u], Math.ceil(invocations / workgroupSize)));
      const gbs = Math.round((size / (ms / 1000) / 1e9) * 10) / 10;
      report.read.push({ bytes: size, pattern, chunk_words: chunk, gb_s: gbs });
      report.read_gb_s = Math.max(report.read_gb_s, gbs);
    }
    // The chain: each dispatch reads `data`'s first words and writes `sink`, which the next one writes again.
    const chainPipeline = await pipelines.get(shaders.readRoofline, { WORKGROUP_SIZE: 64, CHUNK: 1, INTERLEAVED: true });
    for (const workgroups of [1, 28]) {
      const invocations = workgroups * 64;
      const u = params(invocations, invocations);
      for (const dispatches of [1, 150]) {
        const ms = await passMs(`chain ${dispatches} x ${workgroups}`, (b) => {
          for (let i = 0; i < dispatches; i++) b.dispatch(chainPipeline, [data, sink, u], workgroups);
        });
        report.dispatch_chain.push({ dispatches, workgroups, gpu_ms: Math.round(ms * 1000) / 1000, us_per_dispatch: Math.round((ms * 1000 / dispatches) * 100) / 100 });
      }
    }
    gpu.throwIfFailed();
    return report;
  } finally {
    for (const u of uniforms) u.destroy();
    data.destroy();
    sink.destroy();
    timer.destroy();
    gpu.destroy();
  }
}
