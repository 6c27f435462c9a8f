// The device layer on the real adapter (headless Chromium): adapter/device acquisition, limits and features,
// errors, pipeline cache, buffer pool, dispatch (bind groups, the x/y split) and timestamp timing.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { acquireGpu, GpuError, withGpuErrorCheck, type GpuContext } from '../../src/gpu/device.ts';
import { bindGroupFor, ComputeBatch, splitWorkgroups } from '../../src/gpu/dispatch.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { createGpuTimer } from '../../src/gpu/timing.ts';
import { createEmptyStorageBuffer, readBuffer } from '../../src/gpu/transfer.ts';

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.destroy());

describe('acquireGpu', () => {
  test('requests the adapter limits and the optional features it has', async () => {
    const adapter = gpu.adapter;
    expect(gpu.limits.maxStorageBufferBindingSize).toBe(adapter.limits.maxStorageBufferBindingSize);
    expect(gpu.limits.maxBufferSize).toBe(adapter.limits.maxBufferSize);
    expect(gpu.limits.maxComputeWorkgroupStorageSize).toBe(adapter.limits.maxComputeWorkgroupStorageSize);
    expect(gpu.limits.maxComputeInvocationsPerWorkgroup).toBe(adapter.limits.maxComputeInvocationsPerWorkgroup);
    expect(gpu.limits.maxStorageBuffersPerShaderStage).toBe(adapter.limits.maxStorageBuffersPerShaderStage);
    expect(gpu.device.limits.maxStorageBufferBindingSize).toBe(adapter.limits.maxStorageBufferBindingSize);
    expect(gpu.features.f16).toBe(adapter.features.has('shader-f16'));
    expect(gpu.features.subgroups).toBe(adapter.features.has('subgroups'));
    expect(gpu.features.timestamps).toBe(adapter.features.has('timestamp-query'));
    expect(typeof gpu.adapterInfo.isFallbackAdapter).toBe('boolean');
    expect(typeof gpu.adapterInfo.description).toBe('string');
  });

  test('forceFallbackF32 leaves shader-f16 off', async () => {
    const plain = await acquireGpu({ forceFallbackF32: true });
    expect(plain.features.f16).toBe(false);
    expect(plain.device.features.has('shader-f16')).toBe(false);
    plain.destroy();
  });

  test('no WebGPU and no adapter are specific errors', async () => {
    await expect(acquireGpu({ gpu: null })).rejects.toMatchObject({ name: 'GpuError', code: 'no-webgpu' });
    const noAdapter = { requestAdapter: async () => null } as unknown as GPU;
    await expect(acquireGpu({ gpu: noAdapter })).rejects.toMatchObject({ name: 'GpuError', code: 'no-adapter' });
  });

  test('a lost device resolves `lost` and makes throwIfFailed throw device-lost', async () => {
    const doomed = await acquireGpu();
    doomed.throwIfFailed();
    doomed.destroy();
    const info = await doomed.lost;
    expect(info.reason).toBe('destroyed');
    expect(doomed.isLost).toBe(true);
    expect(() => doomed.throwIfFailed()).toThrow(expect.objectContaining({ code: 'device-lost' }));
  });

  test('uncaptured errors are surfaced to listeners and to throwIfFailed', async () => {
    const own = await acquireGpu();
    const seen: GpuError[] = [];
    own.onUncapturedError((e) => seen.push(e));
    // MAP_READ may only be combined with COPY_DST: a validation error nobody captures.
    own.device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
    await own.device.queue.onSubmittedWorkDone();
    for (let i = 0; i < 50 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen[0]).toBeInstanceOf(GpuError);
    expect(seen[0].code).toBe('validation');
    expect(own.uncapturedErrorCount).toBe(1);
    expect(() => own.throwIfFailed()).toThrow(GpuError);
    own.throwIfFailed(); // reported once
    own.destroy();
  });

  test('withGpuErrorCheck turns a failed allocation into a GpuError', async () => {
    const tooBig = gpu.limits.maxBufferSize + 4;
    await expect(
      withGpuErrorCheck(gpu.device, 'too-big buffer', () => gpu.device.createBuffer({ size: tooBig, usage: GPUBufferUsage.STORAGE })),
    ).rejects.toMatchObject({ name: 'GpuError', code: expect.stringMatching(/out-of-memory|validation/) });
  });
});

const writeIndex = {
  name: 'write_index',
  code: /* wgsl */ `
    override VALUE: u32 = 1u;
    @group(0) @binding(0) var<storage, read_write> out: array<u32>;
    @compute @workgroup_size(1)
    fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
      let i = wid.x + wid.y * nwg.x;
      if (i < arrayLength(&out)) { out[i] = i * VALUE + 1u; }
    }`,
};

describe('PipelineCache', () => {
  test('builds a pipeline once per (shader, entry point, constants)', async () => {
    const cache = new PipelineCache(gpu.device);
    const a = await cache.get(writeIndex, { VALUE: 2 });
    expect(await cache.get(writeIndex, { VALUE: 2 })).toBe(a);
    expect(cache.peek(writeIndex, { VALUE: 2 })).toBe(a);
    const b = await cache.get(writeIndex, { VALUE: 3 });
    expect(b).not.toBe(a);
    expect(cache.size).toBe(2);
    expect(cache.peek(writeIndex, { VALUE: 4 })).toBeUndefined();
  });

  test('a WGSL error rejects with shader-compilation and the compiler message', async () => {
    const cache = new PipelineCache(gpu.device);
    const broken = { name: 'broken', code: '@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }' };
    await expect(cache.get(broken)).rejects.toMatchObject({ name: 'GpuError', code: 'shader-compilation' });
  });
});

describe('dispatch', () => {
  test('splitWorkgroups keeps each dimension under the limit with little waste', () => {
    expect(splitWorkgroups(7, 65535)).toEqual([7, 1]);
    expect(splitWorkgroups(65535, 65535)).toEqual([65535, 1]);
    expect(splitWorkgroups(65536, 65535)).toEqual([32768, 2]);
    const [x, y] = splitWorkgroups(200_001, 65535);
    expect(x).toBeLessThanOrEqual(65535);
    expect(x * y).toBeGreaterThanOrEqual(200_001);
    expect(x * y - 200_001).toBeLessThan(y);
    expect(() => splitWorkgroups(65535 * 65535 + 1, 65535)).toThrow(GpuError);
  });

  test('a 1-D count over the per-dimension limit reaches every workgroup exactly once', async () => {
    const count = gpu.limits.maxComputeWorkgroupsPerDimension + 3;
    const cache = new PipelineCache(gpu.device);
    const pipeline = await cache.get(writeIndex, { VALUE: 1 });
    const out = createEmptyStorageBuffer(gpu.device, (count + 5) * 4);
    const batch = new ComputeBatch(gpu, 'split');
    // Bind only `count` words so that workgroups past the count (x*y > count) write nothing.
    batch.dispatch(pipeline, [{ buffer: out, size: count * 4 }], count);
    batch.submit();
    const words = new Uint32Array(await readBuffer(gpu.device, out, (count + 1) * 4));
    let wrong = -1;
    for (let i = 0; i < count; i++) if (words[i] !== i + 1) { wrong = i; break; }
    expect(wrong).toBe(-1);
    expect(words[count]).toBe(0);
    out.destroy();
  });

  test('bind groups are cached per pipeline and buffers', async () => {
    const pipeline = await new PipelineCache(gpu.device).get(writeIndex, { VALUE: 5 });
    const a = gpu.device.createBuffer({ size: 64, usage: GPUBufferUsage.STORAGE });
    const b = gpu.device.createBuffer({ size: 64, usage: GPUBufferUsage.STORAGE });
    const g = bindGroupFor(gpu.device, pipeline, [a]);
    expect(bindGroupFor(gpu.device, pipeline, [a])).toBe(g);
    expect(bindGroupFor(gpu.device, pipeline, [b])).not.toBe(g);
    expect(bindGroupFor(gpu.device, pipeline, [{ buffer: a, size: 32 }])).not.toBe(g);
  });

  test('a batch records several passes with a copy between them and times them when it can', async () => {
    const pipeline = await new PipelineCache(gpu.device).get(writeIndex, { VALUE: 10 });
    const timer = createGpuTimer(gpu);
    expect(timer === null).toBe(!gpu.features.timestamps);
    const first = createEmptyStorageBuffer(gpu.device, 16);
    const second = createEmptyStorageBuffer(gpu.device, 32);
    const batch = new ComputeBatch(gpu, 'two passes', timer);
    batch.beginPass('fill');
    batch.dispatch(pipeline, [first], 4);
    batch.copy(first, 0, second, 16, 16);
    batch.beginPass('fill again');
    batch.dispatch(pipeline, [{ buffer: second, size: 8 }], 2);
    batch.submit();
    expect(() => batch.submit()).toThrow(/already submitted/);
    const words = new Uint32Array(await readBuffer(gpu.device, second, 32));
    expect(Array.from(words)).toEqual([1, 11, 0, 0, 1, 11, 21, 31]);
    if (timer) {
      const times = await timer.read();
      expect(times.map((t) => t.label)).toEqual(['fill', 'fill again']);
      // Each pass did work, so its end stamp follows its begin stamp (the timer reports 0 only for a clock that went
      // backwards or a stamp the driver did not write): both passes measured, and as finite integers.
      for (const t of times) {
        expect(Number.isSafeInteger(t.nanoseconds)).toBe(true);
        expect(t.nanoseconds).toBeGreaterThan(0);
      }
      timer.destroy();
    }
  });
});
