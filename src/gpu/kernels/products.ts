// The weight products: Y[m, :] (+)= X[m, k]·Wᵀ (+ bias) for every GPU weight format of src/common/weight-formats.ts
// (dequantization fused; the bias, the residual add, SwiGLU/GeGLU of a stacked gate/up and the RMSNorm between a
// residual product and the next products (normOut / normed) fused), in the form the
// device takes: the K_SPLIT reduction over subgroups or workgroup memory, and the F16 products' native `shader-f16`
// form where the device has it (shaders.ts withNativeF16Products). Layouts: shaders/matmul*.wgsl.
import { requireBytes, type Binding } from '../dispatch.ts';
import { PARAMS, type KernelOp } from '../kernel-op.ts';
import * as shaders from '../shaders.ts';
import { withNativeF16Products } from '../shaders.ts';
import { GPU_WEIGHT_FORMAT_NAMES, WEIGHT_FORMAT, type GpuWeightFormatName } from '../../common/weight-formats.ts';
import type { KernelContext, Prepared } from './context.ts';

/** Weight types of the product kernels: the formats GPU buffers hold (src/common/weight-formats.ts; BF16 is widened to F32 at load). */
export type ProductWeightType = GpuWeightFormatName;
/** 'gated': SwiGLU fused (silu(gate·x)·(up·x)); 'gated-gelu': GeGLU (gelu_tanh(gate·x)·(up·x), Gemma 3). */
export type ProductVariant = 'plain' | 'bias' | 'accumulate' | 'bias+accumulate' | 'gated' | 'gated-gelu';
/** How the products sum over the K_SPLIT invocations of a row group. */
export type ProductSplit = 'workgroup' | 'subgroup';

/** The product kernels' block of a format: 4 weights for the plain formats (F32, F16), else the format's block. */
function productBlock(type: ProductWeightType): { elements: number; bytes: number } {
  const f = WEIGHT_FORMAT[type];
  const elements = Math.max(4, f.blockElements);
  return { elements, bytes: (elements / f.blockElements) * f.gpuBlockBytes };
}

/** Weights per block: k (the row length) must be a multiple of it. */
export const PRODUCT_BLOCK_ELEMENTS: Readonly<Record<ProductWeightType, number>> = Object.fromEntries(
  GPU_WEIGHT_FORMAT_NAMES.map((f) => [f, productBlock(f).elements]),
) as Record<ProductWeightType, number>;
/** Bytes per block in the GPU layout (src/common/weight-formats.ts). */
export const PRODUCT_BLOCK_BYTES: Readonly<Record<ProductWeightType, number>> = Object.fromEntries(
  GPU_WEIGHT_FORMAT_NAMES.map((f) => [f, productBlock(f).bytes]),
) as Record<ProductWeightType, number>;

/** shaders/matmul_tiled.wgsl's tile: W rows (GATED: half gate, half up) and tokens a workgroup. */
const TILED_ROWS = 64;
const TILED_TOKENS = 64;

export interface ProductOptions {
  /**
   * How the products sum over the K_SPLIT invocations of a row group. Default: subgroup shuffles where the device
   * has `subgroups` and its smallest subgroup holds K_SPLIT invocations, else workgroup memory.
   */
  productSplit?: ProductSplit;
  /**
   * GeGLU's GELU as llama.cpp's CPU backend computes it (a table over f16 inputs and results) instead of the f32
   * tanh GELU (shaders/matmul.wgsl GELU_F16). Default false.
   */
  geluF16?: boolean;
}

/** The arguments of a product. */
export interface ProductArgs {
  type: ProductWeightType;
  weights: Binding;
  x: Binding;
  y: Binding;
  m: number;
  n: number;
  k: number;
  bias?: Binding;
  accumulate?: boolean;
  gated?: boolean;
  /** With `gated`: the activation of the gate (default silu: SwiGLU; gelu: GeGLU, tanh-approximated). */
  activation?: 'silu' | 'gelu';
  yOffset?: number;
  yStride?: number;
  /**
   * RMSNorm fused into the product that writes the residual stream (with `accumulate`, the whole of Y's rows: no
   * yOffset, yStride n): besides Y it writes Y·weight to `normed` (laid out as Y) and each token's sums of Y² per row
   * group to `sums` ([m, normGroups(n)] f32), so the next product needs no norm dispatch (shaders/matmul.wgsl NORM_OUT).
   */
  normOut?: { weight: Binding; normed: Binding; sums: Binding };
  /**
   * x is a `normOut` product's `normed` (Y·g) and `sums` its sums: the product is that of RMSNorm(Y)·g (eps as the
   * norm's); k is Y's width (shaders/matmul.wgsl NORMED).
   */
  normed?: { sums: Binding; eps: number };
}

/** The product split a context's device takes by default (see ProductOptions.productSplit), checked against its shapes. */
export function productSplitFor(ctx: KernelContext, asked?: ProductSplit): ProductSplit {
  const { TILE_M, K_SPLIT, WORKGROUP_SIZE } = ctx.shapes.product;
  if (!(TILE_M >= 1 && TILE_M <= 4) || WORKGROUP_SIZE % K_SPLIT !== 0) {
    throw new RangeError(`product shape: TILE_M must be 1..4 and K_SPLIT divide WORKGROUP_SIZE (got ${JSON.stringify(ctx.shapes.product)})`);
  }
  const subgroupsFit = ctx.features.subgroups && (ctx.features.subgroupMinSize ?? 0) >= K_SPLIT;
  // Subgroups where they sum K_SPLIT lanes, or where a fused norm's sums can be taken per subgroup (NORM_SUBGROUP).
  const split = asked ?? ((K_SPLIT > 1 || (ctx.shapes.product.NORM_SUBGROUP ?? 0) > 0) && subgroupsFit ? 'subgroup' : 'workgroup');
  if (split === 'subgroup' && !ctx.features.subgroups) throw new RangeError('product split: subgroup reductions need the subgroups feature');
  return split;
}

export class ProductKernels {
  /** The product kernels with this device's K_SPLIT reduction. */
  readonly productSplit: ProductSplit;
  /** How the F16 products read their halves: 'native' (`shader-f16`, shaders/decode_f16_native.wgsl) where the device has it, else 'packed'. */
  readonly f16Weights: 'native' | 'packed';
  private readonly kernels: shaders.ProductKernelSet;
  private readonly geluF16: boolean;
  /** Invocations per fused-norm sum (shaders/matmul_split_subgroup.wgsl NORM_SUBGROUP), 0: one per workgroup. */
  private readonly normSubgroup: number;
  /**
   * Decode products whose quads share their activation loads (shaders/matmul_split_subgroup.wgsl SHARED_X): the
   * subgroup split with K_SPLIT 1, where a quad's 4 invocations take the same blocks and token.
   */
  private readonly sharedX: boolean;

  constructor(
    private readonly ctx: KernelContext,
    options: ProductOptions = {},
  ) {
    this.productSplit = productSplitFor(ctx, options.productSplit);
    const products = this.productSplit === 'subgroup' ? shaders.productKernelsSubgroupSplit : shaders.productKernelsWorkgroupSplit;
    this.f16Weights = ctx.features.f16 ? 'native' : 'packed';
    this.kernels = this.f16Weights === 'native' ? withNativeF16Products(products) : products;
    this.geluF16 = options.geluF16 ?? false;
    const normSubgroup = ctx.shapes.product.NORM_SUBGROUP ?? 0;
    this.sharedX = this.productSplit === 'subgroup' && ctx.shapes.product.K_SPLIT === 1;
    this.normSubgroup = this.productSplit === 'subgroup' && normSubgroup > 0 && ctx.shapes.product.WORKGROUP_SIZE % normSubgroup === 0 ? normSubgroup : 0;
  }

  /** norm: the fused RMSNorm's side (ProductArgs normOut / normed). */
  private productKernel(type: ProductWeightType, tileM: number, variant: ProductVariant, norm?: 'out' | 'in'): Prepared {
    const { WORKGROUP_SIZE, K_SPLIT } = this.ctx.shapes.product;
    const constants = {
      WORKGROUP_SIZE, K_SPLIT, TILE_M: tileM, HAS_BIAS: variant.startsWith('bias'), ACCUMULATE: variant.endsWith('accumulate'), GATED: variant.startsWith('gated'), GELU: variant === 'gated-gelu', GELU_F16: variant === 'gated-gelu' && this.geluF16,
      ...(this.sharedX && tileM === 1 ? { SHARED_X: true } : {}),
      ...(norm === 'out' ? { NORM_OUT: true, ...(this.normSubgroup > 0 ? { NORM_SUBGROUP: this.normSubgroup } : {}) } : norm === 'in' ? { NORMED: true } : {}),
    };
    return { kernel: this.kernels[type], constants };
  }

  /**
   * The sums of squares a `normOut` product of n rows writes per token: per workgroup, or per subgroup where the
   * subgroup split takes NORM_SUBGROUP; a `normed` product's k gives the same count.
   */
  normGroups(n: number): number {
    const { WORKGROUP_SIZE, K_SPLIT } = this.ctx.shapes.product;
    const perWorkgroup = this.normSubgroup > 0 ? WORKGROUP_SIZE / this.normSubgroup : 1;
    return Math.ceil(n / ((4 * WORKGROUP_SIZE) / K_SPLIT)) * perWorkgroup;
  }

  /**
   * Y[m, :] (+)= X[m, k]·Wᵀ (+ bias) for the n rows of W in `weights` (a row range of a split tensor), written at
   * columns [yOffset, yOffset + n) of Y rows yStride apart (defaults: 0 and n). m = 1 is the decode matvec.
   * `accumulate` adds into Y (the residual add fused). `gated`: `weights` holds two matrices of n rows, gate then
   * up (a stacked tensor part, see the weight loader's groups), and Y gets silu(gate·x)·(up·x) (SwiGLU fused; no
   * bias or accumulate with it). k must be a multiple of the block size. None for an empty product.
   */
  productOps(a: ProductArgs): KernelOp[] {
    if (a.m === 0 || a.n === 0) return [];
    if (a.gated && (a.bias || a.accumulate)) throw new RangeError(`${a.type} product: a gated product has no bias or accumulate`);
    if (a.normOut && (!a.accumulate || a.gated || (a.yOffset ?? 0) !== 0 || (a.yStride ?? a.n) !== a.n)) {
      throw new RangeError(`${a.type} product: a fused norm's producer adds into all of Y's rows (accumulate, no yOffset, yStride n)`);
    }
    if (a.normOut && a.normed) throw new RangeError(`${a.type} product: both ends of a fused norm`);
    const matrices = a.gated ? 2 : 1;
    const block = PRODUCT_BLOCK_ELEMENTS[a.type];
    if (a.k % block !== 0) throw new RangeError(`${a.type} product: k = ${a.k} is not a multiple of the block size ${block}`);
    const yOffset = a.yOffset ?? 0;
    const yStride = a.yStride ?? a.n;
    requireBytes(`${a.type} product`, 'weights', a.weights, ((matrices * a.n * a.k) / block) * PRODUCT_BLOCK_BYTES[a.type]);
    requireBytes(`${a.type} product`, 'x', a.x, a.m * a.k * 4);
    requireBytes(`${a.type} product`, 'y', a.y, ((a.m - 1) * yStride + yOffset + a.n) * 4);
    if (a.bias) requireBytes(`${a.type} product`, 'bias', a.bias, (yOffset + a.n) * 4);
    const { product } = this.ctx.shapes;
    const rowsPerGroup = (4 * product.WORKGROUP_SIZE) / product.K_SPLIT;
    const tiled = this.prefillTiled(a, rowsPerGroup);
    const tileM = a.m === 1 ? 1 : product.TILE_M;
    const variant: ProductVariant = a.gated ? (a.activation === 'gelu' ? 'gated-gelu' : 'gated') : a.bias ? (a.accumulate ? 'bias+accumulate' : 'bias') : a.accumulate ? 'accumulate' : 'plain';
    const workgroups = tiled
      ? Math.ceil(a.n / (a.gated ? TILED_ROWS / 2 : TILED_ROWS)) * Math.ceil(a.m / TILED_TOKENS)
      : Math.ceil(a.n / rowsPerGroup) * Math.ceil(a.m / tileM);
    const bias = a.bias ?? this.ctx.unused(0);
    if (a.normOut) {
      requireBytes(`${a.type} product`, 'normOut.normed', a.normOut.normed, a.m * a.n * 4);
      requireBytes(`${a.type} product`, 'normOut.weight', a.normOut.weight, a.n * 4);
      requireBytes(`${a.type} product`, 'normOut.sums', a.normOut.sums, a.m * this.normGroups(a.n) * 4);
    }
    if (a.normed) requireBytes(`${a.type} product`, 'normed.sums', a.normed.sums, a.m * this.normGroups(a.k) * 4);
    const norm = a.normOut ? 'out' : a.normed ? 'in' : undefined;
    const params = [a.n, a.k, a.m, yOffset, yStride, norm === 'out' ? this.normGroups(a.n) : norm === 'in' ? this.normGroups(a.k) : 0, { f32: norm === 'in' ? a.normed!.eps : 0 }];
    const normBindings = [a.normOut?.sums ?? (norm === 'in' ? a.normed!.sums : this.ctx.unused(1)), a.normOut?.weight ?? this.ctx.unused(0), a.normOut?.normed ?? this.ctx.unused(2)];
    const kernel = tiled ? this.tiledKernel(a.type, variant, norm, rowsPerGroup) : this.productKernel(a.type, tileM, variant, norm);
    return [{ ...kernel, bindings: [a.weights, a.x, bias, a.y, PARAMS, ...normBindings], params, workgroups }];
  }

  /**
   * Whether a product takes shaders/matmul_tiled.wgsl: the shape's PREFILL_TILED, m > 1, k whole steps of 32, and a
   * fused norm's sums per row group as matmul.wgsl writes them (rowsPerGroup rows, a multiple of 4 dividing the
   * tile's 64; not per subgroup), so that decode and prefill agree on their count.
   */
  private prefillTiled(a: ProductArgs, rowsPerGroup: number): boolean {
    if (!this.ctx.shapes.product.PREFILL_TILED || a.m <= 1 || a.k % 32 !== 0 || a.type === 'MXFP4') return false;
    if (!a.normOut && !a.normed) return true;
    return this.normSubgroup === 0 && rowsPerGroup % 4 === 0 && TILED_ROWS % rowsPerGroup === 0;
  }

  /** matmul_tiled for this format and epilogue (NORM_ROWS: the decode shape's rows per norm group). */
  private tiledKernel(type: ProductWeightType, variant: ProductVariant, norm: 'out' | 'in' | undefined, rowsPerGroup: number): Prepared {
    const constants = {
      HAS_BIAS: variant.startsWith('bias'), ACCUMULATE: variant.endsWith('accumulate'), GATED: variant.startsWith('gated'), GELU: variant === 'gated-gelu', GELU_F16: variant === 'gated-gelu' && this.geluF16,
      ...(norm === 'out' ? { NORM_OUT: true, NORM_ROWS: rowsPerGroup } : norm === 'in' ? { NORMED: true } : {}),
    };
    return { kernel: shaders.productKernelsTiled[type], constants };
  }
}
