// A model's tensors into GPU memory as the decoder wants them: matrices (and f32/bf16 vectors) stream through
// the weight loader (src/model/weight-loader.ts: each file read once, rows converted to the GPU layout, split
// by rows past the binding limit); vectors stored in other types (F16 norms of Hugging Face checkpoints,
// quantized odd cases) are read on their own and widened to f32 on the CPU (they are tiny); rope_freqs stays
// on the CPU (the decoder folds it into its inverse frequencies). Where they share a type, each layer's q, k and v
// matrices load as one concatenated matrix (blk.N.attn_qkv.weight) and its SwiGLU gate and up matrices stacked
// (blk.N.ffn_gate_up.weight; gpt-oss experts: blk.N.ffn_gate_up_exps.weight), so that the decoder runs each set as one dispatch.
import { createStorageBuffer } from '../gpu/transfer.ts';
import { gpuWeightType, type GpuTensor } from './decoder-weights.ts';
import { dequantizeGguf } from './dequantize.ts';
import type { RopeFileFactors } from './model-config.ts';
import { loadTensorsToGpu, type LoadProgress, type TensorGroup, type TensorSource } from './weight-loader.ts';

export type { TensorSource } from './weight-loader.ts';

export interface UploadedTensors {
  tensors: Map<string, GpuTensor>;
  /** The file's RoPE factors: GGUF rope_freqs, or LongRoPE's (phi3) short and long (ropeFactorsFor picks). */
  ropeFreqFactors?: RopeFileFactors;
  /** Bytes of GPU buffers made. */
  bytes: number;
  destroy(): void;
}

export interface UploadOptions {
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
  /** Largest buffer per part (defaults to the adapter's binding limit); tests lower it to force splits. */
  maxPartBytes?: number;
  /**
   * Load each layer's q/k/v as one matrix and its gate/up stacked where they match (default true; false loads
   * them apart, as for files where they differ in type).
   */
  groupLayerMatrices?: boolean;
  /** F16 matrices load widened to F32 (LoadOptions.widenF16; src/gpu/kernel-shapes.ts widenF16Weights decides). */
  widenF16?: boolean;
  /**
   * Called once every tensor's GPU buffers exist, before the streamed ones hold their bytes (the small CPU-side
   * vectors and the RoPE factors are read first): the map is the one the result will hold. For work that needs the
   * buffers but not their contents (the engine builds its decoder and compiles its pipelines beside the upload). An
   * exception thrown here fails the upload.
   */
  onBuffers?: (tensors: ReadonlyMap<string, GpuTensor>, ropeFreqFactors: RopeFileFactors | undefined) => void;
}

/** Per-frequency RoPE divisors: Llama 3's rope_freqs, phi3's LongRoPE short and long factors. */
const ROPE_FACTOR_TENSORS = ['rope_freqs.weight', 'rope_factors_short.weight', 'rope_factors_long.weight'];

function isCpuSide(t: TensorSource): boolean {
  return ROPE_FACTOR_TENSORS.includes(t.name) || (t.shape.length === 1 && ((t.type !== 'F32' && t.type !== 'BF16') || !!t.addend));
}

/** Bytes of the F16 tensors uploadTensors streams to the GPU (what its `widenF16` would widen). */
export function streamedF16Bytes(sources: readonly TensorSource[]): number {
  return sources.reduce((sum, t) => sum + (t.type === 'F16' && !isCpuSide(t) ? t.byteLength : 0), 0);
}

/** The name of a layer's stacked gate and up matrices. */
export function gateUpName(layer: number): string {
  return `blk.${layer}.ffn_gate_up.weight`;
}

/** The name of a layer's stacked gate and up experts (gpt-oss). */
export function gateUpExpsName(layer: number): string {
  return `blk.${layer}.ffn_gate_up_exps.weight`;
}

/** The name of a layer's concatenated q, k and v matrices. */
export function qkvName(layer: number): string {
  return `blk.${layer}.attn_qkv.weight`;
}

/**
 * Per layer, blk.N.attn_q/k/v concatenated (same type and row length) and blk.N.ffn_gate/up stacked (same type
 * and shape), where the file's tensors allow it.
 */
function layerGroups(sources: readonly TensorSource[]): TensorGroup[] {
  const byName = new Map(sources.map((s) => [s.name, s]));
  const groups: TensorGroup[] = [];
  for (const source of sources) {
    const match = /^blk\.(\d+)\.attn_q\.weight$/.exec(source.name);
    if (!match) continue;
    const layer = Number(match[1]);
    const [q, k, v, gate, up] = ['attn_q', 'attn_k', 'attn_v', 'ffn_gate', 'ffn_up'].map((n) => byName.get(`blk.${layer}.${n}.weight`));
    if (q && k && v && [k, v].every((t) => t.type === q.type && t.shape.length === 2 && t.shape[1] === q.shape[1])) {
      groups.push({ name: qkvName(layer), members: [q.name, k.name, v.name], layout: 'concatenated' });
    }
    if (gate && up && up.type === gate.type && up.shape.join() === gate.shape.join()) {
      groups.push({ name: gateUpName(layer), members: [gate.name, up.name] });
    }
    // Experts (gpt-oss): gate and up stacked per part of whole experts; the decoder needs them so (same type and shape).
    const [gateExps, upExps] = ['ffn_gate_exps', 'ffn_up_exps'].map((n) => byName.get(`blk.${layer}.${n}.weight`));
    if (gateExps && upExps && upExps.type === gateExps.type && upExps.shape.join() === gateExps.shape.join()) {
      groups.push({ name: gateUpExpsName(layer), members: [gateExps.name, upExps.name] });
    }
  }
  return groups;
}

export async function uploadTensors(device: GPUDevice, sources: readonly TensorSource[], options: UploadOptions = {}): Promise<UploadedTensors> {
  const gpuSide = sources.filter((t) => !isCpuSide(t));
  const extra: GPUBuffer[] = [];
  const tensors = new Map<string, GpuTensor>();
  let ropeFreqFactors: RopeFileFactors | undefined;
  try {
    // The small CPU-side tensors first, so that onBuffers sees every tensor and the RoPE factors.
    const ropeFactors = new Map<string, Float32Array>();
    for (const t of sources.filter(isCpuSide)) {
      options.signal?.throwIfAborted();
      const values = dequantizeGguf(t.type, await t.source.read(t.offset, t.byteLength));
      // Gemma 3's Hugging Face norms: w stored, 1 + w used (in f32, as llama.cpp's converter adds it).
      if (t.addend) for (let i = 0; i < values.length; i++) values[i] += t.addend;
      if (ROPE_FACTOR_TENSORS.includes(t.name)) {
        ropeFactors.set(t.name, values);
        continue;
      }
      const buffer = createStorageBuffer(device, values, t.name);
      extra.push(buffer);
      tensors.set(t.name, { kind: 'vector', name: t.name, buffer, length: values.length });
    }
    const [freqs, short, long] = ROPE_FACTOR_TENSORS.map((n) => ropeFactors.get(n));
    if (short && long) {
      if (short.length !== long.length) throw new Error(`rope_factors_short.weight has ${short.length} values, rope_factors_long.weight ${long.length}`);
      ropeFreqFactors = { short, long };
    } else if (freqs) ropeFreqFactors = { freqs };
    const streamed = await loadTensorsToGpu(device, gpuSide, {
      onProgress: options.onProgress,
      signal: options.signal,
      maxPartBytes: options.maxPartBytes,
      extraUsage: GPUBufferUsage.COPY_SRC,
      groups: options.groupLayerMatrices === false ? [] : layerGroups(gpuSide),
      widenF16: options.widenF16,
      onPlanned: (planned) => {
        for (const t of planned) {
          if (t.shape.length === 1) {
            tensors.set(t.name, { kind: 'vector', name: t.name, buffer: t.parts[0].buffer, length: t.cols });
          } else {
            tensors.set(t.name, { kind: 'matrix', name: t.name, type: gpuWeightType(t.type), rows: t.rows, cols: t.cols, stacked: t.stacked, parts: t.parts });
          }
        }
        options.onBuffers?.(tensors, ropeFreqFactors);
      },
    });
    return {
      tensors,
      ropeFreqFactors,
      bytes: streamed.gpuBytes + extra.reduce((s, b) => s + b.size, 0),
      destroy: () => {
        streamed.destroy();
        for (const b of extra) b.destroy();
      },
    };
  } catch (error) {
    for (const b of extra) b.destroy();
    throw error;
  }
}
