// The row-reduction kernels as one object over a kernel context (kernels/context.ts): a thin facade over
// kernels/norms.ts. `rmsnormOps` describes a dispatch as data (kernel-op.ts) and `rmsnorm` records it at once into
// a ComputeBatch (its params uniform from the context's allocator). `prepare()` compiles every pipeline first
// (asynchronously), so recording never waits on compilation. Buffer layouts follow the conventions at the top of dispatch.ts.
import type { GpuContext } from './device.ts';
import type { ComputeBatch } from './dispatch.ts';
import type { KernelOp } from './kernel-op.ts';
import type { KernelShapes } from './kernel-shapes.ts';
import type { PipelineCache } from './pipeline-cache.ts';
import type { UniformAllocator } from './uniforms.ts';
import { KernelContext, type AllKernelShapes, type KernelContextOptions } from './kernels/context.ts';
import { NormKernels, type RmsnormArgs } from './kernels/norms.ts';

export type { RmsnormArgs } from './kernels/norms.ts';

export interface KernelsOptions extends Omit<KernelContextOptions, 'shapes'> {
  /** Override the per-adapter shapes (tests use this to force many small workgroups). */
  shapes?: Partial<KernelShapes>;
}

export class Kernels {
  readonly ctx: KernelContext;
  private readonly ownsContext: boolean;
  readonly norms: NormKernels;

  /** Over a context of its own (options: its cache, allocator, shapes) or a shared one. */
  constructor(gpu: GpuContext | KernelContext, options: KernelsOptions = {}) {
    this.ownsContext = !(gpu instanceof KernelContext);
    this.ctx = gpu instanceof KernelContext ? gpu : new KernelContext(gpu, options);
    this.norms = new NormKernels(this.ctx);
  }

  get gpu(): GpuContext {
    return this.ctx.gpu;
  }
  get shapes(): AllKernelShapes {
    return this.ctx.shapes;
  }
  get pipelines(): PipelineCache {
    return this.ctx.pipelines;
  }
  get uniforms(): UniformAllocator {
    return this.ctx.uniforms;
  }

  /** Compiles every pipeline these kernels use; call (and await) once before recording. */
  async prepare(): Promise<void> {
    await Promise.all(this.norms.kernels().map((p) => this.ctx.pipelines.get(p.kernel, p.constants)));
  }

  /** Y[r, :] = X[r, :] / sqrt(mean(X[r, :]²) + eps) * weight, rows of length n (`accumulate`: Y += that). */
  rmsnorm(batch: ComputeBatch, a: RmsnormArgs): void {
    this.ctx.record(batch, this.rmsnormOps(a), { m: a.rows, pos0: 0, splits: 1 });
  }

  /** The op of `rmsnorm` (none for no rows). */
  rmsnormOps(a: RmsnormArgs): KernelOp[] {
    return this.norms.rmsnormOps(a);
  }

  /** Releases the context when it is its own (its uniforms if it owns them). */
  destroy(): void {
    if (this.ownsContext) this.ctx.destroy();
  }
}
