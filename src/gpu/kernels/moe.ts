// The mixture-of-experts kernels (gpt-oss): the router's choice (the `used` largest logits and the softmax over
// them, shaders/moe_route.wgsl) and the expert products over the experts it chose, read on the GPU
// (shaders/matmul_experts.wgsl, with the products' K_SPLIT reduction).
import { requireBytes, type Binding } from '../dispatch.ts';
import { PARAMS, type KernelOp } from '../kernel-op.ts';
import * as shaders from '../shaders.ts';
import type { KernelContext } from './context.ts';
import { PRODUCT_BLOCK_BYTES, PRODUCT_BLOCK_ELEMENTS, type ProductSplit, type ProductWeightType } from './products.ts';

export interface MoeRouteArgs { logits: Binding; ids: Binding; weights: Binding; m: number; experts: number; used: number }

export interface ExpertProductArgs {
  mode: 'gated' | 'weighted';
  type: ProductWeightType;
  weights: Binding;
  expertStart: number;
  expertCount: number;
  experts: number;
  x: Binding;
  y: Binding;
  bias: Binding;
  ids: Binding;
  routeWeights: Binding;
  m: number;
  used: number;
  n: number;
  k: number;
}

export class MoeKernels {
  private readonly expertKernels: shaders.ProductKernelSet;

  /** split: the products' K_SPLIT reduction (ProductKernels.productSplit). */
  constructor(
    private readonly ctx: KernelContext,
    split: ProductSplit,
  ) {
    this.expertKernels = split === 'subgroup' ? shaders.expertKernelsSubgroupSplit : shaders.expertKernelsWorkgroupSplit;
  }

  /**
   * The router's choice (gpt-oss): for each of m tokens, the `used` largest of its `experts` logits ([m, experts]
   * f32) into ids [m, used] u32 (largest first) and the softmax over those chosen logits into weights [m, used].
   */
  moeRouteOps(a: MoeRouteArgs): KernelOp[] {
    if (a.m === 0) return [];
    if (a.used < 1 || a.used > Math.min(16, a.experts)) throw new RangeError(`moe route: ${a.used} experts used of ${a.experts} (1..min(16, experts))`);
    requireBytes('moe route', 'logits', a.logits, a.m * a.experts * 4);
    requireBytes('moe route', 'ids', a.ids, a.m * a.used * 4);
    requireBytes('moe route', 'weights', a.weights, a.m * a.used * 4);
    const { elementwise } = this.ctx.shapes;
    const workgroups = Math.ceil(a.m / elementwise.WORKGROUP_SIZE);
    return [{ kernel: shaders.moeRoute, constants: { ...elementwise }, bindings: [a.logits, a.ids, a.weights, PARAMS], params: [a.m, a.experts, a.used], workgroups }];
  }

  /**
   * The expert products of one part of an expert tensor (experts [expertStart, expertStart + expertCount) of
   * `experts`, n rows of k each, in `weights`), for the experts moeRoute chose (shaders/matmul_experts.wgsl):
   * 'gated': `weights` holds the part's gate experts then its up experts; y [m·used, n] gets swiglu_oai(gate·x +
   * bias, up·x + bias) per (token, slot) whose expert is in the part (bias: gate biases [experts, n] then up biases).
   * 'weighted': x is [m·used, k]; y [m, n] += Σ_slots route weight · (W_e·x_slot + bias[e]) over the part's experts.
   */
  expertProductOps(a: ExpertProductArgs): KernelOp[] {
    if (a.m === 0 || a.n === 0) return [];
    const gated = a.mode === 'gated';
    const block = PRODUCT_BLOCK_ELEMENTS[a.type];
    if (a.k % block !== 0) throw new RangeError(`${a.type} expert product: k = ${a.k} is not a multiple of the block size ${block}`);
    if (a.expertStart + a.expertCount > a.experts) throw new RangeError(`${a.type} expert product: experts ${a.expertStart}+${a.expertCount} of ${a.experts}`);
    const what = `${a.type} expert product`;
    requireBytes(what, 'weights', a.weights, (((gated ? 2 : 1) * a.expertCount * a.n * a.k) / block) * PRODUCT_BLOCK_BYTES[a.type]);
    requireBytes(what, 'x', a.x, (gated ? a.m : a.m * a.used) * a.k * 4);
    requireBytes(what, 'y', a.y, (gated ? a.m * a.used : a.m) * a.n * 4);
    requireBytes(what, 'bias', a.bias, (gated ? 2 : 1) * a.experts * a.n * 4);
    requireBytes(what, 'ids', a.ids, a.m * a.used * 4);
    requireBytes(what, 'route weights', a.routeWeights, a.m * a.used * 4);
    const params = [a.n, a.k, a.m, a.used, a.expertStart, a.expertCount, a.experts];
    const { WORKGROUP_SIZE, K_SPLIT } = this.ctx.shapes.product;
    const rowsPerGroup = (4 * WORKGROUP_SIZE) / K_SPLIT;
    const workgroups = Math.ceil(a.n / rowsPerGroup) * (gated ? a.m * a.used : a.m);
    const kernel = { kernel: this.expertKernels[a.type], constants: { WORKGROUP_SIZE, K_SPLIT, WEIGHTED: !gated } };
    return [{ ...kernel, bindings: [a.weights, a.x, a.bias, a.y, PARAMS, a.ids, a.routeWeights], params, workgroups }];
  }
}
