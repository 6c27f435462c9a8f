// The kernels as calls: each method records one dispatch of a kernel into a ComputeBatch, picking the
// pipeline for this adapter's shapes (kernel-shapes.ts), the params uniform and the workgroup count.
// `prepare()` compiles every pipeline first (asynchronously), so recording never waits on compilation.
// Buffer layouts follow the conventions at the top of dispatch.ts.
import type { GpuContext } from './device.ts';
import { requireBytes, type Binding, type ComputeBatch } from './dispatch.ts';
import { kernelShapesFor, rowsPerWorkgroup, type KernelShapes } from './kernel-shapes.ts';
import { PipelineCache, type KernelSource, type OverrideConstants } from './pipeline-cache.ts';
import * as shaders from './shaders.ts';

export interface KernelsOptions {
  /** Override the per-adapter shapes (tests use this to force many small workgroups). */
  shapes?: Partial<KernelShapes>;
  pipelines?: PipelineCache;
}

interface Prepared {
  kernel: KernelSource;
  constants: OverrideConstants;
}

/**
 * Uniform buffers holding kernel params, one per distinct content, made once (shapes repeat every token).
 * Least recently used ones are destroyed past MAX_PARAMS_BUFFERS (varying prompt lengths make new ones); the
 * bound is far above what one command buffer uses, so nothing recorded and not yet submitted is destroyed.
 */
const MAX_PARAMS_BUFFERS = 4096;

class ParamsCache {
  private readonly buffers = new Map<string, GPUBuffer>();
  constructor(private readonly device: GPUDevice) {}

  get(words: ArrayBuffer): GPUBuffer {
    const key = Array.from(new Uint32Array(words)).join(',');
    let buffer = this.buffers.get(key);
    if (buffer) {
      this.buffers.delete(key); // re-inserted below: Map order is the recency order
    } else {
      buffer = this.device.createBuffer({ label: `params ${key}`, size: Math.max(16, words.byteLength), usage: 0x40 | 0x08 });
      this.device.queue.writeBuffer(buffer, 0, words);
      if (this.buffers.size >= MAX_PARAMS_BUFFERS) {
        const [oldestKey, oldest] = this.buffers.entries().next().value as [string, GPUBuffer];
        this.buffers.delete(oldestKey);
        oldest.destroy();
      }
    }
    this.buffers.set(key, buffer);
    return buffer;
  }

  destroy(): void {
    for (const buffer of this.buffers.values()) buffer.destroy();
    this.buffers.clear();
  }
}

function u32Params(...values: number[]): ArrayBuffer {
  for (const v of values) {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`Kernel size must be a u32, got ${v}`);
  }
  return new Uint32Array(values).buffer;
}

export class Kernels {
  readonly shapes: KernelShapes;
  readonly pipelines: PipelineCache;
  private readonly params: ParamsCache;

  constructor(
    readonly gpu: GpuContext,
    options: KernelsOptions = {},
  ) {
    this.shapes = { ...kernelShapesFor(gpu.adapterInfo, gpu.limits), ...options.shapes };
    this.pipelines = options.pipelines ?? new PipelineCache(gpu.device);
    this.params = new ParamsCache(gpu.device);
  }

  private rowKernel(kernel: KernelSource, constants: Record<string, boolean> = {}): Prepared {
    return { kernel, constants: { ...this.shapes.rowReduce, ...constants } };
  }

  private all(): Prepared[] {
    return [
      this.rowKernel(shaders.rmsnorm),
      this.rowKernel(shaders.rmsnorm, { ACCUMULATE: true }),
    ];
  }

  /** Compiles every pipeline these kernels use; call (and await) once before recording. */
  async prepare(): Promise<void> {
    await Promise.all(this.all().map((p) => this.pipelines.get(p.kernel, p.constants)));
  }

  private pipeline(p: Prepared): GPUComputePipeline {
    const pipeline = this.pipelines.peek(p.kernel, p.constants);
    if (!pipeline) throw new Error(`Kernel ${p.kernel.name} is not compiled yet: await kernels.prepare() first`);
    return pipeline;
  }

  /** Y[r, :] = X[r, :] / sqrt(mean(X[r, :]²) + eps) * weight, rows of length n (`accumulate`: Y += that). */
  rmsnorm(batch: ComputeBatch, a: { x: Binding; weight: Binding; y: Binding; rows: number; n: number; eps: number; accumulate?: boolean }): void {
    if (a.rows === 0) return;
    requireBytes('rmsnorm', 'x', a.x, a.rows * a.n * 4);
    requireBytes('rmsnorm', 'weight', a.weight, a.n * 4);
    requireBytes('rmsnorm', 'y', a.y, a.rows * a.n * 4);
    const words = new DataView(u32Params(a.rows, a.n, 0));
    words.setFloat32(8, a.eps, true);
    const params = this.params.get(words.buffer as ArrayBuffer);
    const p = this.rowKernel(shaders.rmsnorm, a.accumulate ? { ACCUMULATE: true } : {});
    batch.dispatch(this.pipeline(p), [a.x, a.weight, a.y, params], Math.ceil(a.rows / rowsPerWorkgroup(this.shapes.rowReduce)));
  }

  /** Releases the params uniforms. */
  destroy(): void {
    this.params.destroy();
  }
}
