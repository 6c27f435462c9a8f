// The CPU reference dequantizer (src/model/dequantize.ts) of every weight format against llama.cpp's own
// dequantization (ggml's to_float, called through ctypes: test/support/ggml-oracle.ts) on random blocks, bit
// for bit; the GPU layout round trip; and a hand-built block per format with values worked out by hand from the
// block layout, so that a nibble, a high bit or a scale read from the wrong place fails here.
import { describe, expect, test } from 'vitest';
import { IQ4_VALUES, WEIGHT_FORMAT, WEIGHT_FORMATS, qhByByte, qhFromByByte, type WeightFormatName } from '../../../src/common/weight-formats.ts';
import { dequantizeGguf, dequantizeGpuLayout, toGpuLayout } from '../../../src/model/dequantize.ts';
import { floatToHalf, tensorTypeFromGgml } from '../../../src/model/tensor-types.ts';
import { randomFileBlocks } from '../../gpu/weight-format-blocks.ts';
import { openAsBlob } from 'node:fs';
import { readGguf } from '../../../src/model/gguf.ts';
import { ggmlDequantize, llamaQuantize } from '../../support/ggml-oracle.ts';
import { makeTestModel } from '../../support/test-models.ts';
import { seededRandom } from '../../support/kernel-reference.ts';

const BLOCK_FORMATS = WEIGHT_FORMATS.filter((f) => f.blockElements > 1 || f.name !== 'F32').map((f) => f.name);

describe('every format against ggml', () => {
  test('dequantize.ts equals ggml to_float bit for bit on random blocks; the GPU layout dequantizes the same', () => {
    const random = seededRandom(1234);
    const cases = BLOCK_FORMATS.map((name) => {
      const f = WEIGHT_FORMAT[name];
      const blocks = Math.max(8, 2048 / f.blockElements);
      return { name, bytes: randomFileBlocks(name, blocks, random), elements: blocks * f.blockElements };
    });
    const ggml = ggmlDequantize(cases.map((c) => ({ type: WEIGHT_FORMAT[c.name].ggmlType, bytes: c.bytes, elements: c.elements })));
    cases.forEach((c, i) => {
      const ours = dequantizeGguf(c.name, c.bytes);
      expect(ours.length, c.name).toBe(c.elements);
      const bad = ours.findIndex((v, j) => !Object.is(v, ggml[i][j]) && !(Number.isNaN(v) && Number.isNaN(ggml[i][j])));
      expect(bad === -1 ? null : { format: c.name, index: bad, ours: ours[bad], ggml: ggml[i][bad] }).toBeNull();
      const gpu = dequantizeGpuLayout(c.name, toGpuLayout(c.name, c.bytes), c.elements);
      expect(gpu.findIndex((v, j) => !Object.is(v, ours[j])), c.name).toBe(-1);
      const gpuBytes = toGpuLayout(c.name, c.bytes).byteLength;
      expect(gpuBytes % 4, c.name).toBe(0);
    });
  });
});

/** A block of `format` from field writes: [byte offset, bytes]. */
function block(name: WeightFormatName, fields: [number, number[]][]): Uint8Array {
  const out = new Uint8Array(WEIGHT_FORMAT[name].fileBlockBytes);
  for (const [at, bytes] of fields) out.set(bytes, at);
  return out;
}
const f16 = (v: number): number[] => {
  const h = floatToHalf(v);
  return [h & 255, h >> 8];
};
const fill = (length: number, byte: number): number[] => new Array<number>(length).fill(byte);

// Hand-worked values: each case sets a few fields to distinct values and lists weights whose value follows from
// the format's layout (weight index -> value).
const HAND_BUILT: { name: WeightFormatName; bytes: Uint8Array; expected: [number, number][] }[] = [
  // Q4_1: d 0.5, m -1; qs[3] = 0x52: weight 3 = 0.5*2 - 1, weight 19 = 0.5*5 - 1.
  { name: 'Q4_1', bytes: block('Q4_1', [[0, f16(0.5)], [2, f16(-1)], [4 + 3, [0x52]]]), expected: [[3, 0], [19, 1.5], [0, -1]] },
  // Q5_0: d 2; qh bit 5 and bit 21 set; qs[5] = 0x3a: weight 5 = 2*((10 | 16) - 16), weight 21 = 2*((3 | 16) - 16).
  { name: 'Q5_0', bytes: block('Q5_0', [[0, f16(2)], [2, [0x20, 0, 0x20, 0]], [6 + 5, [0x3a]]]), expected: [[5, 20], [21, 6], [4, -32], [20, -32]] },
  // Q5_1: d 1, m 0.25; qh bit 30 set; qs[14] = 0x70: weight 14 = 0 + .25, weight 30 = (7 | 16) + .25.
  { name: 'Q5_1', bytes: block('Q5_1', [[0, f16(1)], [2, f16(0.25)], [4, [0, 0, 0, 0x40]], [8 + 14, [0x70]]]), expected: [[14, 0.25], [30, 23.25], [31, 0.25]] },
  // IQ4_NL: d 0.5; qs[0] = 0xf0: weight 0 = 0.5*-127, weight 16 = 0.5*113.
  { name: 'IQ4_NL', bytes: block('IQ4_NL', [[0, f16(0.5)], [2, [0xf0, 0x89]]]), expected: [[0, -63.5], [16, 56.5], [1, 0.5 * IQ4_VALUES[9]], [17, 0.5 * IQ4_VALUES[8]]] },
  // MXFP4: e 130 (d = 2^(130 - 128) = 4, the doubled codes' scale); qs[3] = 0x9e: weight 3 = 4*-8, weight 19 = 4*-1.
  { name: 'MXFP4', bytes: block('MXFP4', [[0, [130]], [1 + 3, [0x9e]]]), expected: [[3, -32], [19, -4], [0, 0]] },
  // MXFP4, e 1: the subnormal scale 2^-127; qs[0] = 0x07: weight 0 = 12 * 2^-127, weight 16 = 0.
  { name: 'MXFP4', bytes: block('MXFP4', [[0, [1]], [1, [0x07]]]), expected: [[0, 12 * 2 ** -127], [16, 0]] },
  // MXFP4, e 255: scale 2^127; qs[0] = 0x71: weight 0 = 2^127, weight 16 = 12 * 2^127 overflows f32 to +inf (as ggml).
  { name: 'MXFP4', bytes: block('MXFP4', [[0, [255]], [1, [0x71]]]), expected: [[0, 2 ** 127], [16, Infinity], [1, 0]] },
  // Q2_K: scales[5] = 0x73 (scale 3, min 7), d 0.5, dmin 0.25; weight 80..95 is sub-block 5 = n 0, j 2, h 1:
  // bits 4-5 of qs[16 + l]; qs[16 + 1] = 0x20 -> weight 81 = 0.5*3*2 - 0.25*7.
  { name: 'Q2_K', bytes: block('Q2_K', [[5, [0x73]], [16 + 17, [0x20]], [80, f16(0.5)], [82, f16(0.25)]]), expected: [[81, 1.25], [80, -1.75], [17, 0]] },
  // Q3_K: d 1; scale 9 (sub-block 9: weights 144..159 = n 1, j 0, h 1): low nibble = high nibble of scales[1],
  // top bits = bits 4-5 of scales[8 + 1]; set scales[1] = 0x50, scales[9] = 0x20 -> (5 | 2 << 4) - 32 = 5.
  // Weight 145: qs[32 + 16 + 1] bits 0-1 = 3; hmask[17] bit 4 set -> 5 * 3; weight 146: no bits -> 5 * (0 - 4);
  // weight 17 (sub-block 1: scale 0 - 32; qs[17] = 0, hmask[17] bit 0 clear) -> -32 * (0 - 4).
  {
    name: 'Q3_K',
    bytes: block('Q3_K', [[17, [0x10]], [32 + 49, [0x03]], [96 + 1, [0x50]], [96 + 9, [0x20]], [108, f16(1)]]),
    expected: [[145, 15], [146, -20], [17, -32 * -4]],
  },
  // Q5_K: d 1, dmin 0.5; sub-block 3 (weights 96..127 = c 1, h 1): scale = scales[3] & 63, min = scales[7] & 63;
  // weight 100: high nibble of qs[32 + 4], fifth bit = bit 3 of qh[4].
  {
    name: 'Q5_K',
    bytes: block('Q5_K', [[0, f16(1)], [2, f16(0.5)], [4 + 3, [5]], [4 + 7, [6]], [16 + 4, [0x08]], [48 + 36, [0x90]]]),
    expected: [[100, 5 * (9 | 16) - 3], [101, -3], [36, 0]],
  },
  // IQ4_XS: d 0.25; sub-block 5: scale low nibble = high nibble of scales_l[2], top bits = bits 10-11 of
  // scales_h; scales_l[2] = 0x30, scales_h = 0x0800 -> (3 | 2 << 4) - 32 = 3; qs[80 + 2] = 0x1e: weight 162 =
  // 0.25*3*IQ4_VALUES[14], weight 178 = 0.25*3*IQ4_VALUES[1].
  {
    name: 'IQ4_XS',
    bytes: block('IQ4_XS', [[0, f16(0.25)], [2, [0x00, 0x08]], [4 + 2, [0x30]], [8 + 82, [0x1e]], [8, fill(16, 0x88)]]),
    expected: [[162, 0.75 * IQ4_VALUES[14]], [178, 0.75 * IQ4_VALUES[1]], [0, -8 * IQ4_VALUES[8]]],
  },
];

describe.each(HAND_BUILT)('$name hand-built block', ({ name, bytes, expected }) => {
  test('dequantizes to the hand-worked values, in the file and the GPU layout, as ggml does', () => {
    const ours = dequantizeGguf(name, bytes);
    const gpu = dequantizeGpuLayout(name, toGpuLayout(name, bytes), ours.length);
    const [ggml] = ggmlDequantize([{ type: WEIGHT_FORMAT[name].ggmlType, bytes, elements: ours.length }]);
    for (const [index, value] of expected) {
      expect(ours[index], `${name} weight ${index}`).toBe(value);
      expect(gpu[index], `${name} weight ${index} (GPU layout)`).toBe(value);
      expect(ggml[index], `${name} weight ${index} (ggml)`).toBe(value);
    }
  });
});

describe("Q5_0/Q5_1 fifth bits by byte (the GPU layout's word 1)", () => {
  test('weight 4g + i\'s bit goes to byte i, bit g: in the byte of the qs word that holds its nibble', () => {
    for (let weight = 0; weight < 32; weight++) {
      const g = weight >> 2;
      const i = weight & 3;
      expect(qhByByte(2 ** weight), `weight ${weight}`).toBe(2 ** (8 * i + g));
      expect(qhFromByByte(2 ** (8 * i + g)), `weight ${weight}`).toBe(2 ** weight);
    }
  });
  test('the moves are inverse on random words, and toGpuLayout writes them', () => {
    const random = seededRandom(5);
    for (let n = 0; n < 200; n++) {
      const qh = Math.floor(random() * 2 ** 32) >>> 0;
      expect(qhFromByByte(qhByByte(qh))).toBe(qh);
    }
    // A Q5_1 block with qh = bit 5 (weight 5 = 4·1 + 1): GPU word 1 has bit 8·1 + 1.
    const block = new Uint8Array(24);
    block[4] = 1 << 5;
    const gpu = new DataView(toGpuLayout('Q5_1', block).buffer);
    expect(gpu.getUint32(4, true)).toBe(1 << 9);
  });
});

describe('types refused at load', () => {
  test.each([
    [16, 'IQ2_XXS'], [19, 'IQ1_S'], [18, 'IQ3_XXS'], [21, 'IQ3_S'], [29, 'IQ1_M'], [34, 'TQ1_0'], [35, 'TQ2_0'], [15, 'Q8_K'], [77, 'ggml type 77'],
  ])('ggml type %d is refused naming the tensor and %s', (id, name) => {
    expect(() => tensorTypeFromGgml(id, 'blk.3.ffn_down.weight')).toThrow(`Tensor "blk.3.ffn_down.weight" has unsupported type ${name}`);
  });
  test.each(WEIGHT_FORMATS.map((f) => [f.ggmlType, f.name] as const))('ggml type %d loads as %s', (id, name) => {
    expect(tensorTypeFromGgml(id, 'w')).toBe(name);
  });
});

describe('files llama-quantize writes in types this runtime does not load', () => {
  test.each(['TQ1_0', 'TQ2_0'] as const)('a %s file is refused at load naming a tensor and the type', async (ftype) => {
    const model = await makeTestModel({ arch: 'llama', type: 'F32', seed: 21, hidden: 256, intermediate: 768, heads: 4, kvHeads: 2, layers: 1 });
    const path = llamaQuantize(model.ggufPath, ftype);
    await expect(readGguf(await openAsBlob(path))).rejects.toThrow(new RegExp(`Tensor "(blk\\.0|token_embd|output)[a-z_.]*weight" has unsupported type ${ftype}`));
  });
});
