// An experiment for issue 11's "what would close the gap" (run by `npm run bench -- --q8-dot4`): the decode matvec
// of a Q8_0 matrix as the engine runs it (ForwardKernels.product, m = 1: every int8 unpacked to f32, 32 FMAs
// per block per row) against a prototype that quantizes x to int8 per 32-block (as llama.cpp does with q8_0/q8_1
// activations) and multiplies packed words with WGSL's dot4I8Packed (8 per block per row, the
// packed_4x8_integer_dot_product language feature), same weight layout. GPU timestamps, best and median of the
// repetitions, weight GB/s. The prototype lives here only; shaders/ is the kernels' home.
import { acquireGpu } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { ForwardKernels } from '../../src/gpu/forward-kernels.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { createGpuTimer } from '../../src/gpu/timing.ts';
import { createEmptyStorageBuffer, createStorageBuffer, readF32 } from '../../src/gpu/transfer.ts';
import { floatToHalf, halfToFloat } from '../../src/model/tensor-types.ts';

const DOT4_SHADER = /* wgsl */ `
struct Params { n: u32, k: u32, pad0: u32, pad1: u32 }
@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read> xq: array<u32>;
@group(0) @binding(2) var<storage, read> xd: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;
override WORKGROUP_SIZE: u32 = 16;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row0 = ((wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid) * 4u;
  if (row0 >= params.n) { return; }
  let blocks = params.k / 32u;
  var acc = vec4<f32>(0.0);
  for (var b = 0u; b < blocks; b++) {
    let xo = b * 8u;
    let x0 = xq[xo]; let x1 = xq[xo + 1u]; let x2 = xq[xo + 2u]; let x3 = xq[xo + 3u];
    let x4 = xq[xo + 4u]; let x5 = xq[xo + 5u]; let x6 = xq[xo + 6u]; let x7 = xq[xo + 7u];
    var d = vec4<f32>(0.0);
    var s = vec4<i32>(0);
    for (var r = 0u; r < 4u; r++) {
      let base = ((min(row0 + r, params.n - 1u)) * blocks + b) * 9u;
      d[r] = bitcast<f32>(w[base]);
      s[r] = dot4I8Packed(w[base + 1u], x0) + dot4I8Packed(w[base + 2u], x1) + dot4I8Packed(w[base + 3u], x2)
           + dot4I8Packed(w[base + 4u], x3) + dot4I8Packed(w[base + 5u], x4) + dot4I8Packed(w[base + 6u], x5)
           + dot4I8Packed(w[base + 7u], x6) + dot4I8Packed(w[base + 8u], x7);
    }
    acc += d * vec4<f32>(s) * xd[b];
  }
  for (var r = 0u; r < 4u; r++) {
    if (row0 + r < params.n) { y[row0 + r] = acc[r]; }
  }
}`;

/** The GPU layout's Q8_0 d: the f32 bits of an f16 value (src/common/weight-formats.ts widens the file's f16). */
function dBits(value: number): number {
  return new Uint32Array(new Float32Array([halfToFloat(floatToHalf(value))]).buffer)[0];
}

export async function q8Dot4Experiment(n = 4096, k = 2048, repeats = 8): Promise<Record<string, unknown>> {
  const gpu = await acquireGpu({ label: 'bench q8 dot4 experiment' });
  const hasDot4 = navigator.gpu.wgslLanguageFeatures?.has('packed_4x8_integer_dot_product') ?? false;
  const timer = createGpuTimer(gpu, 64);
  const pipelines = new PipelineCache(gpu.device);
  const fk = new ForwardKernels(gpu, { pipelines });
  // Random Q8_0 weights (9 words per block), x and its per-block int8 quantization.
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const blocks = k / 32;
  const words = new Uint32Array(n * blocks * 9);
  for (let b = 0; b < n * blocks; b++) {
    words[b * 9] = dBits(0.001 + rand() * 0.01);
    for (let j = 1; j < 9; j++) words[b * 9 + j] = (rand() * 2 ** 32) >>> 0;
  }
  const x = new Float32Array(k).map(() => rand() * 2 - 1);
  const xq = new Int8Array(k);
  const xd = new Float32Array(blocks);
  for (let b = 0; b < blocks; b++) {
    let max = 0;
    for (let j = 0; j < 32; j++) max = Math.max(max, Math.abs(x[b * 32 + j]));
    const d = max / 127 || 1;
    xd[b] = d;
    for (let j = 0; j < 32; j++) xq[b * 32 + j] = Math.round(x[b * 32 + j] / d);
  }
  const wBuf = createStorageBuffer(gpu.device, words);
  const xBuf = createStorageBuffer(gpu.device, x);
  const xqBuf = createStorageBuffer(gpu.device, new Uint32Array(xq.buffer));
  const xdBuf = createStorageBuffer(gpu.device, xd);
  const yEngine = createEmptyStorageBuffer(gpu.device, n * 4);
  const yDot4 = createEmptyStorageBuffer(gpu.device, n * 4);
  const uniform = gpu.device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  gpu.device.queue.writeBuffer(uniform, 0, new Uint32Array([n, k, 0, 0]));
  const weightBytes = words.byteLength;
  const results: Record<string, unknown>[] = [];

  const time = async (name: string, record: (b: ComputeBatch) => void) => {
    for (let i = 0; i < 2; i++) {
      const warm = new ComputeBatch(gpu, `${name} warm-up`);
      record(warm);
      warm.submit();
    }
    await gpu.device.queue.onSubmittedWorkDone();
    const batch = new ComputeBatch(gpu, name, timer);
    for (let i = 0; i < repeats; i++) {
      batch.beginPass(name);
      record(batch);
    }
    batch.submit();
    const ns = (await timer!.read()).map((t) => t.nanoseconds).sort((a, b) => a - b);
    results.push({
      kernel: name,
      best_ms: Math.round(ns[0] / 1e4) / 100,
      median_ms: Math.round(ns[Math.floor(ns.length / 2)] / 1e4) / 100,
      best_weight_gb_s: Math.round((weightBytes / ns[0]) * 1000) / 1000,
      median_weight_gb_s: Math.round((weightBytes / ns[Math.floor(ns.length / 2)]) * 1000) / 1000,
    });
  };

  try {
    if (!timer) return { error: 'no timestamp-query' };
    const engineCall = { type: 'Q8_0', weights: wBuf, x: xBuf, y: yEngine, m: 1, n, k } as const;
    await fk.compile(fk.productOps(engineCall));
    await time('matmul_q8_0 (engine, m=1)', (b) => fk.product(b, engineCall));
    let maxRelDiff: number | null = null;
    if (hasDot4) {
      const pipeline = await pipelines.get({ name: 'matvec_q8_0_dot4_prototype', code: DOT4_SHADER }, { WORKGROUP_SIZE: 16 });
      await time('matvec_q8_0 dot4I8Packed prototype (x as int8 blocks)', (b) =>
        b.dispatch(pipeline, [wBuf, xqBuf, xdBuf, yDot4, uniform], Math.ceil(n / 64)),
      );
      const a = await readF32(gpu.device, yEngine, n);
      const c = await readF32(gpu.device, yDot4, n);
      const scale = Math.max(...a.map(Math.abs));
      maxRelDiff = Math.max(...a.map((v, i) => Math.abs(v - c[i]))) / scale;
    }
    return {
      shape: { n, k, weight_bytes: weightBytes },
      packed_4x8_integer_dot_product: hasDot4,
      results,
      max_abs_diff_over_max_output: maxRelDiff === null ? null : Math.round(maxRelDiff * 1e5) / 1e5,
      note: 'the difference is the int8 quantization of x (llama.cpp makes the same approximation for Q8_0 products)',
    };
  } finally {
    for (const b of [wBuf, xBuf, xqBuf, xdBuf, yEngine, yDot4, uniform]) b.destroy();
    timer?.destroy();
    fk.destroy();
    gpu.destroy();
  }
}
