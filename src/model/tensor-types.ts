// Tensor element types of GGUF and safetensors files, their byte layouts in the file, and the layout the
// weights take in GPU buffers (what the WGSL kernels read): all derived from the table of weight formats,
// src/common/weight-formats.ts (which describes each format's GPU layout). The exact value formulas are the
// references in dequantize.ts.
import { GGML_TYPE_NAMES, WEIGHT_FORMAT, WEIGHT_FORMAT_NAMES, weightFormatOfGgmlType, type WeightFormatName } from '../common/weight-formats.ts';

/** Element type ids as GGUF (ggml) numbers them: every id ggml has had, by name. */
export const GgmlType: Readonly<Record<string, number>> = Object.fromEntries(
  Object.entries(GGML_TYPE_NAMES).map(([id, name]) => [name, Number(id)]),
);

/** The tensor types this runtime can load (the weight formats). */
export type TensorType = WeightFormatName;

export const SUPPORTED_TENSOR_TYPES: readonly TensorType[] = WEIGHT_FORMAT_NAMES;

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

export const TENSOR_TYPE_LAYOUTS: Readonly<Record<TensorType, TensorTypeLayout>> = Object.fromEntries(
  WEIGHT_FORMAT_NAMES.map((name) => {
    const f = WEIGHT_FORMAT[name];
    const layout: TensorTypeLayout = {
      type: name,
      ggmlType: f.ggmlType,
      blockElements: f.blockElements,
      fileBlockBytes: f.fileBlockBytes,
      gpuBlockBytes: f.gpuBlockBytes,
      gpuType: f.gpuFormat,
    };
    return [name, layout];
  }),
) as Record<TensorType, TensorTypeLayout>;

/** The TensorType of a GGUF type id; throws naming the tensor and the type when the type is not supported. */
export function tensorTypeFromGgml(ggmlType: number, tensorName: string): TensorType {
  const format = weightFormatOfGgmlType(ggmlType);
  if (format) return format.name;
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
