// A model's tensors into GPU memory as the decoder wants them: matrices (and f32/bf16 vectors) stream through
// the weight loader (src/model/weight-loader.ts: each file read once, rows converted to the GPU layout, split
// by rows past the binding limit); vectors stored in other types (F16 norms of Hugging Face checkpoints,
// quantized odd cases) are read on their own and widened to f32 on the CPU (they are tiny); rope_freqs stays
// on the CPU (the decoder folds it into its inverse frequencies).
import { createStorageBuffer } from '../gpu/transfer.ts';
import { gpuWeightType, type GpuTensor } from '../model/decoder-weights.ts';
import { dequantizeGguf } from '../model/dequantize.ts';
import { loadTensorsToGpu, type LoadProgress, type TensorSource } from '../model/weight-loader.ts';

export type { TensorSource } from '../model/weight-loader.ts';

export interface UploadedTensors {
  tensors: Map<string, GpuTensor>;
  ropeFreqFactors?: Float32Array;
  /** Bytes of GPU buffers made. */
  bytes: number;
  destroy(): void;
}

export interface UploadOptions {
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
  /** Largest buffer per part (defaults to the adapter's binding limit); tests lower it to force splits. */
  maxPartBytes?: number;
}

function isCpuSide(t: TensorSource): boolean {
  return t.name === 'rope_freqs.weight' || (t.shape.length === 1 && t.type !== 'F32' && t.type !== 'BF16');
}

export async function uploadTensors(device: GPUDevice, sources: readonly TensorSource[], options: UploadOptions = {}): Promise<UploadedTensors> {
  const streamed = await loadTensorsToGpu(
    device,
    sources.filter((t) => !isCpuSide(t)),
    { onProgress: options.onProgress, signal: options.signal, maxPartBytes: options.maxPartBytes, extraUsage: GPUBufferUsage.COPY_SRC },
  );
  const extra: GPUBuffer[] = [];
  const tensors = new Map<string, GpuTensor>();
  let ropeFreqFactors: Float32Array | undefined;
  try {
    for (const t of streamed.tensors.values()) {
      if (t.shape.length === 1) {
        tensors.set(t.name, { kind: 'vector', name: t.name, buffer: t.parts[0].buffer, length: t.cols });
      } else {
        tensors.set(t.name, { kind: 'matrix', name: t.name, type: gpuWeightType(t.type), rows: t.rows, cols: t.cols, parts: t.parts });
      }
    }
    for (const t of sources.filter(isCpuSide)) {
      options.signal?.throwIfAborted();
      const values = dequantizeGguf(t.type, await t.source.read(t.offset, t.byteLength));
      if (t.name === 'rope_freqs.weight') {
        ropeFreqFactors = values;
        continue;
      }
      const buffer = createStorageBuffer(device, values, t.name);
      extra.push(buffer);
      tensors.set(t.name, { kind: 'vector', name: t.name, buffer, length: values.length });
    }
  } catch (error) {
    streamed.destroy();
    for (const b of extra) b.destroy();
    throw error;
  }
  return {
    tensors,
    ropeFreqFactors,
    bytes: streamed.gpuBytes + extra.reduce((s, b) => s + b.size, 0),
    destroy: () => {
      streamed.destroy();
      for (const b of extra) b.destroy();
    },
  };
}
