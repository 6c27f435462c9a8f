// Per-adapter choices of src/gpu/kernel-shapes.ts that need no GPU: which adapters count as CPU ones, and where a
// model's F16 matrices load widened to F32 (the engine asks widenF16Weights before uploading).
import { describe, expect, test } from 'vitest';
import type { GpuAdapterSummary } from '../../../src/gpu/device.ts';
import { WIDEN_F16_MAX_BYTES, isCpuAdapter, widenF16Weights } from '../../../src/gpu/kernel-shapes.ts';

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
