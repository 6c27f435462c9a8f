// Conversion of tensor bytes from the file layout to the GPU layout (see tensor-types.ts), and TypeScript
// dequantization references for both layouts: what the WGSL kernels must compute, and what tests compare
// GPU read-backs and llama.cpp against.

import {
  TENSOR_TYPE_LAYOUTS,
  bf16ToFloat,
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
 * bytes, so chunk F16 data on an even element count except at the end.
 */
export function toGpuLayout(type: TensorType, bytes: Uint8Array): Uint8Array {
  const layout = TENSOR_TYPE_LAYOUTS[type];
  const blocks = blockCount(type, bytes.byteLength, layout.fileBlockBytes, 'toGpuLayout');
  switch (type) {
    case 'F32':
    case 'Q4_K':
      return bytes;
    case 'F16': {
      if (bytes.byteLength % 4 === 0) return bytes;
      const out = new Uint8Array(bytes.byteLength + 2);
      out.set(bytes);
      return out;
    }
    case 'BF16': {
      const out = new Float32Array(blocks);
      for (let i = 0; i < blocks; i++) out[i] = bf16ToFloat(bytes[2 * i] | (bytes[2 * i + 1] << 8));
      return new Uint8Array(out.buffer);
    }
    case 'Q8_0':
    case 'Q4_0':
    case 'Q6_K': {
      // Q8_0/Q4_0: insert 2 zero bytes after the f16 d; Q6_K: append 2 zero bytes.
      const out = new Uint8Array(blocks * layout.gpuBlockBytes);
      const fb = layout.fileBlockBytes;
      const gb = layout.gpuBlockBytes;
      for (let b = 0; b < blocks; b++) {
        const src = b * fb;
        const dst = b * gb;
        if (type === 'Q6_K') {
          out.set(bytes.subarray(src, src + fb), dst);
        } else {
          out[dst] = bytes[src];
          out[dst + 1] = bytes[src + 1];
          out.set(bytes.subarray(src + 2, src + fb), dst + 4);
        }
      }
      return out;
    }
  }
}

/** Dequantize GGUF/safetensors-layout bytes (whole blocks) of `type` to f32. */
export function dequantizeGguf(type: TensorType, bytes: Uint8Array): Float32Array {
  return dequantizeLayout(type, bytes, false);
}

/** Dequantize GPU-layout bytes (whole blocks, see tensor-types.ts) of `type` to f32. */
export function dequantizeGpuLayout(type: TensorType, bytes: Uint8Array, elements: number): Float32Array {
  const layout = TENSOR_TYPE_LAYOUTS[type];
  if (layout.gpuType === 'F32') return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + elements * 4));
  const used = (elements / layout.blockElements) * layout.gpuBlockBytes;
  return dequantizeLayout(type, bytes.subarray(0, used), true);
}

function dequantizeLayout(type: TensorType, bytes: Uint8Array, gpu: boolean): Float32Array {
  const layout = TENSOR_TYPE_LAYOUTS[type];
  const blockBytes = gpu ? layout.gpuBlockBytes : layout.fileBlockBytes;
  const blocks = blockCount(type, bytes.byteLength, blockBytes, 'dequantize');
  const out = new Float32Array(blocks * layout.blockElements);
  const u16 = (o: number) => bytes[o] | (bytes[o + 1] << 8);
  const i8 = (o: number) => (bytes[o] << 24) >> 24;
  switch (type) {
    case 'F32':
      return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    case 'F16':
      for (let i = 0; i < blocks; i++) out[i] = halfToFloat(u16(2 * i));
      return out;
    case 'BF16':
      for (let i = 0; i < blocks; i++) out[i] = bf16ToFloat(u16(2 * i));
      return out;
    case 'Q8_0': {
      const qsOffset = gpu ? 4 : 2;
      for (let b = 0; b < blocks; b++) {
        const o = b * blockBytes;
        const d = halfToFloat(u16(o));
        for (let j = 0; j < 32; j++) out[b * 32 + j] = d * i8(o + qsOffset + j);
      }
      return out;
    }
    case 'Q4_0': {
      const qsOffset = gpu ? 4 : 2;
      for (let b = 0; b < blocks; b++) {
        const o = b * blockBytes;
        const d = halfToFloat(u16(o));
        for (let j = 0; j < 16; j++) {
          const q = bytes[o + qsOffset + j];
          out[b * 32 + j] = d * ((q & 15) - 8);
          out[b * 32 + j + 16] = d * ((q >> 4) - 8);
        }
      }
      return out;
    }
    case 'Q4_K': {
      for (let b = 0; b < blocks; b++) {
        const o = b * blockBytes;
        const d = halfToFloat(u16(o));
        const dmin = halfToFloat(u16(o + 2));
        const scales = o + 4;
        const qs = o + 16;
        for (let chunk = 0; chunk < 4; chunk++) {
          for (let half = 0; half < 2; half++) {
            const [sc, m] = q4kScaleMin(bytes, scales, 2 * chunk + half);
            const scale = d * sc;
            const min = dmin * m;
            const base = b * 256 + chunk * 64 + half * 32;
            for (let l = 0; l < 32; l++) {
              const q = bytes[qs + chunk * 32 + l];
              out[base + l] = scale * (half ? q >> 4 : q & 15) - min;
            }
          }
        }
      }
      return out;
    }
    case 'Q6_K': {
      for (let b = 0; b < blocks; b++) {
        const o = b * blockBytes;
        const d = halfToFloat(u16(o + 208));
        for (let n = 0; n < 2; n++) {
          const ql = o + n * 64;
          const qh = o + 128 + n * 32;
          const sc = o + 192 + n * 8;
          const base = b * 256 + n * 128;
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
      return out;
    }
  }
}

/** The 6-bit scale and min of sub-block j (0..7) of a Q4_K super-block whose 12 scale bytes start at `at`. */
export function q4kScaleMin(bytes: Uint8Array, at: number, j: number): [number, number] {
  if (j < 4) return [bytes[at + j] & 63, bytes[at + j + 4] & 63];
  return [
    (bytes[at + j + 4] & 15) | ((bytes[at + j - 4] >> 6) << 4),
    (bytes[at + j + 4] >> 4) | ((bytes[at + j] >> 6) << 4),
  ];
}
