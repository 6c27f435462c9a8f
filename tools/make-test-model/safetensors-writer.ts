// A safetensors encoder for generated test models (one file, or shards plus model.safetensors.index.json).
// No Node APIs: the bytes come back as chunk lists that a caller writes to disk or serves.

export interface SafetensorsWriteTensor {
  name: string;
  dtype: 'F32' | 'F16' | 'BF16';
  /** Shape as in PyTorch (rows first). */
  shape: number[];
  data: Uint8Array;
}

/** The bytes of one safetensors file. */
export function encodeSafetensors(tensors: SafetensorsWriteTensor[]): Uint8Array[] {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.length] };
    offset += t.data.length;
  }
  const encoder = new TextEncoder();
  let json = JSON.stringify(header);
  while ((8 + encoder.encode(json).length) % 8 !== 0) json += ' ';
  const jsonBytes = encoder.encode(json);
  const length = new Uint8Array(8);
  new DataView(length.buffer).setBigUint64(0, BigInt(jsonBytes.length), true);
  return [length, jsonBytes, ...tensors.map((t) => t.data)];
}

/**
 * The files of a checkpoint: `shards` files named model-0000i-of-0000n.safetensors with
 * model.safetensors.index.json, or a single model.safetensors when shards is 1.
 */
export function encodeSafetensorsCheckpoint(tensors: SafetensorsWriteTensor[], shards = 1): Record<string, Uint8Array[]> {
  if (shards <= 1) return { 'model.safetensors': encodeSafetensors(tensors) };
  const pad = (n: number) => String(n).padStart(5, '0');
  const files: Record<string, Uint8Array[]> = {};
  const weightMap: Record<string, string> = {};
  let totalSize = 0;
  const perShard = Math.ceil(tensors.length / shards);
  for (let s = 0; s < shards; s++) {
    const name = `model-${pad(s + 1)}-of-${pad(shards)}.safetensors`;
    const part = tensors.slice(s * perShard, (s + 1) * perShard);
    files[name] = encodeSafetensors(part);
    for (const t of part) {
      weightMap[t.name] = name;
      totalSize += t.data.length;
    }
  }
  files['model.safetensors.index.json'] = [
    new TextEncoder().encode(JSON.stringify({ metadata: { total_size: totalSize }, weight_map: weightMap }, null, 2)),
  ];
  return files;
}
