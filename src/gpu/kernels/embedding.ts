// The embedding lookup: rows of a table in any GPU weight format (shaders/embedding_*.wgsl, dequantized as the
// products read them), optionally scaled, for the tokens whose rows a binding holds (tables split over buffers).
import type { Binding } from '../dispatch.ts';
import { PARAMS, type KernelOp } from '../kernel-op.ts';
import * as shaders from '../shaders.ts';
import type { GpuWeightFormatName } from '../../common/weight-formats.ts';
import type { KernelContext } from './context.ts';

/** Embedding table types in GPU memory (the products' formats). */
export type EmbeddingTableType = GpuWeightFormatName;

export interface EmbeddingArgs {
  type: EmbeddingTableType; table: Binding; tokens: Binding; out: Binding; tokenCount: number; dim: number; rowOffset?: number; rowCount?: number;
  /** Multiplies each looked-up value (Gemma: sqrt(hidden)); default 1. */
  scale?: number;
}

export class EmbeddingKernels {
  constructor(private readonly ctx: KernelContext) {}

  /**
   * out[t, :] = row tokens[t] of the table, for the rows [rowOffset, rowOffset + rowCount) this binding holds
   * (defaults: the whole table); tokens outside the range leave their output row as it was.
   */
  embeddingOps(a: EmbeddingArgs): KernelOp[] {
    if (a.tokenCount === 0) return [];
    const { elementwise } = this.ctx.shapes;
    const params = [a.dim, a.tokenCount, a.rowOffset ?? 0, a.rowCount ?? 0xffffffff, { f32: a.scale ?? 1 }];
    const workgroups = Math.ceil((a.tokenCount * a.dim) / elementwise.WORKGROUP_SIZE);
    return [{ kernel: shaders.embeddingKernels[a.type], constants: { ...elementwise }, bindings: [a.table, a.tokens, a.out, PARAMS], params, workgroups }];
  }
}
