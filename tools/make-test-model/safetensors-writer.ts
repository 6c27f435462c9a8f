// A safetensors writer for generated test models (one file, or shards plus model.safetensors.index.json).

import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface SafetensorsWriteTensor {
  name: string;
  dtype: 'F32' | 'F16' | 'BF16';
  /** Shape as in PyTorch (rows first). */
  shape: number[];
  data: Uint8Array;
}

/** Write one safetensors file. */
export function writeSafetensors(path: string, tensors: SafetensorsWriteTensor[]): void {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.length] };
    offset += t.data.length;
  }
  let json = JSON.stringify(header);
  while ((8 + Buffer.byteLength(json)) % 8 !== 0) json += ' ';
  const jsonBytes = Buffer.from(json, 'utf8');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(jsonBytes.length));
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, len);
    writeSync(fd, jsonBytes);
    for (const t of tensors) writeSync(fd, t.data);
  } finally {
    closeSync(fd);
  }
}

/**
 * Write tensors into `shards` files named model-0000i-of-0000n.safetensors with an index
 * (or a single model.safetensors when shards is 1).
 */
export function writeSafetensorsCheckpoint(dir: string, tensors: SafetensorsWriteTensor[], shards = 1): string[] {
  if (shards <= 1) {
    writeSafetensors(join(dir, 'model.safetensors'), tensors);
    return ['model.safetensors'];
  }
  const pad = (n: number) => String(n).padStart(5, '0');
  const names: string[] = [];
  const weightMap: Record<string, string> = {};
  let totalSize = 0;
  const perShard = Math.ceil(tensors.length / shards);
  for (let s = 0; s < shards; s++) {
    const name = `model-${pad(s + 1)}-of-${pad(shards)}.safetensors`;
    const part = tensors.slice(s * perShard, (s + 1) * perShard);
    writeSafetensors(join(dir, name), part);
    for (const t of part) {
      weightMap[t.name] = name;
      totalSize += t.data.length;
    }
    names.push(name);
  }
  writeFileSync(
    join(dir, 'model.safetensors.index.json'),
    JSON.stringify({ metadata: { total_size: totalSize }, weight_map: weightMap }, null, 2),
  );
  return names;
}
