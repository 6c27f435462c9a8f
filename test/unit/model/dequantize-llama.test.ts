// Each tensor type dequantizes (TypeScript reference, both file and GPU layouts) to what llama.cpp reads
// from the same GGUF. A probe model (see tools/make-test-model --probe) makes llama.cpp's logits for
// token t equal column t of output.weight dequantized.

import { openAsBlob } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { dequantizeGguf, dequantizeGpuLayout, toGpuLayout } from '../../../src/model/dequantize.ts';
import { ggufTensor, readGguf } from '../../../src/model/gguf.ts';
import { type TensorType } from '../../../src/model/tensor-types.ts';
import { makeTestModel } from '../../support/test-models.ts';
import { llamaLogits } from './llama-oracle.ts';

const TYPES: TensorType[] = ['F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K'];

describe.each(TYPES)('output.weight %s', (type) => {
  test('dequantizes to what llama.cpp computes from the same file', async () => {
    const model = await makeTestModel({ arch: 'llama', type: 'F32', outputType: type, layers: 1, probe: true, seed: 7 });
    const hidden = model.options.hidden;
    const gguf = await readGguf(await openAsBlob(model.ggufPath));
    const info = ggufTensor(gguf, 'output.weight');
    expect(info.type).toBe(type);
    const bytes = await gguf.source.read(info.offset, info.byteLength);
    const reference = dequantizeGguf(type, bytes);
    const [vocab] = info.shape;
    expect(reference.length).toBe(vocab * hidden);
    // The GPU layout dequantizes to the same values.
    const fromGpuLayout = dequantizeGpuLayout(type, toGpuLayout(type, bytes), reference.length);
    expect(fromGpuLayout.length).toBe(reference.length);
    expect(fromGpuLayout.findIndex((x, i) => x !== reference[i])).toBe(-1);

    const tokens = Array.from({ length: hidden }, (_, t) => t);
    const logits = await llamaLogits(model.ggufPath, tokens);
    let maxAbs = 0;
    let maxErr = 0;
    for (const t of tokens) {
      for (let v = 0; v < vocab; v++) {
        const expected = reference[v * hidden + t];
        maxAbs = Math.max(maxAbs, Math.abs(expected));
        maxErr = Math.max(maxErr, Math.abs(logits[t][v] - expected));
      }
    }
    // llama.cpp quantizes the activation e_t for the dot product (Q8_0 with an f16 scale for Q8_0/Q4_0,
    // Q8_K for K-quants; F16/BF16 matmuls may round it to the weight type), so allow 2e-3 relative.
    expect(maxAbs).toBeGreaterThan(0.1);
    expect(maxErr).toBeLessThanOrEqual(2e-3 * maxAbs);
  });
});
