// Kernel benchmarks, run in a page (bench/kernels/run.mjs serves it and drives Chromium): GB/s and GFLOP/s of
// each kernel at model-like sizes (the weight products in every type, m = 1 and a 64-token prompt), and the
// read-every-byte-once roofline that the matvecs are compared with.
// Times are GPU timestamps (`timestamp-query`) where the adapter has them, else wall time of a submit awaited
// with onSubmittedWorkDone; GB/s and GFLOP/s use the fastest repetition, the median is reported beside it.
// The result is put on `window.__kernelBench` (or `__kernelBenchError`).
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { ForwardKernels, type ForwardKernelShapes } from '../../src/gpu/forward-kernels.ts';
import { Kernels, type KernelsOptions } from '../../src/gpu/kernels.ts';
import type { KernelShapes } from '../../src/gpu/kernel-shapes.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import * as shaders from '../../src/gpu/shaders.ts';
import { createGpuTimer, type GpuTimer } from '../../src/gpu/timing.ts';
import { createEmptyStorageBuffer, createStorageBuffer, readBuffer } from '../../src/gpu/transfer.ts';
import { GPU_WEIGHT_FORMAT_NAMES, WEIGHT_FORMAT, type GpuWeightFormatName } from '../../src/common/weight-formats.ts';
import { toGpuLayout } from '../../src/model/dequantize.ts';
import { QUANT_BLOCKS, randomQuantRows, type QuantType } from '../../test/support/forward-reference.ts';
import { randomF32, seededRandom } from '../../test/support/kernel-reference.ts';
import { randomFileBlocks } from '../../test/gpu/weight-format-blocks.ts';

/** Every GPU weight format's product but MXFP4's (experts only); the pre-table six first. */
const PRODUCT_TYPES: GpuWeightFormatName[] = [
  ...(Object.keys(QUANT_BLOCKS) as GpuWeightFormatName[]),
  ...GPU_WEIGHT_FORMAT_NAMES.filter((f) => !(f in QUANT_BLOCKS) && f !== 'MXFP4'),
];

/** GPU-layout bytes of `rows` x `cols` random weights: the reference's generator where it has the type, else random file blocks. */
function randomWeights(random: () => number, type: GpuWeightFormatName, rows: number, cols: number): Uint8Array {
  if (type in QUANT_BLOCKS) return randomQuantRows(random, type as QuantType, rows, cols);
  const f = WEIGHT_FORMAT[type];
  return toGpuLayout(type, randomFileBlocks(type, (rows * cols) / f.blockElements, random));
}

interface KernelResult {
  kernel: string;
  shape: Record<string, number>;
  /** Seconds per run: the fastest of the timed repetitions (the machine may be shared: the fastest is the least disturbed). */
  seconds: number;
  /** The median of the repetitions. */
  medianSeconds: number;
  timing: 'gpu-timestamps' | 'wall';
  bytesRead: number;
  bytesWritten: number;
  gbPerSecond: number;
  gflopPerSecond?: number;
  /** For matvecs (m = 1): weight bytes per second / the roofline's. */
  fractionOfRoofline?: number;
}

const params = new URLSearchParams(location.search);
const REPEATS = Number(params.get('repeats') ?? 8);
/** Kernel name prefixes to run (comma-separated `only`); the roofline always runs. */
const ONLY = params.get('only')?.split(',') ?? null;
const wanted = (kernel: string): boolean => ONLY === null || ONLY.some((prefix) => kernel.startsWith(prefix));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Seconds per run of `record` (each run is one compute pass). */
async function time(
  gpu: GpuContext,
  timer: GpuTimer | null,
  label: string,
  record: (batch: ComputeBatch) => void,
): Promise<{ seconds: number; medianSeconds: number; timing: KernelResult['timing'] }> {
  // Warm up (pipeline first use, page-in of buffers).
  for (let i = 0; i < 2; i++) {
    const warm = new ComputeBatch(gpu, `${label} warm-up`);
    record(warm);
    warm.submit();
  }
  await gpu.device.queue.onSubmittedWorkDone();
  if (timer) {
    const batch = new ComputeBatch(gpu, label, timer);
    for (let i = 0; i < REPEATS; i++) {
      batch.beginPass(label);
      record(batch);
    }
    batch.submit();
    const ns = (await timer.read()).map((t) => t.nanoseconds);
    if (ns.every((t) => t > 0)) return { seconds: Math.min(...ns) / 1e9, medianSeconds: median(ns) / 1e9, timing: 'gpu-timestamps' };
  }
  // Wall time: each repetition is a submit awaited on its own.
  const seconds: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const batch = new ComputeBatch(gpu, label);
    const start = performance.now();
    record(batch);
    batch.submit();
    await gpu.device.queue.onSubmittedWorkDone();
    seconds.push((performance.now() - start) / 1000);
  }
  return { seconds: Math.min(...seconds), medianSeconds: median(seconds), timing: 'wall' };
}

async function run(): Promise<unknown> {
  const gpu = await acquireGpu();
  const shapesParam = params.get('shapes');
  const options: KernelsOptions = shapesParam ? { shapes: JSON.parse(shapesParam) as Partial<KernelShapes> } : {};
  /** `product` = JSON of the product kernels' shape (WORKGROUP_SIZE, K_SPLIT, TILE_M) to try another. */
  const productShapeParam = params.get('product');
  const kernels = new Kernels(gpu, options);
  await kernels.prepare();
  const timer = createGpuTimer(gpu, Math.max(64, REPEATS));
  const random = seededRandom(1);
  const results: KernelResult[] = [];

  const n = Number(params.get('n') ?? 4096);
  const k = Number(params.get('k') ?? 2048);

  // Roofline: read n*k*4 bytes once, both access patterns; the faster sets the roofline.
  const rooflineBytes = n * k * 4;
  const rooflineData = createEmptyStorageBuffer(gpu.device, rooflineBytes);
  const words = rooflineBytes / 16;
  const pipelines = new PipelineCache(gpu.device);
  const workgroupSize = 64;
  let roofline = 0;
  for (const interleaved of [false, true]) {
    const chunk = interleaved ? 64 : k / 4; // contiguous: one matvec row per invocation
    const invocations = Math.ceil(words / chunk);
    const sink = createEmptyStorageBuffer(gpu.device, invocations * 4);
    const pipeline = await pipelines.get(shaders.readRoofline, { WORKGROUP_SIZE: workgroupSize, CHUNK: chunk, INTERLEAVED: interleaved });
    const uniform = gpu.device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    gpu.device.queue.writeBuffer(uniform, 0, new Uint32Array([words, invocations, 0, 0]));
    const t = await time(gpu, timer, 'read_roofline', (b) => b.dispatch(pipeline, [rooflineData, sink, uniform], Math.ceil(invocations / workgroupSize)));
    const gbPerSecond = rooflineBytes / t.seconds / 1e9;
    roofline = Math.max(roofline, gbPerSecond);
    results.push({
      kernel: `read_roofline (${interleaved ? 'interleaved' : 'contiguous'})`,
      shape: { bytes: rooflineBytes, chunkWords: chunk },
      ...t,
      bytesRead: rooflineBytes,
      bytesWritten: invocations * 4,
      gbPerSecond,
    });
    sink.destroy();
    uniform.destroy();
  }
  rooflineData.destroy();

  // Weight products (shaders/matmul.wgsl with each type's block decoding): the decode matvec (m = 1) through an
  // [n, k] matrix, and a prompt of m tokens through an [mn, mk] matrix, for every weight type.
  const products = new ForwardKernels(gpu, { pipelines: kernels.pipelines, ...(productShapeParam ? { shapes: { product: JSON.parse(productShapeParam) as ForwardKernelShapes['product'] } } : {}) });
  const m = Number(params.get('m') ?? 64);
  const mn = Number(params.get('mn') ?? 1024);
  const mk = Number(params.get('mk') ?? 1024);
  const gatedRun = params.get('gated') === '1';
  const types = PRODUCT_TYPES.filter((type) => wanted(`matvec_${type.toLowerCase()}`) || wanted(`matmul_${type.toLowerCase()}`));
  for (const type of types) {
    for (const [kernel, rowsIn, cols, tokens] of [[`matvec_${type.toLowerCase()}`, n, k, 1], [`matmul_${type.toLowerCase()}`, mn, mk, m]] as const) {
      if (!wanted(kernel)) continue;
      const bytes = (rowsIn * cols / WEIGHT_FORMAT[type].blockElements) * WEIGHT_FORMAT[type].gpuBlockBytes;
      const weights = createStorageBuffer(gpu.device, randomWeights(random, type, gatedRun ? 2 * rowsIn : rowsIn, cols));
      const x = createStorageBuffer(gpu.device, randomF32(random, tokens * cols));
      const y = createEmptyStorageBuffer(gpu.device, tokens * rowsIn * 4);
      const call = { type, weights, x, y, m: tokens, n: rowsIn, k: cols, ...(gatedRun ? { gated: true } : {}) };
      await products.compile(products.productOps(call));
      const t = await time(gpu, timer, kernel, (b) => products.product(b, call));
      const gbPerSecond = bytes / t.seconds / 1e9;
      results.push({
        kernel,
        shape: { m: tokens, n: rowsIn, k: cols, ...products.shapes.product, PREFILL_TILED: products.shapes.product.PREFILL_TILED ? 1 : 0 },
        ...t,
        bytesRead: bytes + tokens * cols * 4,
        bytesWritten: tokens * rowsIn * 4,
        gbPerSecond,
        gflopPerSecond: (2 * tokens * rowsIn * cols) / t.seconds / 1e9,
        ...(tokens === 1 ? { fractionOfRoofline: gbPerSecond / roofline } : {}),
      });
      for (const b of [weights, x, y]) b.destroy();
    }
  }
  products.destroy();

  // Row kernels: rows of a hidden size.
  const rows = 64;
  const width = 4096;
  const rx = createStorageBuffer(gpu.device, randomF32(random, rows * width, 4));
  const ry = createEmptyStorageBuffer(gpu.device, rows * width * 4);
  const rw = createStorageBuffer(gpu.device, randomF32(random, width));
  for (const name of ['rmsnorm'] as const) {
    if (!wanted(name)) continue;
    const t = await time(gpu, timer, name, (b) => kernels.rmsnorm(b, { x: rx, weight: rw, y: ry, rows, n: width, eps: 1e-6 }));
    const bytesRead = rows * width * 4 * 2 + width * 4;
    results.push({
      kernel: name,
      shape: { rows, n: width, ...kernels.shapes.rowReduce },
      ...t,
      bytesRead,
      bytesWritten: rows * width * 4,
      gbPerSecond: (bytesRead + rows * width * 4) / t.seconds / 1e9,
    });
  }
  // Make sure every result above really ran: read one value back.
  await readBuffer(gpu.device, ry, 4);
  gpu.throwIfFailed();
  timer?.destroy();

  const summary = {
    adapter: gpu.adapterInfo,
    features: gpu.features,
    adapterFeatures: [...gpu.adapter.features].sort(),
    limits: gpu.limits,
    shapes: kernels.shapes,
    repeats: REPEATS,
    rooflineGbPerSecond: roofline,
    results,
  };
  gpu.destroy();
  return summary;
}

declare global {
  interface Window {
    __kernelBench?: unknown;
    __kernelBenchError?: string;
  }
}

run().then(
  (result) => {
    window.__kernelBench = result;
    document.getElementById('out')!.textContent = JSON.stringify(result, null, 2);
  },
  (error: unknown) => {
    window.__kernelBenchError = error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
    document.getElementById('out')!.textContent = window.__kernelBenchError;
  },
);
