// Per-adapter choices of src/gpu/kernel-shapes.ts that need no GPU: which adapters count as CPU ones, where a
// model's F16 matrices load widened to F32 (the engine asks widenF16Weights before uploading), and how many query
// heads a GPU's decode attention workgroup takes (src/gpu/kernels/attention.ts: within the workgroup-memory limit).
import { describe, expect, test } from 'vitest';
import type { GpuAdapterSummary } from '../../../src/gpu/device.ts';
import { WIDEN_F16_MAX_BYTES, forwardKernelShapesFor, isCpuAdapter, widenF16Weights, type ForwardKernelShapes } from '../../../src/gpu/kernel-shapes.ts';
import { AttentionKernels } from '../../../src/gpu/kernels/attention.ts';
import type { KernelContext } from '../../../src/gpu/kernels/context.ts';
import { attentionDecodeSharedBytes } from '../../../src/gpu/attention-compose.ts';

const adapter = (description: string, vendor = '', isFallbackAdapter = false): GpuAdapterSummary => ({ vendor, architecture: '', device: '', description, isFallbackAdapter });
const SWIFTSHADER = adapter('SwiftShader Device (Subzero)', 'google');
const LAVAPIPE = adapter('llvmpipe (LLVM 15.0.6, 256 bits)', 'mesa');
const FALLBACK = adapter('', '', true);
const H200 = adapter('NVIDIA H200', 'nvidia');

describe('kernel shapes per adapter', () => {
  test('CPU adapters: SwiftShader, llvmpipe/lavapipe, any fallback adapter; not a GPU', () => {
    expect([SWIFTSHADER, LAVAPIPE, FALLBACK, H200].map(isCpuAdapter)).toEqual([true, true, true, false]);
  });

  test('F16 matrices widen to F32 on CPU adapters without shader-f16, up to WIDEN_F16_MAX_BYTES of them', () => {
    const mb20 = 40 * 2 ** 20;
    expect(widenF16Weights(SWIFTSHADER, false, mb20)).toBe(true);
    expect(widenF16Weights(FALLBACK, false, WIDEN_F16_MAX_BYTES)).toBe(true);
    // shader-f16 reads halves natively (lavapipe has it); GPUs keep the half bytes; nothing to widen; too large.
    expect(widenF16Weights(LAVAPIPE, true, mb20)).toBe(false);
    expect(widenF16Weights(H200, false, mb20)).toBe(false);
    expect(widenF16Weights(SWIFTSHADER, false, 0)).toBe(false);
    expect(widenF16Weights(SWIFTSHADER, false, WIDEN_F16_MAX_BYTES + 1)).toBe(false);
  });
});

describe('decode attention heads per workgroup on GPUs (attention_decode.wgsl)', () => {
  // What headsPerInvocation reads of a context: the attention shape and the workgroup-memory limit.
  const kernelsWith = (attention: ForwardKernelShapes['attention'], limit: number) =>
    new AttentionKernels({ shapes: { attention }, limits: { maxComputeWorkgroupStorageSize: limit } } as unknown as KernelContext);

  test('a GPU gets workgroups of 64 over up to 8 heads of one KV head', () => {
    const gpu = forwardKernelShapesFor(H200, { maxComputeInvocationsPerWorkgroup: 1024, maxComputeWorkgroupSizeX: 1024 } as never).attention;
    expect(gpu).toMatchObject({ WORKGROUP_SIZE: 64, HEADS: 8, COOPERATIVE: true });
    const kernels = kernelsWith(gpu, 16384);
    // Qwen2.5-0.5B 7 a KV head, Llama-3.2-1B 4, gpt-oss 8, a group of 16 in two.
    expect([7, 4, 8, 16].map((g) => kernels.headsPerInvocation(g, 64))).toEqual([7, 4, 8, 8]);
  });

  test('fewer heads where their queries and scores would pass the workgroup-memory limit, spread evenly', () => {
    const attention = { WORKGROUP_SIZE: 128, SPLIT_POSITIONS: 128, HEADS: 8, COOPERATIVE: true };
    // Head dim 256, 8 heads, 128 positions a tile: 17,444 bytes, over WebGPU's least limit.
    expect(attentionDecodeSharedBytes(256, 8, 128)).toBeGreaterThan(16384);
    expect(attentionDecodeSharedBytes(256, 7, 128)).toBeLessThanOrEqual(16384);
    expect(kernelsWith(attention, 16384).headsPerInvocation(8, 256)).toBe(4); // 8 in two workgroups of 4, not 7 + 1
    expect(kernelsWith(attention, 49152).headsPerInvocation(8, 256)).toBe(8);
    // The invocation-per-head kernel (not COOPERATIVE) has no such limit.
    expect(kernelsWith({ ...attention, COOPERATIVE: false }, 16384).headsPerInvocation(8, 256)).toBe(8);
  });
});
