// Streams model tensors from their files (GGUF or safetensors byte sources) into GPU buffers: each file is
// read once, in order, chunk by chunk; each chunk's whole rows are converted to the GPU layout
// (tensor-types.ts) and written with queue.writeBuffer. A tensor larger than the device's storage binding
// limit is split into row ranges, one buffer each. Progress is reported in file bytes, per file and overall.
// On any failure every buffer this call created is destroyed before the error propagates.

import { paddedWeightBytes } from '../gpu/dispatch.ts';
import type { ByteSource } from './byte-source.ts';
import { toGpuLayout } from './dequantize.ts';
import type { GgufFile } from './gguf.ts';
import { ggufNameOfHfTensor } from './model-config.ts';
import type { SafetensorsCheckpoint } from './safetensors.ts';
import { TENSOR_TYPE_LAYOUTS, fileByteSize, gpuByteSize, type TensorType } from './tensor-types.ts';

/** Where one tensor's bytes are. */
export interface TensorSource {
  name: string;
  type: TensorType;
  /** Rows first (PyTorch order); a row is the last dimension. */
  shape: number[];
  source: ByteSource;
  offset: number;
  byteLength: number;
}

/** A row range of a tensor in one GPU buffer (GPU layout, rows from rowStart on, buffer offset 0). */
export interface GpuTensorPart {
  buffer: GPUBuffer;
  rowStart: number;
  rowCount: number;
}

export interface LoadedTensor {
  name: string;
  /** Type of the data in the GPU buffers (BF16 files become F32). */
  type: TensorType;
  /** Type in the file. */
  fileType: TensorType;
  shape: number[];
  /** Product of all dimensions but the last (1 for vectors). */
  rows: number;
  /** The last dimension. */
  cols: number;
  parts: GpuTensorPart[];
}

export interface LoadProgress {
  /** The file (source name) being read. */
  file: string;
  fileBytesDone: number;
  fileBytesTotal: number;
  bytesDone: number;
  bytesTotal: number;
}

export interface LoadOptions {
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
  /** Largest buffer per part; defaults to min(maxStorageBufferBindingSize, maxBufferSize). Tests lower it. */
  maxPartBytes?: number;
  /** Extra usage flags for the buffers (STORAGE | COPY_DST always). */
  extraUsage?: GPUBufferUsageFlags;
}

export interface LoadedWeights {
  tensors: Map<string, LoadedTensor>;
  /** Bytes of GPU buffers created. */
  gpuBytes: number;
  destroy(): void;
}

/** The tensors of a GGUF file, under their GGUF names. */
export function ggufTensorSources(file: GgufFile): TensorSource[] {
  return file.tensors.map((t) => ({ name: t.name, type: t.type, shape: t.shape, source: file.source, offset: t.offset, byteLength: t.byteLength }));
}

/** The tensors of a safetensors checkpoint, renamed to GGUF names where a mapping exists. */
export function safetensorsTensorSources(checkpoint: SafetensorsCheckpoint): TensorSource[] {
  return checkpoint.tensors.map((t) => ({
    name: ggufNameOfHfTensor(t.name) ?? t.name,
    type: t.type,
    shape: t.shape,
    source: t.source,
    offset: t.offset,
    byteLength: t.byteLength,
  }));
}

/** Pending writes beyond which the loader waits for the queue, so staging memory stays bounded. */
const MAX_UNSETTLED_WRITE_BYTES = 64 << 20;

/** How one tensor's bytes are cut into rows and buffers. */
class TensorWriter {
  readonly tensor: LoadedTensor;
  private readonly rowFileBytes: number;
  private readonly rowGpuBytes: number;
  /** Rows written together so every write is 4-byte aligned (2 for F16 rows of odd length). */
  private readonly rowGroup: number;
  private readonly rowsPerPart: number;
  private carry: Uint8Array = new Uint8Array(0);
  private rowsDone = 0;

  constructor(
    private readonly device: GPUDevice,
    readonly source: TensorSource,
    maxPartBytes: number,
    usage: GPUBufferUsageFlags,
    private readonly created: GPUBuffer[],
  ) {
    const { name, type, shape } = source;
    const cols = shape.length ? shape[shape.length - 1] : 1;
    const rows = shape.slice(0, -1).reduce((a, b) => a * b, 1);
    const layout = TENSOR_TYPE_LAYOUTS[type];
    if (cols % layout.blockElements !== 0) {
      throw new Error(`Tensor "${name}": rows of ${cols} elements are not whole ${type} blocks of ${layout.blockElements}`);
    }
    this.rowFileBytes = fileByteSize(type, cols);
    if (this.rowFileBytes * rows !== source.byteLength) {
      throw new Error(`Tensor "${name}": ${type} [${shape.join(', ')}] needs ${this.rowFileBytes * rows} bytes, the file gives ${source.byteLength}`);
    }
    const gpuType = layout.gpuType;
    this.rowGpuBytes = type === 'F16' ? cols * 2 : gpuByteSize(gpuType, cols);
    this.rowGroup = this.rowGpuBytes % 4 === 0 ? 1 : 2;
    const groupBytes = this.rowGpuBytes * this.rowGroup;
    const groupsPerPart = Math.floor(maxPartBytes / groupBytes);
    if (groupsPerPart < 1) {
      throw new Error(`Tensor "${name}": one row (${this.rowGpuBytes} bytes on the GPU) is larger than the largest buffer allowed (${maxPartBytes} bytes)`);
    }
    this.rowsPerPart = Math.min(rows, groupsPerPart * this.rowGroup);
    if (rows * cols === 0) throw new Error(`Tensor "${name}" is empty (shape [${shape.join(', ')}])`);
    const parts: GpuTensorPart[] = [];
    for (let rowStart = 0; rowStart < rows; rowStart += this.rowsPerPart) {
      const rowCount = Math.min(this.rowsPerPart, rows - rowStart);
      // Padded to 16 bytes: the product kernels read weights as vec4 words (src/gpu/dispatch.ts conventions).
      const size = paddedWeightBytes(rowCount * this.rowGpuBytes);
      const label = rowCount === rows ? name : `${name}[rows ${rowStart}..${rowStart + rowCount})`;
      const buffer = device.createBuffer({ label, size, usage });
      created.push(buffer);
      parts.push({ buffer, rowStart, rowCount });
    }
    this.tensor = { name, type: gpuType, fileType: type, shape: [...shape], rows, cols, parts };
  }

  /** Take the next bytes of the tensor; writes every whole row group they complete. Returns bytes written. */
  push(bytes: Uint8Array, last: boolean): number {
    let data = bytes;
    if (this.carry.byteLength) {
      data = new Uint8Array(this.carry.byteLength + bytes.byteLength);
      data.set(this.carry);
      data.set(bytes, this.carry.byteLength);
    }
    const groupFileBytes = this.rowFileBytes * this.rowGroup;
    let usable = Math.floor(data.byteLength / groupFileBytes) * groupFileBytes;
    if (last) usable = data.byteLength; // the final (possibly partial) row group
    let written = 0;
    let at = 0;
    while (at < usable) {
      const part = this.tensor.parts[Math.floor(this.rowsDone / this.rowsPerPart)];
      const rowsLeftInPart = part.rowStart + part.rowCount - this.rowsDone;
      const rows = Math.min(rowsLeftInPart, Math.ceil((usable - at) / this.rowFileBytes));
      const fileBytes = Math.min(rows * this.rowFileBytes, usable - at);
      let gpu = toGpuLayout(this.source.type, data.subarray(at, at + fileBytes));
      if (gpu.byteLength % 4 !== 0) {
        const padded = new Uint8Array((gpu.byteLength + 3) & ~3);
        padded.set(gpu);
        gpu = padded;
      }
      this.device.queue.writeBuffer(part.buffer, (this.rowsDone - part.rowStart) * this.rowGpuBytes, gpu as Uint8Array<ArrayBuffer>);
      written += gpu.byteLength;
      this.rowsDone += rows;
      at += fileBytes;
    }
    this.carry = at < data.byteLength ? data.slice(at) : new Uint8Array(0);
    return written;
  }
}

/**
 * Load tensors into GPU buffers. Tensors of the same file are read in file order through one stream of
 * that file (one Range request per file for URLs), gaps skipped.
 */
export async function loadTensorsToGpu(device: GPUDevice, sources: readonly TensorSource[], options: LoadOptions = {}): Promise<LoadedWeights> {
  const maxPartBytes = options.maxPartBytes ?? Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | (options.extraUsage ?? 0);
  const created: GPUBuffer[] = [];
  const tensors = new Map<string, LoadedTensor>();
  const bySource = new Map<ByteSource, TensorSource[]>();
  const names = new Set<string>();
  for (const s of sources) {
    if (names.has(s.name)) throw new Error(`Tensor "${s.name}" is listed twice`);
    names.add(s.name);
    const list = bySource.get(s.source) ?? [];
    list.push(s);
    bySource.set(s.source, list);
  }
  const bytesTotal = sources.reduce((a, s) => a + s.byteLength, 0);
  let bytesDone = 0;
  let unsettled = 0;
  let openScopes = 0;
  const pushScopes = () => {
    device.pushErrorScope('out-of-memory');
    device.pushErrorScope('validation');
    openScopes += 2;
  };
  const checkScopes = async (what: string) => {
    openScopes -= 2;
    const validation = await device.popErrorScope();
    const memory = await device.popErrorScope();
    if (memory) throw new Error(`Not enough GPU memory while ${what}: ${memory.message}`);
    if (validation) throw new Error(`GPU error while ${what}: ${validation.message}`);
  };
  try {
    for (const [source, list] of bySource) {
      list.sort((a, b) => a.offset - b.offset);
      for (let i = 1; i < list.length; i++) {
        if (list[i].offset < list[i - 1].offset + list[i - 1].byteLength) {
          throw new Error(`${source.name}: tensors "${list[i - 1].name}" and "${list[i].name}" overlap`);
        }
      }
      const fileBytesTotal = list.reduce((a, s) => a + s.byteLength, 0);
      let fileBytesDone = 0;
      const start = list[0].offset;
      const end = list[list.length - 1].offset + list[list.length - 1].byteLength;
      pushScopes();
      const writers = list.map((s) => new TensorWriter(device, s, maxPartBytes, usage, created));
      await checkScopes(`creating the buffers of ${source.name}`);
      let index = 0;
      let position = start;
      let stream: TensorWriter | undefined = writers[0];
      pushScopes();
      for await (const chunk of source.stream(start, end - start, options.signal)) {
        let rest = chunk;
        while (rest.byteLength && stream) {
          const s = stream.source;
          if (position < s.offset) {
            const skip = Math.min(s.offset - position, rest.byteLength);
            rest = rest.subarray(skip);
            position += skip;
            continue;
          }
          const take = Math.min(s.offset + s.byteLength - position, rest.byteLength);
          const finished = position + take === s.offset + s.byteLength;
          unsettled += stream.push(rest.subarray(0, take), finished);
          rest = rest.subarray(take);
          position += take;
          fileBytesDone += take;
          bytesDone += take;
          if (finished) {
            tensors.set(stream.tensor.name, stream.tensor);
            stream = writers[++index];
          }
        }
        options.onProgress?.({ file: source.name, fileBytesDone, fileBytesTotal, bytesDone, bytesTotal });
        if (unsettled > MAX_UNSETTLED_WRITE_BYTES) {
          await device.queue.onSubmittedWorkDone();
          unsettled = 0;
        }
        options.signal?.throwIfAborted();
      }
      if (stream) throw new Error(`${source.name}: the file ended before tensor "${stream.source.name}" was complete`);
      await checkScopes(`writing the tensors of ${source.name}`);
    }
    await device.queue.onSubmittedWorkDone();
  } catch (error) {
    while (openScopes > 0) {
      openScopes--;
      await device.popErrorScope().catch(() => null);
    }
    for (const b of created) b.destroy();
    tensors.clear();
    throw error;
  }
  return {
    tensors,
    gpuBytes: created.reduce((a, b) => a + b.size, 0),
    destroy: () => {
      for (const b of created) b.destroy();
    },
  };
}
