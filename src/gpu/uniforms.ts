// The kernels' uniforms, two kinds and one place for each:
// - Params uniforms (`UniformAllocator`): every kernel call (the families of src/gpu/kernels/, the GPU sampler's
//   fixed params) packs its params struct with `packParams` and binds the buffer `UniformAllocator.get` returns for
//   those bytes. A buffer is made once per distinct content (shapes repeat every token and layer) and kept in a
//   least-recently-used map, bounded here and nowhere else: varying prompt lengths and call-style positions make new
//   ones, and past `capacity` the least recently used are destroyed. The bound is far above what one command buffer
//   uses (a batch uses a few dozen distinct params), so nothing recorded and not yet submitted is destroyed, and
//   work already submitted keeps a destroyed buffer alive until it completes.
// - Step uniforms (`StepUniform`): what changes every step (the forward plan's StepParams, the sampler's per-token
//   params) lives in one buffer rewritten on the queue when the step is encoded, before that step's submit; queue
//   order gives each submitted step its own values, so several steps may be in flight.

/** Params uniforms kept per allocator before the least recently used is destroyed. */
export const UNIFORM_CAPACITY = 4096;

/** One field of a params struct: a u32, or an f32 where given as { f32: value }. */
export type ParamField = number | { f32: number };

/** Packs a params struct (4 bytes a field) into whole 16-byte rows, at least one (a uniform's alignment). */
export function packParams(fields: readonly ParamField[]): ArrayBuffer {
  const view = new DataView(new ArrayBuffer(Math.max(16, Math.ceil((fields.length * 4) / 16) * 16)));
  fields.forEach((field, i) => {
    if (typeof field === 'number') {
      if (!Number.isInteger(field) || field < 0 || field > 0xffffffff) throw new RangeError(`Kernel size must be a u32, got ${field}`);
      view.setUint32(i * 4, field, true);
    } else {
      view.setFloat32(i * 4, field.f32, true);
    }
  });
  return view.buffer;
}

/** The part of a GPUDevice the allocator uses (tests pass a fake). */
export type UniformDevice = Pick<GPUDevice, 'createBuffer'> & { queue: Pick<GPUQueue, 'writeBuffer'> };

export class UniformAllocator {
  /** Keyed by the params' words; Map order is the recency order (oldest first). */
  private readonly buffers = new Map<string, GPUBuffer>();

  constructor(
    private readonly device: UniformDevice,
    readonly capacity: number = UNIFORM_CAPACITY,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`uniform capacity must be a positive integer, got ${capacity}`);
  }

  /** The number of uniforms held now. */
  get size(): number {
    return this.buffers.size;
  }

  /** The uniform holding these params (see `packParams`). */
  params(...fields: ParamField[]): GPUBuffer {
    return this.get(packParams(fields));
  }

  /** The uniform holding these bytes (a multiple of 4), made and written on first use. */
  get(bytes: ArrayBuffer): GPUBuffer {
    const key = Array.from(new Uint32Array(bytes)).join(',');
    let buffer = this.buffers.get(key);
    if (buffer) {
      this.buffers.delete(key); // re-inserted below, as the most recent
    } else {
      if (this.buffers.size >= this.capacity) {
        const [oldestKey, oldest] = this.buffers.entries().next().value as [string, GPUBuffer];
        this.buffers.delete(oldestKey);
        oldest.destroy();
      }
      // The WebGPU globals are read here, at call time: in Node they are installed after this module loads.
      const usage = GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST;
      buffer = this.device.createBuffer({ label: `params ${key}`, size: Math.max(16, Math.ceil(bytes.byteLength / 16) * 16), usage });
      this.device.queue.writeBuffer(buffer, 0, bytes);
    }
    this.buffers.set(key, buffer);
    return buffer;
  }

  /** Destroys every uniform held. */
  destroy(): void {
    for (const buffer of this.buffers.values()) buffer.destroy();
    this.buffers.clear();
  }
}

/** A uniform rewritten every step (see the header): one buffer of `size` bytes, written on the queue. */
export class StepUniform {
  readonly buffer: GPUBuffer;

  constructor(
    private readonly device: UniformDevice,
    label: string,
    size: number,
  ) {
    this.buffer = device.createBuffer({ label, size: Math.max(16, Math.ceil(size / 16) * 16), usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  }

  /** This step's values (at most the buffer's size): write before encoding the step, submit it before the next write. */
  write(bytes: ArrayBuffer): void {
    this.device.queue.writeBuffer(this.buffer, 0, bytes);
  }

  destroy(): void {
    this.buffer.destroy();
  }
}
