// Uploads a model's tensors to the GPU one tensor (or one row range) at a time: read the bytes from the file,
// convert them to the GPU layout, write them into a buffer. A matrix larger than the adapter's binding limit
// is split by rows over several buffers. 1-D tensors (norms, biases) become f32 vectors; rope_freqs stays on
// the CPU. Only one tensor (part) is in the JS heap at a time.
import { assertFitsBinding, withGpuErrorCheck, type GpuLimits } from '../gpu/device.ts';
import { createStorageBuffer } from '../gpu/transfer.ts';
import type { ByteSource } from '../model/byte-source.ts';
import { gpuWeightType, type GpuTensor } from '../model/decoder-weights.ts';
import type { GpuWeightPart } from '../model/decoder.ts';
import { dequantizeGguf, toGpuLayout } from '../model/dequantize.ts';
import { fileByteSize, gpuByteSize, type TensorType } from '../model/tensor-types.ts';

/** Where one tensor's bytes are, under its GGUF name. */
export interface TensorSource {
  name: string;
  type: TensorType;
  /** Rows first (PyTorch order). */
  shape: number[];
  source: ByteSource;
  offset: number;
  byteLength: number;
}

export interface UploadedTensors {
  tensors: Map<string, GpuTensor>;
  /** rope_freqs.weight on the CPU (the decoder folds it into its inverse frequencies). */
  ropeFreqFactors?: Float32Array;
  /** Bytes of GPU buffers made. */
  bytes: number;
  destroy(): void;
}

export interface UploadOptions {
  /** Called after each tensor (part) with the file bytes done and the total. */
  onProgress?: (loadedBytes: number, totalBytes: number) => void;
  signal?: AbortSignal;
  /** Largest buffer per part (defaults to the adapter's binding limit); tests lower it to force splits. */
  maxPartBytes?: number;
}

export async function uploadTensors(
  device: GPUDevice,
  limits: GpuLimits,
  sources: readonly TensorSource[],
  options: UploadOptions = {},
): Promise<UploadedTensors> {
  const tensors = new Map<string, GpuTensor>();
  const buffers: GPUBuffer[] = [];
  const total = sources.reduce((s, t) => s + t.byteLength, 0);
  const maxPart = options.maxPartBytes ?? Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  let loaded = 0;
  let bytes = 0;
  let ropeFreqFactors: Float32Array | undefined;
  const upload = async (data: ArrayBufferView, label: string): Promise<GPUBuffer> => {
    assertFitsBinding(limits, data.byteLength, label);
    const buffer = await withGpuErrorCheck(device, `uploading ${label}`, () => createStorageBuffer(device, data, label));
    buffers.push(buffer);
    bytes += buffer.size;
    return buffer;
  };
  try {
    for (const t of sources) {
      options.signal?.throwIfAborted();
      if (t.name === 'rope_freqs.weight') {
        ropeFreqFactors = dequantizeGguf(t.type, await t.source.read(t.offset, t.byteLength));
      } else if (t.shape.length === 1) {
        const values = dequantizeGguf(t.type, await t.source.read(t.offset, t.byteLength));
        tensors.set(t.name, { kind: 'vector', name: t.name, buffer: await upload(values, t.name), length: values.length });
      } else {
        const cols = t.shape[t.shape.length - 1];
        const rows = t.shape.slice(0, -1).reduce((a, b) => a * b, 1);
        const rowFileBytes = fileByteSize(t.type, cols);
        const rowGpuBytes = gpuByteSize(t.type === 'BF16' ? 'F32' : t.type, cols);
        // Rows per part: as many as fit, a multiple of 64 when split (keeps offsets tidy).
        let rowsPerPart = rows;
        if (rows * rowGpuBytes > maxPart) rowsPerPart = Math.max(1, Math.floor(maxPart / rowGpuBytes / 64) * 64 || Math.floor(maxPart / rowGpuBytes));
        const parts: GpuWeightPart[] = [];
        for (let rowStart = 0; rowStart < rows; rowStart += rowsPerPart) {
          const rowCount = Math.min(rowsPerPart, rows - rowStart);
          const raw = await t.source.read(t.offset + rowStart * rowFileBytes, rowCount * rowFileBytes);
          const label = parts.length || rowCount < rows ? `${t.name}[${rowStart}..${rowStart + rowCount})` : t.name;
          parts.push({ buffer: await upload(toGpuLayout(t.type, raw), label), rowStart, rowCount });
          loaded += raw.byteLength;
          options.onProgress?.(loaded, total);
        }
        tensors.set(t.name, { kind: 'matrix', name: t.name, type: gpuWeightType(t.type), rows, cols, parts });
        continue;
      }
      loaded += t.byteLength;
      options.onProgress?.(loaded, total);
    }
  } catch (error) {
    for (const b of buffers) b.destroy();
    throw error;
  }
  return {
    tensors,
    ropeFreqFactors,
    bytes,
    destroy: () => {
      for (const b of buffers) b.destroy();
    },
  };
}
