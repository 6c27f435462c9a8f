// Where the service worker runs its engine (src/sw/engine-placement.ts): in itself only when it has WebGPU and an
// adapter; in a page's dedicated worker when forced, without navigator.gpu, or when requestAdapter() gives null or
// throws, with the reason. The adapter is asked for exactly once per decision. The real navigator.gpu of this
// Chromium (SwiftShader) gives an adapter, so it keeps the engine in the worker.
import { describe, expect, it } from 'vitest';
import { decideEnginePlacement } from '../../src/sw/engine-placement.ts';

const plainUrl = 'http://127.0.0.1:4173/sw.js';

/** A GPU whose requestAdapter() answers `answer` and counts its calls. */
function fakeGpu(answer: () => Promise<GPUAdapter | null>): { gpu: GPU; calls: () => number } {
  let calls = 0;
  const gpu = {
    requestAdapter: () => {
      calls += 1;
      return answer();
    },
  } as unknown as GPU;
  return { gpu, calls: () => calls };
}

describe('decideEnginePlacement', () => {
  it('runs the engine in the service worker when requestAdapter() gives an adapter (the real one here)', async () => {
    expect(await decideEnginePlacement(plainUrl, navigator.gpu)).toEqual({ where: 'service-worker' });
  });

  it('falls back to a page worker when requestAdapter() returns null, asking once, with the reason', async () => {
    const { gpu, calls } = fakeGpu(async () => null);
    const placement = await decideEnginePlacement(plainUrl, gpu);
    expect(placement).toEqual({ where: 'page-worker', reason: 'no-adapter', detail: expect.stringContaining('returned null') });
    expect(calls()).toBe(1);
  });

  it('falls back when requestAdapter() throws, and says what it threw', async () => {
    const { gpu } = fakeGpu(() => Promise.reject(new Error('adapter blocked by policy')));
    const placement = await decideEnginePlacement(plainUrl, gpu);
    expect(placement).toMatchObject({ where: 'page-worker', reason: 'no-adapter' });
    expect(placement.where === 'page-worker' && placement.detail).toContain('adapter blocked by policy');
  });

  it('falls back without navigator.gpu, and when the script URL forces it (without asking for an adapter)', async () => {
    expect(await decideEnginePlacement(plainUrl, undefined)).toMatchObject({ where: 'page-worker', reason: 'no-webgpu' });
    const { gpu, calls } = fakeGpu(async () => null);
    expect(await decideEnginePlacement(`${plainUrl}?engine=worker`, gpu)).toMatchObject({ where: 'page-worker', reason: 'forced' });
    expect(calls()).toBe(0);
  });
});
