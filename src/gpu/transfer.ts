// Moving data between JavaScript and GPU buffers: create a storage buffer from typed data, read a buffer back.
// Reads go through a pooled MAP_READ buffer and a copy (storage buffers cannot be mapped).
import { paddedWeightBytes } from './dispatch.ts';

// Read when a buffer is made, not at import: in Node the WebGPU globals are installed after the imports run.
const storageUsage = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;

/**
 * A new storage buffer holding `data`, its size padded to a multiple of 16 bytes (the weight-buffer
 * convention; harmless for activations). The padding is zero.
 */
export function createStorageBuffer(device: GPUDevice, data: ArrayBufferView, label?: string): GPUBuffer {
  const size = paddedWeightBytes(data.byteLength);
  const buffer = device.createBuffer({ label, size, usage: storageUsage(), mappedAtCreation: true });
  new Uint8Array(buffer.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  buffer.unmap();
  return buffer;
}

/** An uninitialised (zeroed) storage buffer of at least `byteLength` bytes, padded to 16. */
export function createEmptyStorageBuffer(device: GPUDevice, byteLength: number, label?: string): GPUBuffer {
  return device.createBuffer({ label, size: paddedWeightBytes(byteLength), usage: storageUsage() });
}

/** Copies `byteLength` bytes at `offset` of `buffer` (which needs COPY_SRC) back to the CPU. */
export async function readBuffer(
  device: GPUDevice,
  buffer: GPUBuffer,
  byteLength: number,
  offset = 0,
): Promise<ArrayBuffer> {
  const copySize = Math.ceil(byteLength / 4) * 4;
  const staging = device.createBuffer({ size: Math.max(4, copySize), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    const encoder = device.createCommandEncoder({ label: 'readBuffer' });
    encoder.copyBufferToBuffer(buffer, offset, staging, 0, copySize);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ, 0, copySize);
    const bytes = staging.getMappedRange(0, copySize).slice(0, byteLength);
    staging.unmap();
    return bytes;
  } finally {
    staging.destroy();
  }
}

export async function readF32(device: GPUDevice, buffer: GPUBuffer, length: number, offset = 0): Promise<Float32Array> {
  return new Float32Array(await readBuffer(device, buffer, length * 4, offset));
}
