// Conversion of tensor bytes from the file layout to the GPU layout (the table of weight formats,
// src/common/weight-formats.ts, says how each block's fields move), and the TypeScript dequantization
// reference of every format: what the WGSL decoders must compute, and what tests compare GPU read-backs and
// llama.cpp against. One reference per format, on the file layout; the GPU layout is mapped back to it.

import { IQ4_VALUES, MXFP4_VALUES, WEIGHT_FORMAT, qhByByte, qhFromByByte } from '../common/weight-formats.ts';
import {
  TENSOR_TYPE_LAYOUTS,
  floatToHalf,
  halfToFloat,
  type TensorType,
} from './tensor-types.ts';

function blockCount(type: TensorType, byteLength: number, blockBytes: number, what: string): number {
  if (byteLength % blockBytes !== 0) {
    throw new Error(`${what}: ${byteLength} bytes is not a whole number of ${type} blocks of ${blockBytes} bytes`);
  }
  return byteLength / blockBytes;
}

/**
 * File bytes (GGUF / safetensors layout) of whole blocks to GPU-layout bytes. Works per chunk: feed it any
 * run of whole blocks (whole elements for plain types). F16 chunks of an odd element count are padded to 4
 * bytes, so chunk F16 data on an even element count except at the end. `gpuType` is the format's GPU format, or
 * F32 for F16 (widened; exact), as BF16 always is.
 */
export function toGpuLayout(type: TensorType, bytes: Uint8Array, gpuType: TensorType = WEIGHT_FORMAT[type].gpuFormat): Uint8Array {
  const format = WEIGHT_FORMAT[type];
  const blocks = blockCount(type, bytes.byteLength, format.fileBlockBytes, 'toGpuLayout');
  if (gpuType !== format.gpuFormat && !(type === 'F16' && gpuType === 'F32')) {
    throw new Error(`toGpuLayout: ${type} loads as ${format.gpuFormat}${type === 'F16' ? ' or F32' : ''}, not ${gpuType}`);
  }
  if (gpuType === 'F32' && type !== 'F32') return new Uint8Array(dequantizeFileLayout(type, bytes).buffer);
  if (format.repack.length === 0) {
    if (bytes.byteLength % 4 === 0) return bytes;
    const out = new Uint8Array((bytes.byteLength + 3) & ~3);
    out.set(bytes);
    return out;
  }
  const fb = format.fileBlockBytes;
  const gb = format.gpuBlockBytes;
  const out = new Uint8Array(blocks * gb);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    for (const [from, length, to, convert] of format.repack) {
      const at = b * fb + from;
      if (convert === 'f16 to f32') view.setFloat32(b * gb + to, halfToFloat(bytes[at] | (bytes[at + 1] << 8)), true);
      else if (convert === 'qh by byte') view.setUint32(b * gb + to, qhByByte(bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)), true);
      else out.set(bytes.subarray(at, at + length), b * gb + to);
    }
  }
  return out;
}

/** The f32 values of `count` 16-bit floats (BF16: its bits moved up; F16: one table lookup each, exact). */
function widened(type: 'F16' | 'BF16', bytes: Uint8Array, count: number): Float32Array {
  const halves = bytes.byteOffset % 2 === 0 ? new Uint16Array(bytes.buffer, bytes.byteOffset, count) : new Uint16Array(bytes.slice(0, count * 2).buffer);
  const out = new Float32Array(count);
  if (type === 'BF16') {
    const bits = new Uint32Array(out.buffer);
    for (let i = 0; i < count; i++) bits[i] = halves[i] << 16;
    return out;
  }
  const table = (halfTable ??= Float32Array.from({ length: 0x10000 }, (_, h) => halfToFloat(h)));
  for (let i = 0; i < count; i++) out[i] = table[halves[i]];
  return out;
}
let halfTable: Float32Array | undefined;

/** GPU-layout bytes of whole blocks back to the file layout (the inverse of toGpuLayout for block types). */
function fromGpuLayout(type: TensorType, bytes: Uint8Array): Uint8Array {
  const format = WEIGHT_FORMAT[type];
  if (format.repack.length === 0) return bytes;
  const fb = format.fileBlockBytes;
  const gb = format.gpuBlockBytes;
  const blocks = blockCount(type, bytes.byteLength, gb, 'dequantize');
  const out = new Uint8Array(blocks * fb);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < blocks; b++) {
    for (const [from, length, to, convert] of format.repack) {
      if (convert === 'f16 to f32') {
        // Exact: the f32 was widened from an f16.
        const half = floatToHalf(view.getFloat32(b * gb + to, true));
        out[b * fb + from] = half & 0xff;
        out[b * fb + from + 1] = half >> 8;
      } else if (convert === 'qh by byte') {
        const qh = qhFromByByte(view.getUint32(b * gb + to, true));
        for (let i = 0; i < 4; i++) out[b * fb + from + i] = (qh >>> (8 * i)) & 0xff;
      } else out.set(bytes.subarray(b * gb + to, b * gb + to + length), b * fb + from);
    }
  }
  return out;
}

/** Dequantize GGUF/safetensors-layout bytes (whole blocks) of `type` to f32. */
export function dequantizeGguf(type: TensorType, bytes: Uint8Array): Float32Array {
  return dequantizeFileLayout(type, bytes);
}

/** Dequantize GPU-layout bytes (whole blocks, see tensor-types.ts) of `type` to f32. */
export function dequantizeGpuLayout(type: TensorType, bytes: Uint8Array, elements: number): Float32Array {
  const layout = TENSOR_TYPE_LAYOUTS[type];
  if (layout.gpuType === 'F32') return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + elements * 4));
  if (type === 'F16') return dequantizeFileLayout(type, bytes.subarray(0, elements * 2));
  const used = (elements / layout.blockElements) * layout.gpuBlockBytes;
  return dequantizeFileLayout(type, fromGpuLayout(type, bytes.subarray(0, used)));
}

/**
 * The 16 six-bit scales of a Q3_K super-block whose 12 scale bytes start at `at`, minus 32: scale i takes its
 * low 4 bits from byte i (i < 8, low nibble) or i - 8 (high nibble), its top 2 bits from byte 8 + i % 4 at bit
 * 2 * floor(i / 4).
 */
export function q3kScales(bytes: Uint8Array, at: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < 16; i++) {
    const low = i < 8 ? bytes[at + i] & 15 : bytes[at + i - 8] >> 4;
    const high = (bytes[at + 8 + (i % 4)] >> (2 * Math.floor(i / 4))) & 3;
    out.push((low | (high << 4)) - 32);
  }
  return out;
}

/** Reads the fields of file-layout blocks: little-endian u16, i8 and f16 at a byte offset. */
interface BlockBytes {
  bytes: Uint8Array;
  u16(o: number): number;
  i8(o: number): number;
  half(o: number): number;
}

function blockBytes(bytes: Uint8Array): BlockBytes {
  const u16 = (o: number) => bytes[o] | (bytes[o + 1] << 8);
  return { bytes, u16, i8: (o) => (bytes[o] << 24) >> 24, half: (o) => halfToFloat(u16(o)) };
}

/** Writes the f32 weights of the block at byte `o` to `out` from element `at` on. */
type BlockDequantizer = (src: BlockBytes, o: number, out: Float32Array, at: number) => void;

// Every product below is exact in f32 (small integers times an f16 and a few-bit scale): only the final
// addition rounds, as in the f32 arithmetic of the GPU decoders and of ggml.

function dequantizeQ8_0({ half, i8 }: BlockBytes, o: number, out: Float32Array, at: number): void {
  const d = half(o);
  for (let j = 0; j < 32; j++) out[at + j] = d * i8(o + 2 + j);
}

/** e (an E8M0 exponent: the scale is 2^(e - 127), halved as the codes are doubled), then 16 bytes as Q4_0. */
function dequantizeMxfp4({ bytes }: BlockBytes, o: number, out: Float32Array, at: number): void {
  const d = 2 ** (bytes[o] - 128);
  for (let j = 0; j < 16; j++) {
    const q = bytes[o + 1 + j];
    out[at + j] = MXFP4_VALUES[q & 15] * d;
    out[at + j + 16] = MXFP4_VALUES[q >> 4] * d;
  }
}

/**
 * Q4_0, Q4_1, IQ4_NL: d (and for Q4_1 the min m), then 16 bytes: weight j < 16 the low nibble of byte j, j + 16
 * its high nibble.
 */
function fourBitDequantizer(type: 'Q4_0' | 'Q4_1' | 'IQ4_NL'): BlockDequantizer {
  const qs = type === 'Q4_1' ? 4 : 2;
  return ({ bytes, half }, o, out, at) => {
    const d = half(o);
    const m = type === 'Q4_1' ? half(o + 2) : 0;
    const value = (q: number) => (type === 'Q4_0' ? d * (q - 8) : type === 'Q4_1' ? d * q + m : d * IQ4_VALUES[q]);
    for (let j = 0; j < 16; j++) {
      const q = bytes[o + qs + j];
      out[at + j] = value(q & 15);
      out[at + j + 16] = value(q >> 4);
    }
  };
}

/** Q5_0, Q5_1: d (m), qh (32 bits: bit j is weight j's fifth bit), 16 bytes of low nibbles as Q4_0. */
function fiveBitDequantizer(type: 'Q5_0' | 'Q5_1'): BlockDequantizer {
  const one = type === 'Q5_1';
  const qh = one ? 4 : 2;
  return ({ bytes, half }, o, out, at) => {
    const d = half(o);
    const m = one ? half(o + 2) : 0;
    const high = (bytes[o + qh] | (bytes[o + qh + 1] << 8) | (bytes[o + qh + 2] << 16) | (bytes[o + qh + 3] << 24)) >>> 0;
    for (let j = 0; j < 32; j++) {
      const byte = bytes[o + qh + 4 + (j % 16)];
      const q = (j < 16 ? byte & 15 : byte >> 4) | (((high >>> j) & 1) << 4);
      out[at + j] = one ? d * q + m : d * (q - 16);
    }
  };
}

/**
 * scales[16], qs[64], d, dmin. Weight e: sub-block s = e / 16 (scale: low nibble of scales[s], min: high
 * nibble); 2 bits at 2j of qs[32n + 16h + l] for e = 128n + 32j + 16h + l.
 */
function dequantizeQ2K({ bytes, half }: BlockBytes, o: number, out: Float32Array, at: number): void {
  const d = half(o + 80);
  const dmin = half(o + 82);
  for (let e = 0; e < 256; e++) {
    const s = e >> 4;
    const n = e >> 7;
    const j = (e >> 5) & 3;
    const h = (e >> 4) & 1;
    const l = e & 15;
    const q = (bytes[o + 16 + 32 * n + 16 * h + l] >> (2 * j)) & 3;
    const sc = bytes[o + s];
    out[at + e] = d * (sc & 15) * q - dmin * (sc >> 4);
  }
}

/**
 * hmask[32], qs[64], scales[12], d. Weight e = 128n + 32j + 16h + l: 2 bits at 2j of qs[32n + 16h + l], minus 4
 * unless bit 4n + j of hmask[16h + l] is set; sub-block scale e / 16.
 */
function dequantizeQ3K({ bytes, half }: BlockBytes, o: number, out: Float32Array, at: number): void {
  const d = half(o + 108);
  const scales = q3kScales(bytes, o + 96);
  for (let e = 0; e < 256; e++) {
    const n = e >> 7;
    const j = (e >> 5) & 3;
    const h = (e >> 4) & 1;
    const l = e & 15;
    const low = (bytes[o + 32 + 32 * n + 16 * h + l] >> (2 * j)) & 3;
    const hbit = (bytes[o + 16 * h + l] >> (4 * n + j)) & 1;
    out[at + e] = d * scales[e >> 4] * (low - (hbit ? 0 : 4));
  }
}

/**
 * Q4_K, Q5_K: d, dmin, scales[12], (Q5_K: qh[32]), qs[128]. Weight e = 64c + 32h + l: nibble h of qs[32c + l]
 * (Q5_K: plus bit 2c + h of qh[l] as 16), sub-block 2c + h.
 */
function kQuantDequantizer(type: 'Q4_K' | 'Q5_K'): BlockDequantizer {
  const five = type === 'Q5_K';
  const qs = five ? 48 : 16;
  return ({ bytes, half }, o, out, at) => {
    const d = half(o);
    const dmin = half(o + 2);
    for (let e = 0; e < 256; e++) {
      const c = e >> 6;
      const h = (e >> 5) & 1;
      const l = e & 31;
      const byte = bytes[o + qs + 32 * c + l];
      let q = h ? byte >> 4 : byte & 15;
      if (five) q |= ((bytes[o + 16 + l] >> (2 * c + h)) & 1) << 4;
      const [sc, m] = q4kScaleMin(bytes, o + 4, 2 * c + h);
      out[at + e] = d * sc * q - dmin * m;
    }
  };
}

function dequantizeQ6K({ bytes, half, i8 }: BlockBytes, o: number, out: Float32Array, at: number): void {
  const d = half(o + 208);
  for (let n = 0; n < 2; n++) {
    const ql = o + n * 64;
    const qh = o + 128 + n * 32;
    const sc = o + 192 + n * 8;
    const base = at + n * 128;
    for (let l = 0; l < 32; l++) {
      const is = l >> 4;
      const h = bytes[qh + l];
      const q1 = ((bytes[ql + l] & 15) | ((h & 3) << 4)) - 32;
      const q2 = ((bytes[ql + l + 32] & 15) | (((h >> 2) & 3) << 4)) - 32;
      const q3 = ((bytes[ql + l] >> 4) | (((h >> 4) & 3) << 4)) - 32;
      const q4 = ((bytes[ql + l + 32] >> 4) | (((h >> 6) & 3) << 4)) - 32;
      out[base + l] = d * i8(sc + is) * q1;
      out[base + l + 32] = d * i8(sc + is + 2) * q2;
      out[base + l + 64] = d * i8(sc + is + 4) * q3;
      out[base + l + 96] = d * i8(sc + is + 6) * q4;
    }
  }
}

/**
 * d, scales_h (2 bits per sub-block), scales_l[4] (a nibble per sub-block), qs[128]; sub-block s of 32: scale 6
 * bits minus 32, its 16 bytes qs[16s ..] hold weights 32s + j (low nibble) and 32s + 16 + j (high).
 */
function dequantizeIq4Xs({ bytes, half, u16 }: BlockBytes, o: number, out: Float32Array, at: number): void {
  const d = half(o);
  const scalesHigh = u16(o + 2);
  for (let s = 0; s < 8; s++) {
    const ls = ((bytes[o + 4 + (s >> 1)] >> (4 * (s & 1))) & 15) | (((scalesHigh >> (2 * s)) & 3) << 4);
    const scale = d * (ls - 32);
    for (let j = 0; j < 16; j++) {
      const q = bytes[o + 8 + 16 * s + j];
      out[at + 32 * s + j] = scale * IQ4_VALUES[q & 15];
      out[at + 32 * s + 16 + j] = scale * IQ4_VALUES[q >> 4];
    }
  }
}

/** The per-block dequantizer of every block format (F32 is copied as it is; F16 and BF16 are widened). */
const BLOCK_DEQUANTIZERS: Readonly<Record<Exclude<TensorType, 'F32' | 'F16' | 'BF16'>, BlockDequantizer>> = {
  Q8_0: dequantizeQ8_0,
  MXFP4: dequantizeMxfp4,
  Q4_0: fourBitDequantizer('Q4_0'),
  Q4_1: fourBitDequantizer('Q4_1'),
  IQ4_NL: fourBitDequantizer('IQ4_NL'),
  Q5_0: fiveBitDequantizer('Q5_0'),
  Q5_1: fiveBitDequantizer('Q5_1'),
  Q2_K: dequantizeQ2K,
  Q3_K: dequantizeQ3K,
  Q4_K: kQuantDequantizer('Q4_K'),
  Q5_K: kQuantDequantizer('Q5_K'),
  Q6_K: dequantizeQ6K,
  IQ4_XS: dequantizeIq4Xs,
};

function dequantizeFileLayout(type: TensorType, bytes: Uint8Array): Float32Array {
  const layout = TENSOR_TYPE_LAYOUTS[type];
  const blocks = blockCount(type, bytes.byteLength, layout.fileBlockBytes, 'dequantize');
  if (type === 'F32') return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  if (type === 'F16' || type === 'BF16') return widened(type, bytes, blocks);
  const out = new Float32Array(blocks * layout.blockElements);
  const dequantizeBlock = BLOCK_DEQUANTIZERS[type];
  const src = blockBytes(bytes);
  for (let b = 0; b < blocks; b++) dequantizeBlock(src, b * layout.fileBlockBytes, out, b * layout.blockElements);
  return out;
}

/** The 6-bit scale and min of sub-block j (0..7) of a Q4_K super-block whose 12 scale bytes start at `at`. */
export function q4kScaleMin(bytes: Uint8Array, at: number, j: number): [number, number] {
  if (j < 4) return [bytes[at + j] & 63, bytes[at + j + 4] & 63];
  return [
    (bytes[at + j + 4] & 15) | ((bytes[at + j - 4] >> 6) << 4),
    (bytes[at + j + 4] >> 4) | ((bytes[at + j] >> 6) << 4),
  ];
}
