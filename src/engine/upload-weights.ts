// A model's tensors into GPU memory as the decoder wants them: matrices (and f32/bf16 vectors) stream through
// the weight loader (src/model/weight-loader.ts: each file read once, rows converted to the GPU layout, split
// by rows past the binding limit); vectors stored in other types (F16 norms of Hugging Face checkpoints,
// quantized odd cases) are read on their own and widened to f32 on the CPU (they are tiny); rope_freqs stays
// on the CPU (the decoder folds it into its inverse frequencies). Each layer's SwiGLU gate and up matrices load
// stacked as one tensor, blk.N.ffn_gate_up.weight, when they share type and shape (always, in practice), so that
// the decoder runs them and the activation as one dispatch.
import { createStorageBuffer } from '../gpu/transfer.ts';
import { gpuWeightType, type GpuTensor } from '../model/decoder-weights.ts';
import { dequantizeGguf } from '../model/dequantize.ts';
import { loadTensorsToGpu, type LoadProgress, type TensorGroup, type TensorSource } from '../model/weight-loader.ts';

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
  /** Stack each layer's gate and up matrices where they match (default true; false loads them apart, as for files where they differ). */
  stackGateUp?: boolean;
}

function isCpuSide(t: TensorSource): boolean {
  return t.name === 'rope_freqs.weight' || (t.shape.length === 1 && t.type !== 'F32' && t.type !== 'BF16');
}

/** The name of a layer's stacked gate and up matrices. */
export function gateUpName(layer: number): string {
  return `blk.${layer}.ffn_gate_up.weight`;
}

/** blk.N.ffn_gate + blk.N.ffn_up groups, for the layers where both exist with the same type and shape. */
function gateUpGroups(sources: readonly TensorSource[]): TensorGroup[] {
  const byName = new Map(sources.map((s) => [s.name, s]));
  const groups: TensorGroup[] = [];
  for (const gate of sources) {
    const match = /^blk\.(\d+)\.ffn_gate\.weight$/.exec(gate.name);
    if (!match) continue;
    const up = byName.get(`blk.${match[1]}.ffn_up.weight`);
    if (up && up.type === gate.type && up.shape.join() === gate.shape.join()) {
      groups.push({ name: gateUpName(Number(match[1])), members: [gate.name, up.name] });
    }
  }
  return groups;
}

export async function uploadTensors(device: GPUDevice, sources: readonly TensorSource[], options: UploadOptions = {}): Promise<UploadedTensors> {
  const gpuSide = sources.filter((t) => !isCpuSide(t));
  const streamed = await loadTensorsToGpu(device, gpuSide, {
    onProgress: options.onProgress,
    signal: options.signal,
    maxPartBytes: options.maxPartBytes,
    extraUsage: GPUBufferUsage.COPY_SRC,
    groups: options.stackGateUp === false ? [] : gateUpGroups(gpuSide),
  });
  const extra: GPUBuffer[] = [];
  const tensors = new Map<string, GpuTensor>();
  let ropeFreqFactors: Float32Array | undefined;
  try {
    for (const t of streamed.tensors.values()) {
      if (t.shape.length === 1) {
        tensors.set(t.name, { kind: 'vector', name: t.name, buffer: t.parts[0].buffer, length: t.cols });
      } else {
        tensors.set(t.name, { kind: 'matrix', name: t.name, type: gpuWeightType(t.type), rows: t.rows, cols: t.cols, stacked: t.stacked, parts: t.parts });
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
