// Random weights of any format of src/common/weight-formats.ts, for kernel tests (browser-safe): file-layout
// blocks with every byte random but the f16 fields (kept finite), their GPU layout and their values through the
// CPU reference (src/model/dequantize.ts, itself checked against ggml in test/unit/model/weight-formats.test.ts).
import { WEIGHT_FORMAT, type WeightFormatName } from '../../src/common/weight-formats.ts';
import { dequantizeGguf, toGpuLayout } from '../../src/model/dequantize.ts';
import { floatToHalf } from '../../src/model/tensor-types.ts';

/** Random file-layout blocks of a format: every byte random, the f16 fields finite (random in ±2^-4 .. ±2), E8M0 scales moderate. */
export function randomFileBlocks(name: WeightFormatName, blocks: number, random: () => number): Uint8Array {
  const f = WEIGHT_FORMAT[name];
  const out = new Uint8Array(blocks * f.fileBlockBytes);
  for (let i = 0; i < out.length; i++) out[i] = Math.floor(random() * 256);
  for (let b = 0; b < blocks; b++) {
    for (const at of f.halfFields) {
      const h = floatToHalf((random() < 0.5 ? -1 : 1) * 2 ** (random() * 5 - 4));
      out[b * f.fileBlockBytes + at] = h & 255;
      out[b * f.fileBlockBytes + at + 1] = h >> 8;
    }
    // E8M0 scales 2^(e - 128) in 2^-6 .. 2^0 (the extremes, subnormal and overflowing, are hand-built cases).
    for (const at of f.e8m0Fields ?? []) out[b * f.fileBlockBytes + at] = 122 + Math.floor(random() * 7);
  }
  return out;
}

/** `rows` x `k` random weights of a block format: GPU-layout bytes, the values, the GPU bytes of one row. */
export function randomGpuRows(name: WeightFormatName, rows: number, k: number, random: () => number): { bytes: Uint8Array; values: Float32Array; rowBytes: number } {
  const f = WEIGHT_FORMAT[name];
  if (k % f.blockElements !== 0) throw new Error(`k = ${k} is not a multiple of the ${name} block (${f.blockElements})`);
  const file = randomFileBlocks(name, (rows * k) / f.blockElements, random);
  const bytes = toGpuLayout(name, file);
  return { bytes, values: dequantizeGguf(name, file), rowBytes: (k / f.blockElements) * f.gpuBlockBytes };
}
