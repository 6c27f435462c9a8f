// Workgroup shapes per adapter: the one small place that picks each kernel's `override` constants.
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
    return {
      rowReduce: { WORKGROUP_SIZE: 16, ROW_THREADS: 1 },
    };
  }
  const size = Math.min(256, limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  return {
    rowReduce: { WORKGROUP_SIZE: size, ROW_THREADS: size },
  };
}
