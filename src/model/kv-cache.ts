// The KV cache of one sequence: per layer a K and a V buffer, f32, laid out [kvHeads, maxSeq, headDim]
// (position-major within a head, so attention reads one head's keys contiguously), plus the token ids whose
// keys and values it holds, so the next request can reuse the longest common prefix.
import { GpuError, withGpuErrorCheck, type GpuContext } from '../gpu/device.ts';

export interface KvCacheShape {
  numLayers: number;
  numKvHeads: number;
  headDim: number;
  /** Positions the cache holds (the context length this engine serves). */
  maxSeq: number;
}

export class KvCache {
  readonly keys: GPUBuffer[];
  readonly values: GPUBuffer[];
  /** Token ids whose K/V are in the cache, position by position (valid entries only). */
  private cachedTokens: number[] = [];

  private constructor(
    readonly shape: KvCacheShape,
    keys: GPUBuffer[],
    values: GPUBuffer[],
  ) {
    this.keys = keys;
    this.values = values;
  }

  /** Bytes of one layer's K (or V) buffer. */
  static layerBytes(shape: KvCacheShape): number {
    return shape.numKvHeads * shape.maxSeq * shape.headDim * 4;
  }

  /** Allocates the cache; a clear GpuError when it does not fit the device. */
  static async create(gpu: GpuContext, shape: KvCacheShape): Promise<KvCache> {
    const bytes = KvCache.layerBytes(shape);
    const max = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
    if (bytes > max) {
      throw new GpuError(
        'limit-exceeded',
        `A KV cache of ${shape.maxSeq} positions needs ${bytes} bytes per layer buffer, more than this adapter binds (${max}); use a shorter context`,
      );
    }
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const { keys, values } = await withGpuErrorCheck(gpu.device, 'allocating the KV cache', () => {
      const keys: GPUBuffer[] = [];
      const values: GPUBuffer[] = [];
      for (let l = 0; l < shape.numLayers; l++) {
        keys.push(gpu.device.createBuffer({ label: `kv.k.${l}`, size: bytes, usage }));
        values.push(gpu.device.createBuffer({ label: `kv.v.${l}`, size: bytes, usage }));
      }
      return { keys, values };
    });
    return new KvCache(shape, keys, values);
  }

  /** Number of valid positions. */
  get length(): number {
    return this.cachedTokens.length;
  }

  get tokens(): readonly number[] {
    return this.cachedTokens;
  }

  /** Length of the longest prefix of `tokens` whose K/V are in the cache. */
  commonPrefixLength(tokens: readonly number[]): number {
    const n = Math.min(tokens.length, this.cachedTokens.length);
    let i = 0;
    while (i < n && tokens[i] === this.cachedTokens[i]) i++;
    return i;
  }

  /** Keeps only the first `length` positions (later ones get overwritten). */
  truncate(length: number): void {
    if (length < this.cachedTokens.length) this.cachedTokens.length = Math.max(0, length);
  }

  /** Records that positions [length, length + tokens.length) now hold these tokens' K/V. */
  append(tokens: readonly number[]): void {
    if (this.cachedTokens.length + tokens.length > this.shape.maxSeq) {
      throw new RangeError(`KV cache overflow: ${this.cachedTokens.length} + ${tokens.length} > ${this.shape.maxSeq}`);
    }
    for (const t of tokens) this.cachedTokens.push(t);
  }

  /** Forgets everything (e.g. after a failed step left the buffers in an unknown state). */
  clear(): void {
    this.cachedTokens = [];
  }

  destroy(): void {
    for (const b of this.keys) b.destroy();
    for (const b of this.values) b.destroy();
    this.cachedTokens = [];
  }
}
