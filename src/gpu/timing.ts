// GPU time of compute passes through `timestamp-query`: each timed pass writes a begin and an end timestamp;
// `resolve` copies them into a buffer at the end of the command encoder and `read` maps them back.
// `createGpuTimer` returns null where the adapter has no `timestamp-query` (callers then use wall time).
import type { GpuContext } from './device.ts';
import type { PassTimestampSource } from './dispatch.ts';

export interface PassTime {
  label: string;
  /** GPU nanoseconds between the pass's begin and end timestamps. */
  nanoseconds: number;
}

export class GpuTimer implements PassTimestampSource {
  private readonly querySet: GPUQuerySet;
  private readonly resolveBuffer: GPUBuffer;
  private readonly readBuffer: GPUBuffer;
  private labels: string[] = [];
  private resolvedCount = 0;

  constructor(
    device: GPUDevice,
    /** How many passes can be timed between two `read`s. */
    readonly capacity = 64,
  ) {
    this.querySet = device.createQuerySet({ label: 'pass timestamps', type: 'timestamp', count: capacity * 2 });
    const bytes = capacity * 2 * 8;
    this.resolveBuffer = device.createBuffer({
      label: 'pass timestamps resolve',
      size: bytes,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
    this.readBuffer = device.createBuffer({
      label: 'pass timestamps read',
      size: bytes,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
  }

  /** The timestampWrites for the next pass (undefined when the timer is full until the next `read`). */
  timestampWrites(label: string): GPUComputePassTimestampWrites | undefined {
    const index = this.labels.length;
    if (index >= this.capacity) return undefined;
    this.labels.push(label);
    return { querySet: this.querySet, beginningOfPassWriteIndex: index * 2, endOfPassWriteIndex: index * 2 + 1 };
  }

  /** Records the resolve and the copy into the read buffer at the end of `encoder` (call before finish()). */
  resolve(encoder: GPUCommandEncoder): void {
    const count = this.labels.length;
    if (count === this.resolvedCount) return;
    encoder.resolveQuerySet(this.querySet, 0, count * 2, this.resolveBuffer, 0);
    encoder.copyBufferToBuffer(this.resolveBuffer, 0, this.readBuffer, 0, count * 2 * 8);
    this.resolvedCount = count;
  }

  /** Reads the times of the passes timed since the last read (after their work was submitted) and resets. */
  async read(): Promise<PassTime[]> {
    const count = this.resolvedCount;
    const labels = this.labels.slice(0, count);
    this.labels = [];
    this.resolvedCount = 0;
    if (count === 0) return [];
    await this.readBuffer.mapAsync(GPUMapMode.READ, 0, count * 2 * 8);
    const stamps = new BigUint64Array(this.readBuffer.getMappedRange(0, count * 2 * 8).slice(0));
    this.readBuffer.unmap();
    return labels.map((label, i) => ({
      label,
      // A driver may write 0 or a smaller end stamp (quantized or reset clocks): report 0, never negative.
      nanoseconds: stamps[i * 2 + 1] > stamps[i * 2] ? Number(stamps[i * 2 + 1] - stamps[i * 2]) : 0,
    }));
  }

  destroy(): void {
    this.querySet.destroy();
    this.resolveBuffer.destroy();
    this.readBuffer.destroy();
  }
}

/** A timer when the device has `timestamp-query`, else null. */
export function createGpuTimer(gpu: GpuContext, capacity = 64): GpuTimer | null {
  return gpu.features.timestamps ? new GpuTimer(gpu.device, capacity) : null;
}
