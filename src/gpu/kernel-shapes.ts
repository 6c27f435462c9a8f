// Workgroup shapes per adapter: the one small place that picks each kernel's `override` constants (the row
// reductions of kernels.ts, the forward kernels of src/gpu/kernels/).
// CPU adapters (SwiftShader, llvmpipe/lavapipe) run a workgroup on one CPU thread, invocations in SIMD lanes:
// register tiling with one invocation per row group is fastest there, and workgroup-memory reductions only
// cost. GPUs want many lanes cooperating on a row (K_SPLIT / ROW_THREADS) so neighbouring lanes read
// neighbouring words.
import type { GpuAdapterSummary, GpuLimits } from './device.ts';

export interface RowReduceShape {
  WORKGROUP_SIZE: number;
  /** Invocations sharing one row (power of two dividing WORKGROUP_SIZE). */
  ROW_THREADS: number;
}

export interface KernelShapes {
  /** RMSNorm. */
  rowReduce: RowReduceShape;
}

/** Rows one RMSNorm workgroup handles. */
export function rowsPerWorkgroup(shape: RowReduceShape): number {
  return shape.WORKGROUP_SIZE / shape.ROW_THREADS;
}

/** Whether the adapter is a CPU implementation of WebGPU. */
export function isCpuAdapter(info: GpuAdapterSummary): boolean {
  const text = `${info.vendor} ${info.architecture} ${info.description}`;
  return info.isFallbackAdapter || /swiftshader|llvmpipe|lavapipe|software/i.test(text);
}

export function kernelShapesFor(info: GpuAdapterSummary, limits: GpuLimits): KernelShapes {
  if (isCpuAdapter(info)) {
    // One SIMD group (SwiftShader's 4 lanes) a row: one invocation a row left 3 of 4 lanes idle and the workgroup's
    // other invocations summing a clamped row (Node's Dawn, 1 x 896: 100 us a dispatch at 16 x 1, 20 at 4 x 4;
    // 1 x 128: 21 -> 8.6, the empty-dispatch floor).
    return {
      rowReduce: { WORKGROUP_SIZE: 4, ROW_THREADS: 4 },
    };
  }
  const size = Math.min(256, limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  return {
    rowReduce: { WORKGROUP_SIZE: size, ROW_THREADS: size },
  };
}

/** Largest F16 weight bytes a CPU adapter widens to F32 (to twice that): beyond it memory matters more than speed. */
export const WIDEN_F16_MAX_BYTES = 512 * 2 ** 20;

/**
 * Whether a model's F16 matrices load widened to F32 (exact, twice the bytes): on CPU adapters without `shader-f16`
 * (SwiftShader), whose F32 product reads weights at memory speed while the F16 one is bound by widening each half
 * in the shader (bench/kernels, 4096 x 2048: matvec_f32 7.3 ms on 32 MB, matvec_f16 11 ms on 16 MB; the 20M F16
 * model's decode 0.59x -> 0.79x wllama's), up to WIDEN_F16_MAX_BYTES of F16 weights. GPUs keep F16 (bytes are their
 * bound; native halves where they have `shader-f16`).
 */
export function widenF16Weights(info: GpuAdapterSummary, f16: boolean, f16WeightBytes: number): boolean {
  return isCpuAdapter(info) && !f16 && f16WeightBytes > 0 && f16WeightBytes <= WIDEN_F16_MAX_BYTES;
}

export interface ForwardKernelShapes {
  /**
   * matmul_*: each invocation 4 rows x TILE_M tokens (1..4; m = 1 uses 1), K_SPLIT invocations per 4 rows.
   * NORM_SUBGROUP (CPU adapters whose subgroups all have one size: that size; else 0 or absent): a fused norm's
   * producer adds its sums of squares per subgroup (subgroup split, shaders/matmul_split_subgroup.wgsl), not per
   * workgroup through a barrier. PREFILL_TILED (not yet any adapter's default: unmeasured on a GPU; bench/gpu's
   * variants time it): products of m > 1 through shaders/matmul_tiled.wgsl (64 tokens x 64 rows a workgroup of 256,
   * through workgroup memory) where k is a multiple of 32 and a fused norm's row groups fit its tiles.
   */
  product: { WORKGROUP_SIZE: number; K_SPLIT: number; TILE_M: number; NORM_SUBGROUP?: number; PREFILL_TILED?: boolean };
  /** embedding, rope, swiglu, add: one invocation per element (or pair). */
  elementwise: { WORKGROUP_SIZE: number };
  /**
   * attention: one invocation per (query, KV head, up to HEADS of its query heads, split). A decode step (m = 1)
   * over more than SPLIT_POSITIONS positions splits them into ceil(positions / SPLIT_POSITIONS) equal chunks, at most
   * MAX_SPLITS (absent: no cap; past it the chunks grow), merged by attention_combine (flash-decoding); 0 never
   * splits. HEADS (1..8; absent: 1): query heads of one KV head per invocation, each key
   * and value read once for them (the group spread evenly over the fewest invocations). COOPERATIVE (GPUs):
   * shaders/attention_decode.wgsl instead, one workgroup of WORKGROUP_SIZE (a power of two) per (query, KV head, up to
   * HEADS of its query heads, split), its invocations sharing the positions and the head dim.
   */
  attention: { WORKGROUP_SIZE: number; SPLIT_POSITIONS: number; HEADS?: number; MAX_SPLITS?: number; COOPERATIVE?: boolean };
  /**
   * attention_prefill (m > 1): WORKGROUP_SIZE invocations of ROWS (1..4) query rows each, all of one KV head, per
   * workgroup; positions in tiles of KV_TILE (a multiple of 8; capped per head dim so that the two tiles fit the
   * workgroup memory limit), staged in workgroup memory when SHARED_KV (GPUs) or read straight from the cache
   * (CPU adapters: every non-constant index is a per-lane gather there, so each K/V load serves ROWS rows).
   * ROWS is capped at 256 / head dim (the kernel is written out over rows x head dim). LANES 4: the 4 lanes of a
   * subgroup each load a quarter of every K/V row and shuffle it to the others (taken only where subgroups are
   * exactly 4 lanes, SwiftShader's; bench/prefill --attention-only at 2048 cached positions: 8 x 4 rows 138 ms ->
   * 4 x 8 rows with lanes ~90 ms CPU per dispatch). KV_TILE 0: prefill runs `attention` (one invocation per query
   * and head) instead.
   */
  attentionPrefill: { WORKGROUP_SIZE: number; KV_TILE: number; ROWS: number; SHARED_KV: boolean; LANES?: 1 | 4 };
  /** argmax: WORKGROUP_SIZE a power of two; a stage-0 workgroup covers WORKGROUP_SIZE * ITEMS_PER_INVOCATION values. */
  argmax: { WORKGROUP_SIZE: number; ITEMS_PER_INVOCATION: number };
  /**
   * Tokens per prefill step (a Decoder's default maxBatch). CPU adapters 64 (each chunk's work is spread over a
   * few cores already); GPUs 256: 4x fewer dispatches and passes over the weights per prompt, more workgroups per
   * product (not yet measured on a GPU).
   */
  prefillChunk: number;
}

/**
 * The size of every subgroup where the adapter has one size only (SwiftShader: 4), else 0. CPU adapters lay a
 * workgroup's subgroups out as consecutive invocations (SIMD lanes), which shaders/matmul_split_subgroup.wgsl's
 * NORM_SUBGROUP relies on.
 */
function exactSubgroupSize(info: GpuAdapterSummary): number {
  const size = info.subgroupMinSize ?? 0;
  return size > 0 && size === info.subgroupMaxSize ? size : 0;
}

export function forwardKernelShapesFor(info: GpuAdapterSummary, limits: GpuLimits): ForwardKernelShapes {
  if (isCpuAdapter(info)) {
    // SwiftShader: a workgroup runs on one CPU thread with invocations in SIMD lanes: 4 rows per invocation,
    // no workgroup-memory reductions in the products, small workgroups so that the few rows of attention spread
    // over cores, and few barrier steps in argmax (8 invocations x 128 values).
    return {
      product: { WORKGROUP_SIZE: 16, K_SPLIT: 1, TILE_M: 4, NORM_SUBGROUP: exactSubgroupSize(info) },
      elementwise: { WORKGROUP_SIZE: 64 },
      attention: { WORKGROUP_SIZE: 4, SPLIT_POSITIONS: 64, HEADS: 8, MAX_SPLITS: 16 },
      attentionPrefill: { WORKGROUP_SIZE: 4, KV_TILE: 16, ROWS: 8, SHARED_KV: false, LANES: 4 },
      argmax: { WORKGROUP_SIZE: 8, ITEMS_PER_INVOCATION: 128 },
      prefillChunk: 64,
    };
  }
  const size = Math.min(256, limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  return {
    product: { WORKGROUP_SIZE: Math.min(64, size), K_SPLIT: 8, TILE_M: 4 },
    elementwise: { WORKGROUP_SIZE: Math.min(256, size) },
    attention: { WORKGROUP_SIZE: Math.min(64, size), SPLIT_POSITIONS: 64, HEADS: 8, COOPERATIVE: true },
    attentionPrefill: { WORKGROUP_SIZE: Math.min(64, size), KV_TILE: 16, ROWS: 1, SHARED_KV: true },
    argmax: { WORKGROUP_SIZE: size, ITEMS_PER_INVOCATION: 8 },
    prefillChunk: 256,
  };
}
