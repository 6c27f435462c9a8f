// A GGUF v3 encoder for generated test models: typed metadata (every value type, arrays, nested arrays)
// and tensors, each tensor's data aligned to `general.alignment`.

import { GGUF_MAGIC, GGUF_DEFAULT_ALIGNMENT, GgufValueType, type GgufScalarTypeName } from '../../src/model/gguf.ts';

/** A metadata value with the GGUF type it is written as. */
export type GgufWriteValue =
  | { type: Exclude<GgufScalarTypeName, 'STRING' | 'BOOL' | 'UINT64' | 'INT64'>; value: number }
  | { type: 'UINT64' | 'INT64'; value: bigint }
  | { type: 'BOOL'; value: boolean }
  | { type: 'STRING'; value: string }
  | { type: 'ARRAY'; items: GgufWriteValue[]; itemType: keyof typeof GgufValueType };

export interface GgufWriteTensor {
  name: string;
  /** Dimensions in GGUF order: ne[0] (the contiguous one, columns) first. */
  dims: number[];
  ggmlType: number;
  data: Uint8Array;
}

export const gv = {
  u32: (value: number): GgufWriteValue => ({ type: 'UINT32', value }),
  i32: (value: number): GgufWriteValue => ({ type: 'INT32', value }),
  f32: (value: number): GgufWriteValue => ({ type: 'FLOAT32', value }),
  bool: (value: boolean): GgufWriteValue => ({ type: 'BOOL', value }),
  str: (value: string): GgufWriteValue => ({ type: 'STRING', value }),
  strings: (values: string[]): GgufWriteValue => ({ type: 'ARRAY', itemType: 'STRING', items: values.map((value) => ({ type: 'STRING', value })) }),
  i32s: (values: number[]): GgufWriteValue => ({ type: 'ARRAY', itemType: 'INT32', items: values.map((value) => ({ type: 'INT32', value })) }),
  f32s: (values: number[]): GgufWriteValue => ({ type: 'ARRAY', itemType: 'FLOAT32', items: values.map((value) => ({ type: 'FLOAT32', value })) }),
};

class ByteWriter {
  private chunks: Uint8Array[] = [];
  private current = new Uint8Array(1 << 16);
  private view = new DataView(this.current.buffer);
  private pos = 0;
  length = 0;
  private static encoder = new TextEncoder();

  private reserve(n: number): void {
    if (this.pos + n <= this.current.length) return;
    this.chunks.push(this.current.subarray(0, this.pos));
    this.current = new Uint8Array(Math.max(1 << 16, n));
    this.view = new DataView(this.current.buffer);
    this.pos = 0;
  }
  u8(v: number) { this.reserve(1); this.view.setUint8(this.pos, v); this.pos += 1; this.length += 1; }
  i8(v: number) { this.reserve(1); this.view.setInt8(this.pos, v); this.pos += 1; this.length += 1; }
  u16(v: number) { this.reserve(2); this.view.setUint16(this.pos, v, true); this.pos += 2; this.length += 2; }
  i16(v: number) { this.reserve(2); this.view.setInt16(this.pos, v, true); this.pos += 2; this.length += 2; }
  u32(v: number) { this.reserve(4); this.view.setUint32(this.pos, v, true); this.pos += 4; this.length += 4; }
  i32(v: number) { this.reserve(4); this.view.setInt32(this.pos, v, true); this.pos += 4; this.length += 4; }
  f32(v: number) { this.reserve(4); this.view.setFloat32(this.pos, v, true); this.pos += 4; this.length += 4; }
  f64(v: number) { this.reserve(8); this.view.setFloat64(this.pos, v, true); this.pos += 8; this.length += 8; }
  u64(v: bigint | number) { this.reserve(8); this.view.setBigUint64(this.pos, BigInt(v), true); this.pos += 8; this.length += 8; }
  i64(v: bigint) { this.reserve(8); this.view.setBigInt64(this.pos, v, true); this.pos += 8; this.length += 8; }
  bytes(b: Uint8Array) { this.reserve(b.length); this.current.set(b, this.pos); this.pos += b.length; this.length += b.length; }
  string(s: string) { const b = ByteWriter.encoder.encode(s); this.u64(b.length); this.bytes(b); }
  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const c of [...this.chunks, this.current.subarray(0, this.pos)]) { out.set(c, at); at += c.length; }
    return out;
  }
}

function writeValue(w: ByteWriter, v: GgufWriteValue): void {
  switch (v.type) {
    case 'UINT8': return w.u8(v.value);
    case 'INT8': return w.i8(v.value);
    case 'UINT16': return w.u16(v.value);
    case 'INT16': return w.i16(v.value);
    case 'UINT32': return w.u32(v.value);
    case 'INT32': return w.i32(v.value);
    case 'FLOAT32': return w.f32(v.value);
    case 'FLOAT64': return w.f64(v.value);
    case 'UINT64': return w.u64(v.value);
    case 'INT64': return w.i64(v.value);
    case 'BOOL': return w.u8(v.value ? 1 : 0);
    case 'STRING': return w.string(v.value);
    case 'ARRAY':
      w.u32(GgufValueType[v.itemType]);
      w.u64(v.items.length);
      for (const item of v.items) {
        if (item.type !== v.itemType) throw new Error(`GGUF array of ${v.itemType} holds a ${item.type}`);
        writeValue(w, item);
      }
      return;
  }
}

export interface GgufWriteOptions {
  version?: number;
  alignment?: number;
}

/** The header bytes (everything before the tensor data, padded to the alignment) and each tensor's offset. */
export function encodeGgufHeader(
  metadata: Record<string, GgufWriteValue>,
  tensors: Pick<GgufWriteTensor, 'name' | 'dims' | 'ggmlType' | 'data'>[],
  options: GgufWriteOptions = {},
): { header: Uint8Array; offsets: number[] } {
  const alignment = options.alignment ?? GGUF_DEFAULT_ALIGNMENT;
  const w = new ByteWriter();
  w.u32(GGUF_MAGIC);
  w.u32(options.version ?? 3);
  w.u64(tensors.length);
  w.u64(Object.keys(metadata).length);
  for (const [key, value] of Object.entries(metadata)) {
    w.string(key);
    w.u32(GgufValueType[value.type]);
    writeValue(w, value);
  }
  const offsets: number[] = [];
  let offset = 0;
  for (const t of tensors) {
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(t.ggmlType);
    w.u64(offset);
    offsets.push(offset);
    offset += Math.ceil(t.data.length / alignment) * alignment;
  }
  while (w.length % alignment !== 0) w.u8(0);
  return { header: w.finish(), offsets };
}

/** The bytes of a GGUF file, as the header followed by each tensor's data and padding (no Node APIs). */
export function encodeGguf(
  metadata: Record<string, GgufWriteValue>,
  tensors: GgufWriteTensor[],
  options: GgufWriteOptions = {},
): Uint8Array[] {
  const alignment = options.alignment ?? GGUF_DEFAULT_ALIGNMENT;
  if (options.alignment !== undefined && metadata['general.alignment'] === undefined) {
    metadata = { ...metadata, 'general.alignment': gv.u32(options.alignment) };
  }
  const { header } = encodeGgufHeader(metadata, tensors, options);
  const parts: Uint8Array[] = [header];
  for (const t of tensors) {
    parts.push(t.data);
    const pad = (alignment - (t.data.length % alignment)) % alignment;
    if (pad) parts.push(new Uint8Array(pad));
  }
  return parts;
}
