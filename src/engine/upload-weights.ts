// Uploads a GGUF file's tensors to the GPU one whole tensor at a time (read, convert to the GPU layout,
// upload), as the GpuTensor lookup the decoder assembles its weights from. 1-D tensors (norms, biases)
// become f32 vectors. The streaming, row-splitting weight loader of src/model replaces this where present.
import { createStorageBuffer } from '../gpu/transfer.ts';
import { gpuWeightType, type GpuTensor } from '../model/decoder-weights.ts';
import { dequantizeGguf, toGpuLayout } from '../model/dequantize.ts';
import type { GgufFile } from '../model/gguf.ts';

export interface UploadedTensors {
  tensors: Map<string, GpuTensor>;
  /** rope_freqs.weight on the CPU (the decoder folds it into its inverse frequencies). */
  ropeFreqFactors?: Float32Array;
  /** Bytes uploaded. */
  bytes: number;
  destroy(): void;
}

export async function uploadGgufTensors(
  device: GPUDevice,
  file: GgufFile,
  onProgress?: (loadedBytes: number, totalBytes: number) => void,
): Promise<UploadedTensors> {
  const tensors = new Map<string, GpuTensor>();
  const buffers: GPUBuffer[] = [];
  const total = file.tensors.reduce((s, t) => s + t.byteLength, 0);
  let loaded = 0;
  let bytes = 0;
  let ropeFreqFactors: Float32Array | undefined;
  try {
    for (const t of file.tensors) {
      const raw = await file.source.read(t.offset, t.byteLength);
      if (t.name === 'rope_freqs.weight') {
        ropeFreqFactors = dequantizeGguf(t.type, raw);
      } else if (t.shape.length === 1) {
        const values = dequantizeGguf(t.type, raw);
        const buffer = createStorageBuffer(device, values, t.name);
        buffers.push(buffer);
        bytes += buffer.size;
        tensors.set(t.name, { kind: 'vector', name: t.name, buffer, length: values.length });
      } else {
        const [rows, cols] = [t.shape.slice(0, -1).reduce((a, b) => a * b, 1), t.shape[t.shape.length - 1]];
        const buffer = createStorageBuffer(device, toGpuLayout(t.type, raw), t.name);
        buffers.push(buffer);
        bytes += buffer.size;
        tensors.set(t.name, { kind: 'matrix', name: t.name, type: gpuWeightType(t.type), rows, cols, parts: [{ buffer, rowStart: 0, rowCount: rows }] });
      }
      loaded += t.byteLength;
      onProgress?.(loaded, total);
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
