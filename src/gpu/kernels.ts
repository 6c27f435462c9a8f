// The row-reduction kernels as one object over a kernel context (kernels/context.ts): a thin facade over
// kernels/norms.ts. `rmsnormOps` describes a dispatch as data (kernel-op.ts) and `rmsnorm` records it at once into
// a ComputeBatch (its params uniform from the context's allocator). `prepare()` compiles every pipeline first
// (asynchronously), so recording never waits on compilation. Buffer layouts follow the conventions at the top of dispatch.ts.
import type { GpuContext } from './device.ts';
import type { ComputeBatch } from './dispatch.ts';
import type { KernelOp } from './kernel-op.ts';
import type { KernelShapes } from './kernel-shapes.ts';
import { KernelSet, type KernelContext, type KernelContextOptions } from './kernels/context.ts';
import { NormKernels, type RmsnormArgs } from './kernels/norms.ts';

export type { RmsnormArgs } from './kernels/norms.ts';

export interface KernelsOptions extends Omit<KernelContextOptions, 'shapes'> {
  /** Override the per-adapter shapes (tests use this to force many small workgroups). */
  shapes?: Partial<KernelShapes>;
}

export class Kernels extends KernelSet {
  readonly norms: NormKernels;

  /** Over a context of its own (options: its cache, allocator, shapes) or a shared one. */
  constructor(gpu: GpuContext | KernelContext, options: KernelsOptions = {}) {
    super(gpu, options);
    this.norms = new NormKernels(this.ctx);
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
}
