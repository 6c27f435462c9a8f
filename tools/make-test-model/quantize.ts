// Encoding f32 weights into the file bytes of each tensor type (GGUF block layouts as llama.cpp defines
// them). The quantizers are simple round-to-nearest ones: valid blocks, not llama.cpp's error-optimised
// search, which is all a test model needs.

import { MXFP4_VALUES } from '../../src/common/weight-formats.ts';
import { TENSOR_TYPE_LAYOUTS, floatToBf16, floatToHalf, halfToFloat, type TensorType } from '../../src/model/tensor-types.ts';

/** Encode `values` (a whole number of blocks) as `type` in file layout. */
export function encodeTensor(type: TensorType, values: Float32Array): Uint8Array {
  const layout = TENSOR_TYPE_LAYOUTS[type];
  if (values.length % layout.blockElements !== 0) {
    throw new Error(`${values.length} values is not a whole number of ${type} blocks of ${layout.blockElements}`);
  }
  const blocks = values.length / layout.blockElements;
  const out = new Uint8Array(blocks * layout.fileBlockBytes);
  const view = new DataView(out.buffer);
  switch (type) {
    case 'F32':
      return new Uint8Array(values.slice().buffer);
    case 'F16':
      for (let i = 0; i < values.length; i++) view.setUint16(2 * i, floatToHalf(values[i]), true);
      return out;
    case 'BF16':
      for (let i = 0; i < values.length; i++) view.setUint16(2 * i, floatToBf16(values[i]), true);
      return out;
    case 'Q8_0':
      for (let b = 0; b < blocks; b++) quantizeQ8_0(values.subarray(b * 32, b * 32 + 32), out, view, b * 34);
      return out;
    case 'Q4_0':
      for (let b = 0; b < blocks; b++) quantizeQ4_0(values.subarray(b * 32, b * 32 + 32), out, view, b * 18);
      return out;
    case 'Q4_K':
      for (let b = 0; b < blocks; b++) quantizeQ4_K(values.subarray(b * 256, b * 256 + 256), out, view, b * 144);
      return out;
    case 'Q6_K':
      for (let b = 0; b < blocks; b++) quantizeQ6_K(values.subarray(b * 256, b * 256 + 256), out, view, b * 210);
      return out;
    case 'MXFP4':
      for (let b = 0; b < blocks; b++) quantizeMxfp4(values.subarray(b * 32, b * 32 + 32), out, b * 17);
      return out;
    default:
      // The other formats are written by llama.cpp's own quantizer (../shared/tools/llama-quantize.py, as
      // test/support/llama-quantize.ts runs it) from an F32 model, the way published files are made.
      throw new Error(`make-test-model does not quantize to ${type}: write an F32 model and quantize it with llama-quantize`);
  }
}

function absMax(x: Float32Array): number {
  let m = 0;
  for (const v of x) m = Math.max(m, Math.abs(v));
  return m;
}

/** f16-rounded value of `x` (the scale as the file stores it). */
function roundedHalf(x: number): number {
  return halfToFloat(floatToHalf(x));
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

function quantizeQ8_0(x: Float32Array, out: Uint8Array, view: DataView, at: number): void {
  const d = roundedHalf(absMax(x) / 127);
  view.setUint16(at, floatToHalf(d), true);
  for (let j = 0; j < 32; j++) view.setInt8(at + 2 + j, d === 0 ? 0 : clamp(Math.round(x[j] / d), -127, 127));
}

function quantizeQ4_0(x: Float32Array, out: Uint8Array, view: DataView, at: number): void {
  // As llama.cpp: the value of largest magnitude maps to -8, so d carries its sign.
  let max = 0;
  for (const v of x) if (Math.abs(v) > Math.abs(max)) max = v;
  const d = roundedHalf(max / -8);
  view.setUint16(at, floatToHalf(d), true);
  const q = (v: number) => (d === 0 ? 8 : clamp(Math.round(v / d) + 8, 0, 15));
  for (let j = 0; j < 16; j++) out[at + 2 + j] = q(x[j]) | (q(x[j + 16]) << 4);
}

function quantizeMxfp4(x: Float32Array, out: Uint8Array, at: number): void {
  // As llama.cpp: e = floor(log2(max |x|)) - 2 + 127 (so the largest value lands near code 12 of the doubled
  // codebook, scale 2^(e - 128)), each value to the nearest code.
  let amax = 0;
  for (const v of x) amax = Math.max(amax, Math.abs(v));
  const e = amax > 0 ? clamp(Math.floor(Math.log2(amax)) - 2 + 127, 0, 255) : 0;
  const d = 2 ** (e - 128);
  // The nearest code (ties to the smaller magnitude; 0 rather than -0): magnitudes 0, 1, 2, 3, 4, 6, 8, 12 (codes 0..7)
  // through the midpoints between them, the sign as code + 8.
  const code = (v: number) => {
    const a = Math.abs(v);
    let c = 0;
    while (c < 7 && a > ((MXFP4_VALUES[c] + MXFP4_VALUES[c + 1]) / 2) * d) c++;
    return c > 0 && v < 0 ? c + 8 : c;
  };
  out[at] = e;
  for (let j = 0; j < 16; j++) out[at + 1 + j] = code(x[j]) | (code(x[j + 16]) << 4);
}

function quantizeQ4_K(x: Float32Array, out: Uint8Array, view: DataView, at: number): void {
  // 8 sub-blocks of 32, each value = d*sc*q - dmin*m with 6-bit sc, m and 4-bit q.
  const subScale = new Float32Array(8);
  const subMin = new Float32Array(8);
  for (let s = 0; s < 8; s++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let l = 0; l < 32; l++) {
      lo = Math.min(lo, x[32 * s + l]);
      hi = Math.max(hi, x[32 * s + l]);
    }
    lo = Math.min(lo, 0);
    subScale[s] = (hi - lo) / 15;
    subMin[s] = -lo;
  }
  const d = roundedHalf(Math.max(...subScale) / 63);
  const dmin = roundedHalf(Math.max(...subMin) / 63);
  view.setUint16(at, floatToHalf(d), true);
  view.setUint16(at + 2, floatToHalf(dmin), true);
  const sc = new Uint8Array(8);
  const m = new Uint8Array(8);
  for (let s = 0; s < 8; s++) {
    sc[s] = d === 0 ? 0 : clamp(Math.round(subScale[s] / d), 0, 63);
    m[s] = dmin === 0 ? 0 : clamp(Math.round(subMin[s] / dmin), 0, 63);
  }
  const scales = at + 4;
  for (let j = 0; j < 4; j++) {
    out[scales + j] = sc[j] | ((sc[j + 4] >> 4) << 6);
    out[scales + j + 4] = m[j] | ((m[j + 4] >> 4) << 6);
    out[scales + j + 8] = (sc[j + 4] & 15) | ((m[j + 4] & 15) << 4);
  }
  const qs = at + 16;
  for (let s = 0; s < 8; s++) {
    const scale = d * sc[s];
    const min = dmin * m[s];
    for (let l = 0; l < 32; l++) {
      const q = scale === 0 ? 0 : clamp(Math.round((x[32 * s + l] + min) / scale), 0, 15);
      const byte = qs + (s >> 1) * 32 + l;
      out[byte] |= s & 1 ? q << 4 : q;
    }
  }
}

function quantizeQ6_K(x: Float32Array, out: Uint8Array, view: DataView, at: number): void {
  // 16 sub-blocks of 16, each value = d*sc*q with int8 sc and 6-bit q in [-32, 31].
  const subScale = new Float32Array(16);
  for (let s = 0; s < 16; s++) subScale[s] = absMax(x.subarray(16 * s, 16 * s + 16)) / 31;
  const d = roundedHalf(Math.max(...subScale) / 127);
  const sc = new Int8Array(16);
  for (let s = 0; s < 16; s++) sc[s] = d === 0 ? 0 : clamp(Math.round(subScale[s] / d), -128, 127);
  const Q = new Uint8Array(256);
  for (let i = 0; i < 256; i++) {
    const scale = d * sc[i >> 4];
    Q[i] = (scale === 0 ? 0 : clamp(Math.round(x[i] / scale), -32, 31)) + 32;
  }
  for (let n = 0; n < 2; n++) {
    const ql = at + 64 * n;
    const qh = at + 128 + 32 * n;
    const q = n * 128;
    for (let l = 0; l < 32; l++) {
      out[ql + l] = (Q[q + l] & 15) | ((Q[q + l + 64] & 15) << 4);
      out[ql + l + 32] = (Q[q + l + 32] & 15) | ((Q[q + l + 96] & 15) << 4);
      out[qh + l] = (Q[q + l] >> 4) | ((Q[q + l + 32] >> 4) << 2) | ((Q[q + l + 64] >> 4) << 4) | ((Q[q + l + 96] >> 4) << 6);
    }
  }
  for (let s = 0; s < 16; s++) view.setInt8(at + 192 + s, sc[s]);
  view.setUint16(at + 208, floatToHalf(d), true);
}
