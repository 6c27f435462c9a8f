// The mixture-of-experts feed-forward of the decoder graph (gpt-oss, as llama.cpp's build_moe_ffn with
// SOFTMAX_WEIGHT gating and SWIGLU_OAI): per layer, ops of the forward plan (forward-plan.ts), no CPU readback:
//   router product (+bias) -> moe_route (top-k of the logits, softmax over the chosen) -> per part of the stacked
//   gate/up experts, the chosen experts' swiglu_oai(gate·x + b, up·x + b) per (token, slot) -> per part of the down
//   experts, Σ_slots route weight · (down·act + b) added into the residual.
// Only the chosen experts' rows are read (matmul_experts reads each expert id on the GPU). Its buffers: the router
// logits, the chosen ids and weights, the per-slot activations, and per layer the gate and up biases side by side.
import type { ForwardKernels } from '../gpu/forward-kernels.ts';
import type { KernelOp } from '../gpu/kernel-op.ts';
import { createEmptyStorageBuffer } from '../gpu/transfer.ts';
import type { GpuWeightFormatName } from '../common/weight-formats.ts';
import type { ModelConfig } from './model-config.ts';

/** A loaded f32 vector (decoder.ts's GpuVector; not imported, so that decoder.ts can import this module). */
interface Vector {
  name: string;
  buffer: GPUBuffer;
  length: number;
}

/** A loaded matrix (decoder.ts's GpuMatrix, structurally). */
interface Matrix {
  name: string;
  type: GpuWeightFormatName;
  rows: number;
  cols: number;
  stacked?: number;
  parts: { buffer: GPUBuffer; rowStart: number; rowCount: number }[];
}

/**
 * Expert matrices [experts, rows, cols] (gpt-oss), split over buffers by whole experts: each part holds experts
 * [expertStart, expertStart + expertCount), `stacked` matrices of them in turn (gate and up stack as 2: the part's
 * gate experts, then its up experts).
 */
export interface GpuExperts {
  name: string;
  type: GpuWeightFormatName;
  experts: number;
  rows: number;
  cols: number;
  stacked: number;
  parts: { buffer: GPUBuffer; expertStart: number; expertCount: number }[];
}

/** A mixture-of-experts feed-forward (gpt-oss): router, gate/up experts (stacked), down experts, their biases. */
export interface MoeWeights {
  router: Matrix;
  routerBias: Vector;
  gateUp: GpuExperts;
  /** [experts, intermediate] each. */
  gateBias: Vector;
  upBias: Vector;
  down: GpuExperts;
  /** [experts, hidden]. */
  downBias: Vector;
}

export class MoeFeedForward {
  private readonly logits: GPUBuffer;
  private readonly ids: GPUBuffer;
  private readonly routeWeights: GPUBuffer;
  /** [maxBatch · used, intermediate]: each (token, slot)'s activation. */
  private readonly act: GPUBuffer;
  /** Per layer: gate biases [experts, intermediate] then up biases (the gated expert kernel's bias binding). */
  private readonly gateUpBias: GPUBuffer[];

  constructor(
    device: GPUDevice,
    private readonly config: ModelConfig & { moe: NonNullable<ModelConfig['moe']> },
    private readonly layers: readonly MoeWeights[],
    maxBatch: number,
    /** Where the gate/up bias copies are recorded (ForwardPlanParts.weightCopies: submitted once the weights are in). */
    copies: GPUCommandEncoder,
  ) {
    const { experts, expertsUsed } = config.moe;
    const buf = (label: string, words: number) => createEmptyStorageBuffer(device, words * 4, label);
    this.logits = buf('moe router logits', maxBatch * experts);
    this.ids = buf('moe expert ids', maxBatch * expertsUsed);
    this.routeWeights = buf('moe expert weights', maxBatch * expertsUsed);
    this.act = buf('moe activations', maxBatch * expertsUsed * config.intermediate);
    const n = experts * config.intermediate * 4;
    this.gateUpBias = layers.map((L, l) => {
      const bias = buf(`blk.${l} gate/up experts bias`, 2 * experts * config.intermediate);
      copies.copyBufferToBuffer(L.gateBias.buffer, 0, bias, 0, n);
      copies.copyBufferToBuffer(L.upBias.buffer, 0, bias, n, n);
      return bias;
    });
  }

  /** Bytes of expert weights a decode step reads: `used` of the experts of each layer (the routers are dense products). */
  expertBytesPerToken(): number {
    const { experts, expertsUsed } = this.config.moe;
    const bytes = (e: GpuExperts) => e.parts.reduce((s, p) => s + p.buffer.size, 0);
    return this.layers.reduce((s, L) => s + ((bytes(L.gateUp) + bytes(L.down)) * expertsUsed) / experts, 0);
  }

  /**
   * The ops of layer `layer`'s feed-forward for m tokens: xn [m, hidden] (normed) in, the result added into x (the
   * residual). `product` gives the router's ops through the decoder's dense product path.
   */
  ops(
    fk: ForwardKernels,
    product: (w: Matrix, x: GPUBuffer, y: GPUBuffer, m: number, bias: GPUBuffer) => KernelOp[],
    layer: number,
    xn: GPUBuffer,
    x: GPUBuffer,
    m: number,
  ): KernelOp[] {
    const L = this.layers[layer];
    const c = this.config;
    const { experts, expertsUsed: used } = c.moe;
    const ops = product(L.router, xn, this.logits, m, L.routerBias.buffer);
    ops.push(...fk.moeRouteOps({ logits: this.logits, ids: this.ids, weights: this.routeWeights, m, experts, used }));
    const common = { experts, ids: this.ids, routeWeights: this.routeWeights, m, used };
    for (const part of L.gateUp.parts) {
      ops.push(...fk.expertProductOps({
        ...common, mode: 'gated', type: L.gateUp.type, weights: part.buffer, expertStart: part.expertStart, expertCount: part.expertCount,
        x: xn, y: this.act, bias: this.gateUpBias[layer], n: c.intermediate, k: c.hidden,
      }));
    }
    for (const part of L.down.parts) {
      ops.push(...fk.expertProductOps({
        ...common, mode: 'weighted', type: L.down.type, weights: part.buffer, expertStart: part.expertStart, expertCount: part.expertCount,
        x: this.act, y: x, bias: L.downBias.buffer, n: c.hidden, k: c.intermediate,
      }));
    }
    return ops;
  }

  destroy(): void {
    for (const b of [this.logits, this.ids, this.routeWeights, this.act, ...this.gateUpBias]) b.destroy();
  }
}
