// Tensor element types of GGUF and safetensors files, their byte layouts in the file, and the layout the
// weights take in GPU buffers (what the WGSL kernels read).
//
// GPU layout (fixed; the kernels are coded against it). A matrix of R rows x K columns is stored row after
// row; K is a multiple of the block size for block types, so a row is whole blocks and a block never
// straddles two rows. Every block is padded to a multiple of 4 bytes so that blocks start on a u32.
//   F32   as is (4 bytes per element).
//   F16   raw halves, contiguous: element e sits in u32 e >> 1, the low half holds the even e.
//         The buffer is padded with zero bytes to a multiple of 4.
//   BF16  converted to F32 at load (so F32 in GPU memory).
//   Q8_0  block of 32: f16 d, 2 zero bytes, 32 x int8 qs                  = 36 bytes =  9 u32.
//         value j = d * qs[j].
//   Q4_0  block of 32: f16 d, 2 zero bytes, 16 bytes qs                   = 20 bytes =  5 u32.
//         value j (< 16) = d * ((qs[j] & 15) - 8); value j + 16 = d * ((qs[j] >> 4) - 8).
//   Q4_K  super-block of 256: the 144 bytes as in GGUF: f16 d, f16 dmin, scales[12], qs[128].
//   Q6_K  super-block of 256: the 210 bytes as in GGUF: ql[128], qh[64], int8 scales[16], f16 d,
//         then 2 zero bytes                                                = 212 bytes = 53 u32.
// The exact value formulas are the references in dequantize.ts.

/** Element type ids as GGUF (ggml) numbers them. */
export const GgmlType = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q4_1: 3,
  Q5_0: 6,
  Q5_1: 7,
  Q8_0: 8,
  Q8_1: 9,
  Q2_K: 10,
  Q3_K: 11,
  Q4_K: 12,
  Q5_K: 13,
  Q6_K: 14,
  Q8_K: 15,
  BF16: 30,
} as const;

/** The tensor types this runtime can load. */
export type TensorType = 'F32' | 'F16' | 'BF16' | 'Q8_0' | 'Q4_0' | 'Q4_K' | 'Q6_K';

export const SUPPORTED_TENSOR_TYPES: readonly TensorType[] = ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K'];

export interface TensorTypeLayout {
  type: TensorType;
  ggmlType: number;
  /** Elements per block (1 for plain types). */
  blockElements: number;
  /** Bytes per block in the file (GGUF / safetensors). */
  fileBlockBytes: number;
  /** Bytes per block in the GPU buffer (a multiple of 4 for block types; F16 is 2, padded per buffer). */
  gpuBlockBytes: number;
  /** Type the GPU buffer holds when it differs from the file (BF16 is widened to F32). */
  gpuType: TensorType;
}

export const TENSOR_TYPE_LAYOUTS: Readonly<Record<TensorType, TensorTypeLayout>> = {
  F32: { type: 'F32', ggmlType: GgmlType.F32, blockElements: 1, fileBlockBytes: 4, gpuBlockBytes: 4, gpuType: 'F32' },
  F16: { type: 'F16', ggmlType: GgmlType.F16, blockElements: 1, fileBlockBytes: 2, gpuBlockBytes: 2, gpuType: 'F16' },
  BF16: { type: 'BF16', ggmlType: GgmlType.BF16, blockElements: 1, fileBlockBytes: 2, gpuBlockBytes: 4, gpuType: 'F32' },
  Q8_0: { type: 'Q8_0', ggmlType: GgmlType.Q8_0, blockElements: 32, fileBlockBytes: 34, gpuBlockBytes: 36, gpuType: 'Q8_0' },
  Q4_0: { type: 'Q4_0', ggmlType: GgmlType.Q4_0, blockElements: 32, fileBlockBytes: 18, gpuBlockBytes: 20, gpuType: 'Q4_0' },
  Q4_K: { type: 'Q4_K', ggmlType: GgmlType.Q4_K, blockElements: 256, fileBlockBytes: 144, gpuBlockBytes: 144, gpuType: 'Q4_K' },
  Q6_K: { type: 'Q6_K', ggmlType: GgmlType.Q6_K, blockElements: 256, fileBlockBytes: 210, gpuBlockBytes: 212, gpuType: 'Q6_K' },
};

const GGML_TYPE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(GgmlType).map(([name, id]) => [id, name]),
);

/** The TensorType of a GGUF type id; throws naming the tensor when the type is not supported. */
export function tensorTypeFromGgml(ggmlType: number, tensorName: string): TensorType {
  for (const layout of Object.values(TENSOR_TYPE_LAYOUTS)) if (layout.ggmlType === ggmlType) return layout.type;
  const name = GGML_TYPE_NAMES[ggmlType] ?? `ggml type ${ggmlType}`;
  throw new Error(
    `Tensor "${tensorName}" has unsupported type ${name} (supported: ${SUPPORTED_TENSOR_TYPES.join(', ')})`,
  );
}

/** The TensorType of a safetensors dtype string; throws naming the tensor when unsupported. */
export function tensorTypeFromSafetensors(dtype: string, tensorName: string): TensorType {
  if (dtype === 'F32' || dtype === 'F16' || dtype === 'BF16') return dtype;
  throw new Error(`Tensor "${tensorName}" has unsupported safetensors dtype ${dtype} (supported: F32, F16, BF16)`);
}

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Bytes a tensor of `elements` elements takes in the file. */
export function fileByteSize(type: TensorType, elements: number): number {
  const l = TENSOR_TYPE_LAYOUTS[type];
  if (elements % l.blockElements !== 0) {
    throw new Error(`${elements} elements is not a whole number of ${type} blocks of ${l.blockElements}`);
  }
  return (elements / l.blockElements) * l.fileBlockBytes;
}

/** Bytes a tensor of `elements` elements takes in a GPU buffer (padded to a multiple of 4). */
export function gpuByteSize(type: TensorType, elements: number): number {
  const l = TENSOR_TYPE_LAYOUTS[type];
  if (elements % l.blockElements !== 0) {
    throw new Error(`${elements} elements is not a whole number of ${type} blocks of ${l.blockElements}`);
  }
  const bytes = (elements / l.blockElements) * l.gpuBlockBytes;
  return (bytes + 3) & ~3;
}

// ---- number formats --------------------------------------------------------------------------------

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** IEEE half (as its 16 bits) to a number. */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** A number to IEEE half bits, rounding to nearest even (overflow goes to infinity). */
export function floatToHalf(value: number): number {
  f32Scratch[0] = value;
  const x = u32Scratch[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    const rounded = rem > mid || (rem === mid && (half & 1)) ? half + 1 : half;
    return sign | rounded;
  }
  const half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  const rounded = rem > 0x1000 || (rem === 0x1000 && (half & 1)) ? half + 1 : half;
  return sign | rounded;
}

/** bfloat16 bits to a number. */
export function bf16ToFloat(b: number): number {
  u32Scratch[0] = (b & 0xffff) << 16;
  return f32Scratch[0];
}

/** A number to bfloat16 bits, rounding to nearest even. */
export function floatToBf16(value: number): number {
  f32Scratch[0] = value;
  const x = u32Scratch[0];
  if ((x & 0x7f800000) === 0x7f800000 && x & 0x7fffff) return ((x >>> 16) | 0x40) & 0xffff;
  const rounding = 0x7fff + ((x >>> 16) & 1);
  return ((x + rounding) >>> 16) & 0xffff;
}
