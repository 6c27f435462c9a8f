// A WebGPU operation that rejects because its device was destroyed: mapAsync's DOMException can arrive before the
// device's `lost` promise settles (CI saw the raw OperationError escape the engine instead of an EngineError).
// lostDeviceError turns it into the 'device-lost' GpuError once `lost` settles, and leaves every other error alone.
import { describe, expect, it } from 'vitest';
import { GpuError, lostDeviceError } from '../../../src/gpu/device.ts';

function context(lostAfterMs: number | null) {
  const lost = new Promise<{ reason: string; message: string }>((resolve) => {
    if (lostAfterMs !== null) setTimeout(() => resolve({ reason: 'destroyed', message: '' }), lostAfterMs);
  });
  return { isLost: false, lost } as never;
}

describe('lostDeviceError', () => {
  it('a DOMException that comes before the device reports its loss is the device-lost GpuError', async () => {
    const rejection = new DOMException('Device is lost', 'OperationError');
    const error = await lostDeviceError(rejection, context(30));
    expect(error).toBeInstanceOf(GpuError);
    expect((error as GpuError).code).toBe('device-lost');
    expect((error as GpuError).message).toMatch(/lost/);
    expect((error as GpuError).cause).toBe(rejection);
  });

  it('a device already lost: at once', async () => {
    const error = await lostDeviceError(new DOMException('aborted', 'AbortError'), { isLost: true, lost: new Promise(() => {}) } as never);
    expect((error as GpuError).code).toBe('device-lost');
  });

  it('a DOMException on a device that stays alive is returned as it is, after the bounded wait', async () => {
    const rejection = new DOMException('mapping failed', 'OperationError');
    const started = Date.now();
    expect(await lostDeviceError(rejection, context(null), 50)).toBe(rejection);
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
  });

  it('other errors, and no context, pass through unchanged without waiting', async () => {
    const gpu = new GpuError('validation', 'bad bind group');
    expect(await lostDeviceError(gpu, context(10))).toBe(gpu);
    const plain = new Error('not a GPU error');
    expect(await lostDeviceError(plain, context(null), 60_000)).toBe(plain);
    const dom = new DOMException('x', 'OperationError');
    expect(await lostDeviceError(dom, null)).toBe(dom);
  });
});
