// GGUF (llama.cpp's model file format, versions 2 and 3): metadata value types and the header reader.

/** Metadata value type ids as GGUF numbers them. */
export const GgufValueType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;

export type GgufScalarTypeName = Exclude<keyof typeof GgufValueType, 'ARRAY'>;

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_DEFAULT_ALIGNMENT = 32;
