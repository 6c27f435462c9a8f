// A pool of reusable GPU buffers (activations, scratch, readback, small uniforms) by usage and size class, with
// explicit release. Weights and the KV cache are long-lived and are created directly, not pooled.
//
// A pooled buffer can be larger than asked for (sizes are rounded up to a class: 256 B minimum, then powers of
// two and the halfway points between them), so bind it with an explicit size when a kernel depends on the
// binding's length (`{ buffer, size }`); kernels here take their sizes from a uniform and do not.

export type PooledBufferKind = 'storage' | 'readback' | 'uniform';

const USAGE: Record<PooledBufferKind, GPUBufferUsageFlags> = {
  // STORAGE buffers can be copied in and out (uploads with writeBuffer, readback through copies).
  storage: 0x80 /* STORAGE */ | 0x08 /* COPY_DST */ | 0x04 /* COPY_SRC */,
  readback: 0x01 /* MAP_READ */ | 0x08 /* COPY_DST */,
  uniform: 0x40 /* UNIFORM */ | 0x08 /* COPY_DST */,
};

const MIN_CLASS_BYTES = 256;

/** The size class a request of `bytes` is served from: 256, 384, 512, 768, 1024, 1536, ... */
export function sizeClass(bytes: number): number {
  if (!Number.isFinite(bytes) || bytes < 0) throw new RangeError(`Buffer size must be a non-negative number, got ${bytes}`);
  if (bytes <= MIN_CLASS_BYTES) return MIN_CLASS_BYTES;
  const power = 2 ** Math.ceil(Math.log2(bytes));
  const half = power * 0.75; // the point halfway between power/2 and power
  return bytes <= half ? half : power;
}

export class BufferPool {
  private readonly free = new Map<string, GPUBuffer[]>();
  private readonly owned = new Map<GPUBuffer, string>();
  private readonly inUse = new Set<GPUBuffer>();
  private freeBytesTotal = 0;

  constructor(
    private readonly device: GPUDevice,
    /** Free bytes kept for reuse; buffers released beyond this are destroyed. */
    private readonly maxFreeBytes = 256 * 1024 * 1024,
  ) {}

  /** A buffer of at least `bytes` (rounded to its size class) for this kind of use; give it back with `release`. */
  acquire(bytes: number, kind: PooledBufferKind = 'storage', label?: string): GPUBuffer {
    const size = sizeClass(bytes);
    const key = `${kind}:${size}`;
    const list = this.free.get(key);
    let buffer = list?.pop();
    if (buffer) {
      this.freeBytesTotal -= size;
    } else {
      buffer = this.device.createBuffer({ label: label ?? `pool ${key}`, size, usage: USAGE[kind] });
      this.owned.set(buffer, key);
    }
    this.inUse.add(buffer);
    return buffer;
  }

  /** Returns a buffer from `acquire` to the pool (it must not be mapped or used by work submitted later). */
  release(buffer: GPUBuffer): void {
    const key = this.owned.get(buffer);
    if (key === undefined) throw new Error(`BufferPool.release: buffer "${buffer.label}" did not come from this pool`);
    if (!this.inUse.delete(buffer)) throw new Error(`BufferPool.release: buffer "${buffer.label}" was released twice`);
    if (this.freeBytesTotal + buffer.size > this.maxFreeBytes) {
      this.owned.delete(buffer);
      buffer.destroy();
      return;
    }
    let list = this.free.get(key);
    if (!list) this.free.set(key, (list = []));
    list.push(buffer);
    this.freeBytesTotal += buffer.size;
  }

  /** Bytes held in free buffers, waiting for reuse. */
  get freeBytes(): number {
    return this.freeBytesTotal;
  }

  /** Buffers handed out and not yet released. */
  get inUseCount(): number {
    return this.inUse.size;
  }

  /** Destroys the free buffers (buffers in use stay valid). */
  trim(): void {
    for (const list of this.free.values()) {
      for (const buffer of list) {
        this.owned.delete(buffer);
        buffer.destroy();
      }
    }
    this.free.clear();
    this.freeBytesTotal = 0;
  }

  /** Destroys every buffer this pool made, in use or not. */
  destroy(): void {
    this.trim();
    for (const buffer of this.inUse) buffer.destroy();
    this.inUse.clear();
    this.owned.clear();
  }
}
