// The gated activations of feed-forwards whose gate and up matrices are not stacked (stacked ones fuse them into
// the gated product): SwiGLU silu(gate)·up, or GeGLU gelu_tanh(gate)·up (shaders/swiglu.wgsl).
import type { Binding } from '../dispatch.ts';
import { PARAMS, type KernelOp } from '../kernel-op.ts';
import * as shaders from '../shaders.ts';
import type { KernelContext } from './context.ts';

export interface SwigluArgs { gate: Binding; up: Binding; out: Binding; m: number; width: number; activation?: 'silu' | 'gelu' }

export class ActivationKernels {
  /** geluF16: GeGLU's GELU as llama.cpp's CPU backend computes it (swiglu.wgsl GELU_F16), as the products'. */
  constructor(
    private readonly ctx: KernelContext,
    private readonly geluF16 = false,
  ) {}

  /** out[t, i] = silu(gate[t, i]) * up[t, i] (or gelu) for m tokens of `width`. */
  swigluOps(a: SwigluArgs): KernelOp[] {
    if (a.m === 0) return [];
    const { elementwise } = this.ctx.shapes;
    const gelu = a.activation === 'gelu';
    const workgroups = Math.ceil((a.m * a.width) / elementwise.WORKGROUP_SIZE);
    const constants = { ...elementwise, GELU: gelu, GELU_F16: gelu && this.geluF16 };
    return [{ kernel: shaders.swiglu, constants, bindings: [a.gate, a.up, a.out, PARAMS], params: [a.width, a.m], workgroups }];
  }
}
