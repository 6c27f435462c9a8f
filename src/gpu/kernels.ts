// The row-reduction kernels: `rmsnormOps` describes a dispatch as data (kernel-op.ts: the pipeline for this
// adapter's shapes, kernel-shapes.ts, the params and the workgroup count) and `rmsnorm` records it at once into a
// ComputeBatch (its params uniform from uniforms.ts).
// `prepare()` compiles every pipeline first (asynchronously), so recording never waits on compilation.
// Buffer layouts follow the conventions at the top of dispatch.ts.
import type { GpuContext } from './device.ts';
import { requireBytes, type Binding, type ComputeBatch } from './dispatch.ts';
import { PARAMS, recordOps, type KernelOp } from './kernel-op.ts';
import { kernelShapesFor, rowsPerWorkgroup, type KernelShapes } from './kernel-shapes.ts';
import { PipelineCache, type KernelSource, type OverrideConstants } from './pipeline-cache.ts';
import * as shaders from './shaders.ts';
import { UniformAllocator } from './uniforms.ts';

export interface KernelsOptions {
  /** Override the per-adapter shapes (tests use this to force many small workgroups). */
  shapes?: Partial<KernelShapes>;
  pipelines?: PipelineCache;
  /** Share a params allocator (the caller then destroys it); by default these kernels own one. */
  uniforms?: UniformAllocator;
}

export interface RmsnormArgs { x: Binding; weight: Binding; y: Binding; rows: number; n: number; eps: number; accumulate?: boolean }

interface Prepared {
  kernel: KernelSource;
  constants: OverrideConstants;
}

export class Kernels {
  readonly shapes: KernelShapes;
  readonly pipelines: PipelineCache;
  readonly uniforms: UniformAllocator;
  private readonly ownsUniforms: boolean;

  constructor(
    readonly gpu: GpuContext,
    options: KernelsOptions = {},
  ) {
    this.shapes = { ...kernelShapesFor(gpu.adapterInfo, gpu.limits), ...options.shapes };
    this.pipelines = options.pipelines ?? new PipelineCache(gpu.device);
    this.ownsUniforms = options.uniforms === undefined;
    this.uniforms = options.uniforms ?? new UniformAllocator(gpu.device);
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

  /** Y[r, :] = X[r, :] / sqrt(mean(X[r, :]²) + eps) * weight, rows of length n (`accumulate`: Y += that). */
  rmsnorm(batch: ComputeBatch, a: RmsnormArgs): void {
    recordOps(batch, this.pipelines, this.uniforms, this.rmsnormOps(a), { m: a.rows, pos0: 0, splits: 1 });
  }

  /** The op of `rmsnorm` (none for no rows). */
  rmsnormOps(a: RmsnormArgs): KernelOp[] {
    if (a.rows === 0) return [];
    requireBytes('rmsnorm', 'x', a.x, a.rows * a.n * 4);
    requireBytes('rmsnorm', 'weight', a.weight, a.n * 4);
    requireBytes('rmsnorm', 'y', a.y, a.rows * a.n * 4);
    const p = this.rowKernel(shaders.rmsnorm, a.accumulate ? { ACCUMULATE: true } : {});
    return [{ ...p, bindings: [a.x, a.weight, a.y, PARAMS], params: [a.rows, a.n, { f32: a.eps }], workgroups: Math.ceil(a.rows / rowsPerWorkgroup(this.shapes.rowReduce)) }];
  }

  /** Releases the params uniforms (when these kernels own them). */
  destroy(): void {
    if (this.ownsUniforms) this.uniforms.destroy();
  }
}
