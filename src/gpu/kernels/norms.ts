// The row reductions: RMSNorm over rows of length n (shaders/rmsnorm.wgsl), optionally added into its output (a
// post norm's residual add), with the adapter's row-reduction shape (ROW_THREADS invocations a row).
import { requireBytes, type Binding } from '../dispatch.ts';
import { PARAMS, type KernelOp } from '../kernel-op.ts';
import { rowsPerWorkgroup } from '../kernel-shapes.ts';
import * as shaders from '../shaders.ts';
import type { KernelContext, Prepared } from './context.ts';

export interface RmsnormArgs { x: Binding; weight: Binding; y: Binding; rows: number; n: number; eps: number; accumulate?: boolean }

export class NormKernels {
  constructor(private readonly ctx: KernelContext) {}

  /** The rmsnorm pipelines: plain and accumulating (what `prepare` compiles). */
  kernels(): Prepared[] {
    return [this.rmsnormKernel(false), this.rmsnormKernel(true)];
  }

  private rmsnormKernel(accumulate: boolean): Prepared {
    return { kernel: shaders.rmsnorm, constants: { ...this.ctx.shapes.rowReduce, ...(accumulate ? { ACCUMULATE: true } : {}) } };
  }

  /** Y[r, :] = X[r, :] / sqrt(mean(X[r, :]²) + eps) * weight, rows of length n (`accumulate`: Y += that); none for no rows. */
  rmsnormOps(a: RmsnormArgs): KernelOp[] {
    if (a.rows === 0) return [];
    requireBytes('rmsnorm', 'x', a.x, a.rows * a.n * 4);
    requireBytes('rmsnorm', 'weight', a.weight, a.n * 4);
    requireBytes('rmsnorm', 'y', a.y, a.rows * a.n * 4);
    const p = this.rmsnormKernel(a.accumulate ?? false);
    return [{ ...p, bindings: [a.x, a.weight, a.y, PARAMS], params: [a.rows, a.n, { f32: a.eps }], workgroups: Math.ceil(a.rows / rowsPerWorkgroup(this.ctx.shapes.rowReduce)) }];
  }
}
