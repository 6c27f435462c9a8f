// attention_prefill alone (no decoder) on Node's Dawn: one 64-query chunk at a given cached length, per kernel
// shape (kernel-shapes.ts's attentionPrefill, or KV_TILE 0 for attention.wgsl), or with m = 1 a decode step's
// attention (attention.wgsl, split over positions and merged by attention_combine; shapes are kernel-shapes.ts's
// `attention` objects then), `layers` dispatches a batch (one
// per layer, as in a prefill chunk), `reps` batches after one warm-up: the median and least wall and process CPU ms
// per dispatch (the least: nearest the unloaded cost on a shared machine) and the multiply-adds per CPU second (q·k and p·v: 2 * head_dim per query row and position).
// Run by bench/prefill/run.mjs --attention-only (Vite resolves the ?raw shader imports); prints JSON.
import { readFileSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { acquireGpu } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { ForwardKernels } from '../../src/gpu/forward-kernels.ts';
import { compileOps, recordOps } from '../../src/gpu/kernel-op.ts';
import type { ForwardKernelShapes } from '../../src/gpu/kernel-shapes.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { createStorageBuffer } from '../../src/gpu/transfer.ts';

export interface AttentionBenchOptions {
  /** Cached positions before the chunk (the chunk's pos0). */
  positions: number[];
  m: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  layers: number;
  reps: number;
  /**
   * Shapes to compare ('default': this adapter's); `code`: a WGSL file run in place of the composed kernel (an
   * earlier attention_prefill.wgsl, say) with `constants` added to the op's overrides.
   */
  shapes: (BenchShape | 'default')[];
  dawnFlags: string[];
}

type BenchShape = (ForwardKernelShapes['attentionPrefill'] | ForwardKernelShapes['attention']) & { code?: string; constants?: Record<string, number | boolean> };

export async function runAttentionBench(o: AttentionBenchOptions): Promise<unknown> {
  Object.assign(globalThis, globals);
  const dawn = create(o.dawnFlags); // kept referenced until the end: a collected GPU object takes its device along
  const gpu = await acquireGpu({ gpu: dawn });
  const pipelines = new PipelineCache(gpu.device);
  const maxSeq = Math.max(...o.positions) + o.m;
  let seed = 7;
  const random = (n: number) => Float32Array.from({ length: n }, () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1);
  const qStride = (o.heads + 2 * o.kvHeads) * o.headDim;
  const q = createStorageBuffer(gpu.device, random(o.m * qStride));
  const kCache = createStorageBuffer(gpu.device, random(o.kvHeads * maxSeq * o.headDim));
  const vCache = createStorageBuffer(gpu.device, random(o.kvHeads * maxSeq * o.headDim));
  const out = createStorageBuffer(gpu.device, new Float32Array(o.m * o.heads * o.headDim));
  const decode = o.m === 1;
  const results: unknown[] = [];
  for (const shape of o.shapes) {
    const shapes = shape === 'default' ? {} : { shapes: decode ? { attention: shape as ForwardKernelShapes['attention'] } : { attentionPrefill: shape as ForwardKernelShapes['attentionPrefill'] } };
    const fk = new ForwardKernels(gpu, { pipelines, ...shapes });
    const unused = createStorageBuffer(gpu.device, new Float32Array(4));
    const partials = decode ? gpu.device.createBuffer({ size: Math.max(16, fk.attentionPartialsBytes(o.heads, o.headDim, maxSeq)), usage: GPUBufferUsage.STORAGE }) : unused;
    const args = { q, qStride, kCache, vCache, out, m: o.m, nHeads: o.heads, nKvHeads: o.kvHeads, headDim: o.headDim, maxSeq, partials };
    let ops = decode ? fk.attentionOps(args) : fk.attentionPrefillOps(args);
    if (shape !== 'default' && shape.code) {
      const kernel = { name: `bench ${shape.code}`, code: readFileSync(shape.code, 'utf8') };
      ops = ops.map((op) => ({ ...op, kernel, constants: { ...op.constants, ...shape.constants } }));
    }
    await compileOps(pipelines, ops);
    for (const pos0 of o.positions) {
      const run = async () => {
        const batch = new ComputeBatch(gpu, 'attention bench');
        const splits = decode ? fk.attentionSplits(1, pos0) : 1;
        for (let l = 0; l < o.layers; l++) recordOps(batch, pipelines, fk.uniforms, ops, { m: o.m, pos0, splits });
        batch.submit();
        await gpu.device.queue.onSubmittedWorkDone();
        gpu.throwIfFailed(); // a kernel that failed validation must not pass for a fast one
      };
      await run();
      const wall: number[] = [];
      const cpu: number[] = [];
      for (let r = 0; r < o.reps; r++) {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        await run();
        wall.push((performance.now() - t0) / o.layers);
        const c = process.cpuUsage(c0);
        cpu.push((c.user + c.system) / 1000 / o.layers);
      }
      // Multiply-adds of one dispatch: each query row attends to pos0 + t + 1 positions.
      const macs = o.heads * 2 * o.headDim * (o.m * pos0 + (o.m * (o.m + 1)) / 2);
      const cpuMs = median(cpu);
      results.push({ shape: shape === 'default' ? (decode ? fk.shapes.attention : fk.shapes.attentionPrefill) : shape, kernel: ops[0]!.kernel.name, pos0, wall_ms: round3(median(wall)), cpu_ms: round3(cpuMs), min_cpu_ms: round3(Math.min(...cpu)), min_wall_ms: round3(Math.min(...wall)), gmac_per_cpu_s: round3(macs / (cpuMs / 1000) / 1e9) });
      process.stderr.write(`[bench/prefill attention] ${JSON.stringify(results.at(-1))}\n`);
    }
    fk.destroy();
    unused.destroy();
    if (partials !== unused) partials.destroy();
  }
  for (const b of [q, kCache, vCache, out]) b.destroy();
  const info = gpu.adapterInfo;
  gpu.destroy();
  void dawn;
  return { bench: 'prefill-attention', adapter: { vendor: info.vendor, architecture: info.architecture, description: info.description }, m: o.m, heads: o.heads, kv_heads: o.kvHeads, head_dim: o.headDim, layers: o.layers, reps: o.reps, results };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
