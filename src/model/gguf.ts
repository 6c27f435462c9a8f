// GGUF (llama.cpp's model file format, versions 2 and 3): metadata value types and the header reader.
// Reads only the header region (metadata + tensor infos) into the JS heap; tensor data stays in the source.
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

/** Thrown by the cursor when the header runs past the bytes read so far. */
class NeedMoreBytes extends Error {}

class HeaderCursor {
  private readonly view: DataView;
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });
  pos = 0;
  constructor(
    private readonly bytes: Uint8Array,
    /** Whether `bytes` is the whole file (then running out means truncation). */
    private readonly whole: boolean,
    private readonly fileName: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  private need(n: number, what: string): number {
    const at = this.pos;
    if (at + n > this.bytes.byteLength) {
      if (this.whole) throw new Error(`${this.fileName}: truncated file: the GGUF header ends inside ${what} (byte ${at})`);
      throw new NeedMoreBytes();
    }
    this.pos += n;
    return at;
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
    const v = this.u64(what);
    if (typeof v === 'bigint' || v > this.fileSizeHint) throw new Error(`${this.fileName}: implausible ${what} ${v}: corrupt GGUF header`);
    return v;
  }
  fileSizeHint = Number.MAX_SAFE_INTEGER;
  string(what: string): string {
    const length = this.count(`length of ${what}`);
    const at = this.need(length, what);
    return this.decoder.decode(this.bytes.subarray(at, at + length));
  }
}

const VALUE_TYPE_NAMES = Object.fromEntries(Object.entries(GgufValueType).map(([k, v]) => [v, k])) as Record<number, GgufValueTypeName>;

function readValue(c: HeaderCursor, typeId: number, key: string): { value: GgufMetadataValue; type: string } {
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
      const n = c.count(`length of metadata array "${key}"`);
      const values: GgufMetadataValue[] = new Array(n);
      let itemTypeName: string = VALUE_TYPE_NAMES[itemType] ?? String(itemType);
      for (let i = 0; i < n; i++) {
        const item = readValue(c, itemType, key);
        values[i] = item.value;
        itemTypeName = item.type;
      }
      return { value: values, type: `ARRAY<${itemTypeName}>` };
    }
  }
}

function parseHeader(bytes: Uint8Array, whole: boolean, source: ByteSource, fileSize: number): GgufFile {
  const name = source.name;
  const c = new HeaderCursor(bytes, whole, name);
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
  const metadata: Record<string, GgufMetadataValue> = {};
  const metadataTypes: Record<string, string> = {};
  for (let i = 0; i < kvCount; i++) {
    const key = c.string(`metadata key ${i}`);
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
    const tensorName = c.string(`tensor name ${i}`);
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
 * Only the header region is read: first 1 MiB, then twice as much until the header fits.
 */
export async function readGguf(input: string | URL | Blob | ArrayBuffer | Uint8Array | ByteSource): Promise<GgufFile> {
  const source = toByteSource(input);
  const fileSize = await source.size();
  let length = Math.min(fileSize, 1 << 20);
  for (;;) {
    const bytes = await source.read(0, length);
    try {
      return parseHeader(bytes, length === fileSize, source, fileSize);
    } catch (e) {
      if (!(e instanceof NeedMoreBytes)) throw e;
      length = Math.min(fileSize, length * 2);
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
