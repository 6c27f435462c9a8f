// The argmax of a row of values (greedy decoding over the logits): one workgroup pass when the values fit one,
// else stage 0 per chunk into a scratch and stage 1 over the chunks (shaders/argmax.wgsl).
import type { Binding } from '../dispatch.ts';
import { PARAMS, type KernelOp } from '../kernel-op.ts';
import * as shaders from '../shaders.ts';
import type { KernelContext, Prepared } from './context.ts';

export interface ArgmaxArgs { values: Binding; out: Binding; scratch: Binding; count: number }

export class ArgmaxKernels {
  constructor(private readonly ctx: KernelContext) {}

  /** Values one argmax stage-0 workgroup reduces. */
  get argmaxChunk(): number {
    return this.ctx.shapes.argmax.WORKGROUP_SIZE * this.ctx.shapes.argmax.ITEMS_PER_INVOCATION;
  }

  /** Bytes of the scratch buffer `argmaxOps` needs for `count` values. */
  argmaxScratchBytes(count: number): number {
    return Math.ceil(count / this.argmaxChunk) * 8;
  }

  private argmaxKernel(stage: 0 | 1): Prepared {
    return { kernel: shaders.argmax, constants: { ...this.ctx.shapes.argmax, STAGE: stage } };
  }

  /**
   * The index of the largest of `count` f32 values (ties to the lowest index) into out[0] (a u32; out[1] gets
   * its value's bits): one pass when count fits one workgroup, else two through `scratch`.
   */
  argmaxOps(a: ArgmaxArgs): KernelOp[] {
    if (a.count === 0) throw new RangeError('argmax of no values');
    const groups = Math.ceil(a.count / this.argmaxChunk);
    if (groups === 1) return [{ ...this.argmaxKernel(0), bindings: [a.values, a.out, PARAMS], params: [a.count], workgroups: 1 }];
    return [
      { ...this.argmaxKernel(0), bindings: [a.values, a.scratch, PARAMS], params: [a.count], workgroups: groups },
      { ...this.argmaxKernel(1), bindings: [a.scratch, a.out, PARAMS], params: [groups], workgroups: 1 },
    ];
  }
}
