// GGUF (llama.cpp's model file format, versions 2 and 3): metadata value types and the header reader.
// Reads only the header region (metadata + tensor infos) into the JS heap; tensor data stays in the source.
// A model file is untrusted input: the header is read under GGUF_LIMITS (its bytes, string and key lengths,
// array lengths and nesting, the items of all arrays), every count is checked against the bytes the file has
// left before anything is allocated, and metadata lives in null-prototype objects (a `__proto__` key is a key).
import { toByteSource, type ByteSource } from './byte-source.ts';
import { elementCount, fileByteSize, tensorTypeFromGgml, type TensorType } from './tensor-types.ts';

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


export type GgufValueTypeName = keyof typeof GgufValueType;

/** A metadata value: integers as numbers (64-bit ones as bigint only beyond 2^53), arrays as arrays. */
export type GgufMetadataValue = number | bigint | boolean | string | GgufMetadataValue[];

export interface GgufTensorInfo {
  name: string;
  /** Dimensions in GGUF order: ne[0] (contiguous, the columns) first. */
  dims: number[];
  /** Shape rows first (PyTorch order): dims reversed. */
  shape: number[];
  type: TensorType;
  /** Absolute byte offset of the data in the file. */
  offset: number;
  /** Bytes in the file. */
  byteLength: number;
}

export interface GgufFile {
  source: ByteSource;
  version: number;
  metadata: Record<string, GgufMetadataValue>;
  /** The GGUF type of each metadata key ("ARRAY<STRING>" style for arrays). */
  metadataTypes: Record<string, string>;
  tensors: GgufTensorInfo[];
  alignment: number;
  /** Absolute offset where tensor data starts. */
  dataOffset: number;
  fileSize: number;
}

/** Bounds on a GGUF header (real ones: a 262k-token vocabulary is ~10 MB of header and ~800k array items). */
export interface GgufLimits {
  /** Bytes of the whole header (metadata and tensor infos). */
  maxHeaderBytes: number;
  /** Bytes of one string value (some files hold tokenizer.json, ~20 MB, as one string). */
  maxStringBytes: number;
  /** Bytes of a metadata key or tensor name (the format's own limit is 65535). */
  maxKeyBytes: number;
  /** Items of one metadata array. */
  maxArrayLength: number;
  /** Items of all metadata arrays together. */
  maxTotalArrayItems: number;
  /** Nesting of arrays in arrays. */
  maxArrayDepth: number;
}

export const GGUF_LIMITS: Readonly<GgufLimits> = {
  maxHeaderBytes: 128 << 20,
  maxStringBytes: 64 << 20,
  maxKeyBytes: 65_535,
  maxArrayLength: 4 << 20,
  maxTotalArrayItems: 8 << 20,
  maxArrayDepth: 3,
};

/** Bytes the smallest item of each value type takes (a string is at least its 8-byte length). */
const MIN_VALUE_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 8: 8, 9: 12, 10: 8, 11: 8, 12: 8 };

/** Thrown by the cursor when the header runs past the bytes read so far: `end` is the byte it needs. */
class NeedMoreBytes extends Error {
  constructor(readonly end: number) {
    super('need more bytes');
  }
}

class HeaderCursor {
  private readonly view: DataView;
  // ignoreBOM: a string that starts with U+FEFF keeps it (Gemma and Llama 2 have such tokens).
  private readonly decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  pos = 0;
  constructor(
    private readonly bytes: Uint8Array,
    /** Size of the whole file (running past it means truncation; `bytes` may be a prefix). */
    readonly fileSize: number,
    private readonly fileName: string,
    readonly limits: Readonly<GgufLimits>,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  /** Bytes of the file after the cursor. */
  get remaining(): number {
    return this.fileSize - this.pos;
  }
  private need(n: number, what: string): number {
    const at = this.pos;
    if (at + n > this.bytes.byteLength) {
      if (at + n > this.fileSize) {
        throw new Error(`${this.fileName}: truncated file: the GGUF header ends inside ${what} (byte ${at} + ${n} is past the file's ${this.fileSize} bytes)`);
      }
      if (at + n > this.limits.maxHeaderBytes) {
        throw new Error(`${this.fileName}: the GGUF header is larger than the ${this.limits.maxHeaderBytes}-byte limit (at ${what})`);
      }
      throw new NeedMoreBytes(at + n);
    }
    this.pos += n;
    return at;
  }
  /** Items of all arrays read so far (bounded by limits.maxTotalArrayItems). */
  arrayItems = 0;
  /** `n` fixed-size scalars of one type in a row (the fast path for token scores, types and the like). */
  scalars(type: Exclude<GgufValueTypeName, 'STRING' | 'ARRAY'>, n: number, key: string): GgufMetadataValue[] {
    const size = MIN_VALUE_BYTES[GgufValueType[type]];
    const at = this.need(n * size, `metadata array "${key}"`);
    const v = this.view;
    const out: GgufMetadataValue[] = new Array(n);
    switch (type) {
      case 'UINT8': for (let i = 0; i < n; i++) out[i] = v.getUint8(at + i); break;
      case 'INT8': for (let i = 0; i < n; i++) out[i] = v.getInt8(at + i); break;
      case 'UINT16': for (let i = 0; i < n; i++) out[i] = v.getUint16(at + 2 * i, true); break;
      case 'INT16': for (let i = 0; i < n; i++) out[i] = v.getInt16(at + 2 * i, true); break;
      case 'UINT32': for (let i = 0; i < n; i++) out[i] = v.getUint32(at + 4 * i, true); break;
      case 'INT32': for (let i = 0; i < n; i++) out[i] = v.getInt32(at + 4 * i, true); break;
      case 'FLOAT32': for (let i = 0; i < n; i++) out[i] = v.getFloat32(at + 4 * i, true); break;
      case 'FLOAT64': for (let i = 0; i < n; i++) out[i] = v.getFloat64(at + 8 * i, true); break;
      case 'UINT64':
        for (let i = 0; i < n; i++) {
          const x = v.getBigUint64(at + 8 * i, true);
          out[i] = x <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(x) : x;
        }
        break;
      case 'INT64':
        for (let i = 0; i < n; i++) {
          const x = v.getBigInt64(at + 8 * i, true);
          out[i] = x <= BigInt(Number.MAX_SAFE_INTEGER) && x >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(x) : x;
        }
        break;
      case 'BOOL':
        for (let i = 0; i < n; i++) {
          const b = v.getUint8(at + i);
          if (b > 1) throw new Error(`metadata "${key}": bool value ${b} is neither 0 nor 1`);
          out[i] = b === 1;
        }
        break;
    }
    return out;
  }
  u8(what: string) { return this.view.getUint8(this.need(1, what)); }
  i8(what: string) { return this.view.getInt8(this.need(1, what)); }
  u16(what: string) { return this.view.getUint16(this.need(2, what), true); }
  i16(what: string) { return this.view.getInt16(this.need(2, what), true); }
  u32(what: string) { return this.view.getUint32(this.need(4, what), true); }
  i32(what: string) { return this.view.getInt32(this.need(4, what), true); }
  f32(what: string) { return this.view.getFloat32(this.need(4, what), true); }
  f64(what: string) { return this.view.getFloat64(this.need(8, what), true); }
  u64(what: string): number | bigint {
    const v = this.view.getBigUint64(this.need(8, what), true);
    return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  }
  i64(what: string): number | bigint {
    const v = this.view.getBigInt64(this.need(8, what), true);
    return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
  }
  /** A u64 that must be a usable count or size. */
  count(what: string): number {
    // Two u32 reads instead of a BigInt (this runs once per string: hundreds of thousands of times for a vocabulary).
    const at = this.need(8, what);
    const high = this.view.getUint32(at + 4, true);
    const v = high < 0x200000 ? high * 0x100000000 + this.view.getUint32(at, true) : this.view.getBigUint64(at, true);
    if (typeof v === 'bigint' || v > this.fileSizeHint) throw new Error(`${this.fileName}: implausible ${what} ${v}: corrupt GGUF header`);
    return v;
  }
  fileSizeHint = Number.MAX_SAFE_INTEGER;
  string(what: string, maxBytes = this.limits.maxStringBytes): string {
    const length = this.count(`length of ${what}`);
    if (length > this.remaining) {
      throw new Error(`${this.fileName}: truncated file: the GGUF header ends inside ${what} (byte ${this.pos}): it claims ${length} bytes but the file has ${this.remaining} left`);
    }
    if (length > maxBytes) throw new Error(`${this.fileName}: ${what} is ${length} bytes, above the ${maxBytes}-byte limit`);
    const at = this.need(length, what);
    return this.decoder.decode(this.bytes.subarray(at, at + length));
  }
}

const VALUE_TYPE_NAMES = Object.fromEntries(Object.entries(GgufValueType).map(([k, v]) => [v, k])) as Record<number, GgufValueTypeName>;

function readValue(c: HeaderCursor, typeId: number, key: string, depth = 0): { value: GgufMetadataValue; type: string } {
  const type = VALUE_TYPE_NAMES[typeId];
  if (type === undefined) throw new Error(`${key}: unknown GGUF metadata value type ${typeId}`);
  switch (type) {
    case 'UINT8': return { value: c.u8(key), type };
    case 'INT8': return { value: c.i8(key), type };
    case 'UINT16': return { value: c.u16(key), type };
    case 'INT16': return { value: c.i16(key), type };
    case 'UINT32': return { value: c.u32(key), type };
    case 'INT32': return { value: c.i32(key), type };
    case 'FLOAT32': return { value: c.f32(key), type };
    case 'FLOAT64': return { value: c.f64(key), type };
    case 'UINT64': return { value: c.u64(key), type };
    case 'INT64': return { value: c.i64(key), type };
    case 'BOOL': {
      const b = c.u8(key);
      if (b > 1) throw new Error(`metadata "${key}": bool value ${b} is neither 0 nor 1`);
      return { value: b === 1, type };
    }
    case 'STRING': return { value: c.string(`metadata "${key}"`), type };
    case 'ARRAY': {
      const itemType = c.u32(`item type of metadata "${key}"`);
      if (VALUE_TYPE_NAMES[itemType] === undefined) throw new Error(`${key}: unknown GGUF metadata array item type ${itemType}`);
      if (itemType === GgufValueType.ARRAY && depth + 1 >= c.limits.maxArrayDepth) {
        throw new Error(`metadata "${key}": arrays nested more than ${c.limits.maxArrayDepth} deep`);
      }
      const n = c.count(`length of metadata array "${key}"`);
      // Refused before anything is allocated: more items than the file's bytes can hold, or than the limits allow.
      if (n * MIN_VALUE_BYTES[itemType] > c.remaining) {
        throw new Error(`truncated or corrupt GGUF header: metadata array "${key}" claims ${n} items but the file has ${c.remaining} bytes left`);
      }
      if (n > c.limits.maxArrayLength) throw new Error(`metadata array "${key}" has ${n} items, above the limit of ${c.limits.maxArrayLength}`);
      c.arrayItems += n;
      if (c.arrayItems > c.limits.maxTotalArrayItems) {
        throw new Error(`metadata arrays hold more than ${c.limits.maxTotalArrayItems} items in all (at "${key}")`);
      }
      const itemName = VALUE_TYPE_NAMES[itemType];
      if (itemName !== 'STRING' && itemName !== 'ARRAY') return { value: c.scalars(itemName, n, key), type: `ARRAY<${itemName}>` };
      const values: GgufMetadataValue[] = new Array(n);
      let itemTypeName: string = VALUE_TYPE_NAMES[itemType] ?? String(itemType);
      for (let i = 0; i < n; i++) {
        const item = readValue(c, itemType, key, depth + 1);
        values[i] = item.value;
        itemTypeName = item.type;
      }
      return { value: values, type: `ARRAY<${itemTypeName}>` };
    }
  }
}

function parseHeader(bytes: Uint8Array, source: ByteSource, fileSize: number, limits: Readonly<GgufLimits>): GgufFile {
  const name = source.name;
  const c = new HeaderCursor(bytes, fileSize, name, limits);
  c.fileSizeHint = fileSize;
  const magic = c.u32('the magic number');
  if (magic !== GGUF_MAGIC) {
    const text = Array.from(bytes.subarray(0, 4), (b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.')).join('');
    throw new Error(`${name}: not a GGUF file: wrong magic "${text}" (0x${magic.toString(16).padStart(8, '0')}), expected "GGUF"`);
  }
  const version = c.u32('the version');
  if (version !== 2 && version !== 3) throw new Error(`${name}: unsupported GGUF version ${version} (supported: 2, 3)`);
  const tensorCount = c.count('tensor count');
  const kvCount = c.count('metadata count');
  const metadata: Record<string, GgufMetadataValue> = Object.create(null);
  const metadataTypes: Record<string, string> = Object.create(null);
  for (let i = 0; i < kvCount; i++) {
    const key = c.string(`metadata key ${i}`, limits.maxKeyBytes);
    if (Object.hasOwn(metadata, key)) throw new Error(`${name}: metadata key "${key.slice(0, 200)}" appears twice: corrupt GGUF header`);
    const { value, type } = readValue(c, c.u32(`type of metadata "${key}"`), key);
    metadata[key] = value;
    metadataTypes[key] = type;
  }
  const alignmentValue = metadata['general.alignment'] ?? GGUF_DEFAULT_ALIGNMENT;
  if (typeof alignmentValue !== 'number' || alignmentValue <= 0 || alignmentValue % 8 !== 0) {
    throw new Error(`${name}: metadata "general.alignment" must be a positive multiple of 8, got ${String(alignmentValue)}`);
  }
  const alignment = alignmentValue;
  const infos: { name: string; dims: number[]; ggmlType: number; relOffset: number }[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const tensorName = c.string(`tensor name ${i}`, limits.maxKeyBytes);
    const nDims = c.u32(`dimension count of tensor "${tensorName}"`);
    if (nDims > 8) throw new Error(`${name}: tensor "${tensorName}" has ${nDims} dimensions: corrupt GGUF header`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(c.count(`dimension ${d} of tensor "${tensorName}"`));
    const ggmlType = c.u32(`type of tensor "${tensorName}"`);
    const relOffset = c.count(`offset of tensor "${tensorName}"`);
    infos.push({ name: tensorName, dims, ggmlType, relOffset });
  }
  const dataOffset = Math.ceil(c.pos / alignment) * alignment;
  const tensors: GgufTensorInfo[] = infos.map((t) => {
    const type = tensorTypeFromGgml(t.ggmlType, t.name);
    if (t.relOffset % alignment !== 0) throw new Error(`${name}: tensor "${t.name}" data offset ${t.relOffset} is not aligned to ${alignment}`);
    let byteLength: number;
    try {
      byteLength = fileByteSize(type, elementCount(t.dims));
    } catch (e) {
      throw new Error(`${name}: tensor "${t.name}": ${(e as Error).message}`);
    }
    const offset = dataOffset + t.relOffset;
    if (offset + byteLength > fileSize) {
      throw new Error(`${name}: truncated file: tensor "${t.name}" needs bytes up to ${offset + byteLength} but the file has ${fileSize}`);
    }
    return { name: t.name, dims: t.dims, shape: [...t.dims].reverse(), type, offset, byteLength };
  });
  return { source, version, metadata, metadataTypes, tensors, alignment, dataOffset, fileSize };
}

/**
 * Read a GGUF file's header (metadata and tensor infos) from a URL, Blob/File, ArrayBuffer or ByteSource.
 * Only the header region is read: first 1 MiB, then four times as much (or up to the byte a length field
 * needs, when that is more) until the header fits, never past `limits.maxHeaderBytes`.
 */
export async function readGguf(
  input: string | URL | Blob | ArrayBuffer | Uint8Array | ByteSource,
  limits: Readonly<GgufLimits> = GGUF_LIMITS,
): Promise<GgufFile> {
  const source = toByteSource(input);
  const fileSize = await source.size();
  const most = Math.min(fileSize, limits.maxHeaderBytes);
  let length = Math.min(most, 1 << 20);
  for (;;) {
    const bytes = await source.read(0, length);
    try {
      return parseHeader(bytes, source, fileSize, limits);
    } catch (e) {
      if (!(e instanceof NeedMoreBytes)) throw e;
      // The cursor checked e.end against the file size and the header limit.
      length = Math.min(most, Math.max(length * 4, e.end));
    }
  }
}

/** The tensor named `name`; throws naming it when missing. */
export function ggufTensor(file: GgufFile, name: string): GgufTensorInfo {
  const t = file.tensors.find((x) => x.name === name);
  if (!t) throw new Error(`${file.source.name}: no tensor "${name}" in the GGUF file`);
  return t;
}

/** A metadata value of the expected JS type; throws naming the key when missing or mistyped. */
export function ggufMetadata<T extends 'number' | 'string' | 'boolean' | 'array'>(
  file: Pick<GgufFile, 'metadata' | 'source'>,
  key: string,
  kind: T,
): T extends 'number' ? number : T extends 'string' ? string : T extends 'boolean' ? boolean : GgufMetadataValue[];
export function ggufMetadata(file: Pick<GgufFile, 'metadata' | 'source'>, key: string, kind: string): GgufMetadataValue {
  const v = file.metadata[key];
  if (v === undefined) throw new Error(`${file.source.name}: GGUF metadata key "${key}" is missing`);
  const ok = kind === 'array' ? Array.isArray(v) : typeof v === kind;
  if (!ok) throw new Error(`${file.source.name}: GGUF metadata key "${key}" should be a ${kind}, got ${Array.isArray(v) ? 'array' : typeof v}`);
  return v;
}
