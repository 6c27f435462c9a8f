// safetensors (Hugging Face's weight format): the header of one file, and whole checkpoints that are either
// one model.safetensors or shards listed in model.safetensors.index.json. Only headers are read here;
// tensor data stays in the byte sources.

import { toByteSource, type ByteSource } from './byte-source.ts';
import { TENSOR_TYPE_LAYOUTS, elementCount, tensorTypeFromSafetensors, type TensorType } from './tensor-types.ts';

export interface SafetensorsTensorInfo {
  name: string;
  /** Shape rows first (PyTorch order). */
  shape: number[];
  type: TensorType;
  /** The file holding the data. */
  source: ByteSource;
  /** Absolute byte offset of the data in that file. */
  offset: number;
  byteLength: number;
}

export interface SafetensorsFile {
  source: ByteSource;
  metadata: Record<string, string>;
  tensors: SafetensorsTensorInfo[];
  fileSize: number;
}

/**
 * Largest JSON header accepted (the format's own limit is 100 MB; real headers are well under 10 MB, a few
 * hundred bytes per tensor), so a hostile header cannot make JSON.parse hold gigabytes.
 */
const MAX_HEADER_BYTES = 32 << 20;
/** Largest model.safetensors.index.json read (real ones: ~100 bytes per tensor). */
const MAX_INDEX_BYTES = 32 << 20;

/** Read the header of one safetensors file. */
export async function readSafetensors(input: string | URL | Blob | ArrayBuffer | Uint8Array | ByteSource, name?: string): Promise<SafetensorsFile> {
  const source = toByteSource(input, name);
  const fileSize = await source.size();
  if (fileSize < 8) throw new Error(`${source.name}: truncated file: ${fileSize} bytes is too short for a safetensors header`);
  const lengthBytes = await source.read(0, 8);
  const headerLength = new DataView(lengthBytes.buffer, lengthBytes.byteOffset, 8).getBigUint64(0, true);
  if (headerLength > BigInt(MAX_HEADER_BYTES)) {
    throw new Error(`${source.name}: not a safetensors file: header length ${headerLength} is above the ${MAX_HEADER_BYTES}-byte limit`);
  }
  const jsonLength = Number(headerLength);
  if (8 + jsonLength > fileSize) {
    throw new Error(`${source.name}: truncated file: the safetensors header needs ${8 + jsonLength} bytes but the file has ${fileSize}`);
  }
  const jsonBytes = await source.read(8, jsonLength);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(jsonBytes));
  } catch (e) {
    throw new Error(`${source.name}: not a safetensors file: the header is not JSON (${(e as Error).message})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) {
    throw new Error(`${source.name}: not a safetensors file: the header is not a JSON object`);
  }
  const dataStart = 8 + jsonLength;
  const dataSize = fileSize - dataStart;
  // Null-prototype: a `__proto__` key is an ordinary key.
  const metadata: Record<string, string> = Object.create(null);
  const tensors: SafetensorsTensorInfo[] = [];
  for (const [key, entry] of Object.entries(header as Record<string, unknown>)) {
    if (key === '__metadata__') {
      if (entry && typeof entry === 'object') {
        for (const [k, v] of Object.entries(entry)) metadata[k] = typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
      }
      continue;
    }
    const e = entry as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (
      typeof e?.dtype !== 'string' ||
      !Array.isArray(e.shape) ||
      !e.shape.every((d) => Number.isSafeInteger(d) && d >= 0) ||
      !Array.isArray(e.data_offsets) ||
      e.data_offsets.length !== 2 ||
      !e.data_offsets.every((d) => Number.isSafeInteger(d) && d >= 0)
    ) {
      throw new Error(`${source.name}: tensor "${key}": malformed safetensors header entry`);
    }
    const type = tensorTypeFromSafetensors(e.dtype, key);
    const shape = e.shape as number[];
    const [begin, end] = e.data_offsets as number[];
    const expected = elementCount(shape) * TENSOR_TYPE_LAYOUTS[type].fileBlockBytes;
    if (end - begin !== expected) {
      throw new Error(`${source.name}: tensor "${key}": data_offsets span ${end - begin} bytes but ${type} [${shape.join(', ')}] needs ${expected}`);
    }
    if (end > dataSize) {
      throw new Error(`${source.name}: truncated file: tensor "${key}" needs bytes up to ${dataStart + end} but the file has ${fileSize}`);
    }
    tensors.push({ name: key, shape, type, source, offset: dataStart + begin, byteLength: end - begin });
  }
  return { source, metadata, tensors, fileSize };
}

/** Opens a file of a model directory by its relative name; null (or a throw) when it does not exist. */
export type ModelFileOpener = (fileName: string) => Promise<ByteSource | null>;

export interface SafetensorsCheckpoint {
  files: SafetensorsFile[];
  tensors: SafetensorsTensorInfo[];
  /** Total bytes of tensor data. */
  totalBytes: number;
}

export const SAFETENSORS_INDEX = 'model.safetensors.index.json';

async function openOrNull(open: ModelFileOpener, fileName: string): Promise<{ source: ByteSource | null; error: unknown }> {
  try {
    const source = await open(fileName);
    if (source) await source.size();
    return { source, error: null };
  } catch (error) {
    return { source: null, error };
  }
}

/**
 * Read a checkpoint: model.safetensors.index.json and its shards when the index exists, else
 * model.safetensors. A shard the index lists that cannot be opened is an error naming it.
 */
export async function readSafetensorsCheckpoint(open: ModelFileOpener): Promise<SafetensorsCheckpoint> {
  const index = await openOrNull(open, SAFETENSORS_INDEX);
  let shardNames: string[];
  let weightMap: Record<string, string> | null = null;
  if (index.source) {
    const size = await index.source.size();
    if (size > MAX_INDEX_BYTES) throw new Error(`${SAFETENSORS_INDEX}: ${size} bytes, above the ${MAX_INDEX_BYTES}-byte limit`);
    let parsed: { weight_map?: Record<string, string> };
    try {
      parsed = JSON.parse(new TextDecoder().decode(await index.source.read(0, size)));
    } catch (e) {
      throw new Error(`${SAFETENSORS_INDEX}: not valid JSON (${(e as Error).message})`);
    }
    if (!parsed || typeof parsed !== 'object' || !parsed.weight_map || typeof parsed.weight_map !== 'object') {
      throw new Error(`${SAFETENSORS_INDEX}: has no "weight_map"`);
    }
    weightMap = Object.assign(Object.create(null) as Record<string, string>, parsed.weight_map);
    for (const [tensor, shard] of Object.entries(weightMap)) {
      if (typeof shard !== 'string') throw new Error(`${SAFETENSORS_INDEX}: the shard of tensor "${tensor.slice(0, 200)}" is not a file name`);
    }
    shardNames = [...new Set(Object.values(weightMap))];
  } else {
    shardNames = ['model.safetensors'];
  }
  const files: SafetensorsFile[] = [];
  for (const shard of shardNames) {
    const { source, error } = await openOrNull(open, shard);
    if (!source) {
      const cause = error instanceof Error ? `: ${error.message}` : '';
      if (weightMap) {
        const example = Object.entries(weightMap).find(([, f]) => f === shard)?.[0];
        throw new Error(`Missing safetensors shard "${shard}" (listed in ${SAFETENSORS_INDEX} for tensor "${example}")${cause}`);
      }
      throw new Error(`Missing "model.safetensors" (and no ${SAFETENSORS_INDEX})${cause}`);
    }
    files.push(await readSafetensors(source));
  }
  const tensors = files.flatMap((f) => f.tensors);
  if (weightMap) {
    const present = new Set(tensors.map((t) => t.name));
    for (const [tensor, shard] of Object.entries(weightMap)) {
      if (!present.has(tensor)) throw new Error(`Tensor "${tensor}" is listed in ${SAFETENSORS_INDEX} for "${shard}" but that shard does not hold it`);
    }
  }
  return { files, tensors, totalBytes: tensors.reduce((a, t) => a + t.byteLength, 0) };
}

/** The tensor named `name`; throws naming it when missing. */
export function safetensorsTensor(checkpoint: { tensors: SafetensorsTensorInfo[] }, name: string): SafetensorsTensorInfo {
  const t = checkpoint.tensors.find((x) => x.name === name);
  if (!t) throw new Error(`No tensor "${name}" in the safetensors checkpoint`);
  return t;
}
