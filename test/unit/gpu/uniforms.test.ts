// The one params-uniform allocator (src/gpu/uniforms.ts) over a fake device: one buffer per distinct content,
// least-recently-used eviction at the bound, usage flags read from GPUBufferUsage at call time, and packing; the
// step uniform (one buffer rewritten every step).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packParams, StepUniform, UNIFORM_CAPACITY, UniformAllocator, type UniformDevice } from '../../../src/gpu/uniforms.ts';

interface FakeBuffer { label: string; size: number; usage: number; destroyed: boolean; written: number[] | null; destroy(): void }

function fakeDevice() {
  const created: FakeBuffer[] = [];
  const device = {
    createBuffer(d: GPUBufferDescriptor) {
      const b: FakeBuffer = { label: d.label ?? '', size: d.size, usage: d.usage, destroyed: false, written: null, destroy() { this.destroyed = true; } };
      created.push(b);
      return b as unknown as GPUBuffer;
    },
    queue: {
      writeBuffer(buffer: GPUBuffer, offset: number, data: ArrayBuffer) {
        expect(offset).toBe(0);
        (buffer as unknown as FakeBuffer).written = Array.from(new Uint32Array(data));
      },
    },
  };
  return { device: device as unknown as UniformDevice, created };
}

// Node has no WebGPU globals until a test installs Dawn's; the allocator must read them when it makes a buffer.
const hadGlobal = 'GPUBufferUsage' in globalThis;
const saved = (globalThis as { GPUBufferUsage?: unknown }).GPUBufferUsage;
beforeEach(() => {
  (globalThis as { GPUBufferUsage?: unknown }).GPUBufferUsage = { MAP_READ: 1, MAP_WRITE: 2, COPY_SRC: 4, COPY_DST: 8, INDEX: 16, VERTEX: 32, UNIFORM: 64, STORAGE: 128, INDIRECT: 256, QUERY_RESOLVE: 512 };
});
afterEach(() => {
  if (hadGlobal) (globalThis as { GPUBufferUsage?: unknown }).GPUBufferUsage = saved;
  else delete (globalThis as { GPUBufferUsage?: unknown }).GPUBufferUsage;
});

describe('UniformAllocator', () => {
  it('makes one uniform per distinct content, written once, with UNIFORM | COPY_DST read at call time', () => {
    const { device, created } = fakeDevice();
    const u = new UniformAllocator(device);
    const a = u.params(3, 4, { f32: 0.5 });
    expect(u.params(3, 4, { f32: 0.5 })).toBe(a);
    const b = u.params(3, 5, { f32: 0.5 });
    expect(b).not.toBe(a);
    expect(created).toHaveLength(2);
    expect(u.size).toBe(2);
    expect(created[0]!.usage).toBe(64 | 8);
    expect(created[0]!.size).toBe(16);
    expect(created[0]!.written).toEqual([3, 4, new Uint32Array(new Float32Array([0.5]).buffer)[0], 0]);
    // A different global at call time gives different flags: nothing was captured when the module loaded.
    (globalThis as { GPUBufferUsage?: unknown }).GPUBufferUsage = { UNIFORM: 0x1000, COPY_DST: 0x2000 };
    u.params(9);
    expect(created[2]!.usage).toBe(0x3000);
  });

  it('destroys the least recently used past its capacity, keeping the ones used since', () => {
    const { device, created } = fakeDevice();
    const u = new UniformAllocator(device, 3);
    const first = u.params(1);
    u.params(2);
    u.params(3);
    expect(u.params(1)).toBe(first); // 1 is now the most recent; 2 the oldest
    u.params(4);
    expect(u.size).toBe(3);
    expect(created.map((b) => b.destroyed)).toEqual([false, true, false, false]);
    // 2 was evicted: asking again makes a new buffer and evicts the next oldest (3).
    u.params(2);
    expect(created).toHaveLength(5);
    expect(created.map((b) => b.destroyed)).toEqual([false, true, true, false, false]);
    expect(u.size).toBe(3);
    u.destroy();
    expect(created.every((b) => b.destroyed)).toBe(true);
    expect(u.size).toBe(0);
  });

  it('is bounded at UNIFORM_CAPACITY by default (one bound for every kernel set)', () => {
    const { device, created } = fakeDevice();
    const u = new UniformAllocator(device);
    expect(u.capacity).toBe(UNIFORM_CAPACITY);
    for (let i = 0; i < UNIFORM_CAPACITY + 10; i++) u.params(i);
    expect(u.size).toBe(UNIFORM_CAPACITY);
    expect(created.filter((b) => b.destroyed)).toHaveLength(10);
    expect(created.slice(0, 10).every((b) => b.destroyed)).toBe(true);
    expect(() => new UniformAllocator(device, 0)).toThrow(RangeError);
  });
});

describe('packParams', () => {
  it('packs u32 and f32 fields into whole 16-byte rows and refuses what is not a u32', () => {
    expect(packParams([]).byteLength).toBe(16);
    expect(packParams([1, 2, 3, 4]).byteLength).toBe(16);
    const words = packParams([1, 2, 3, 4, { f32: -2 }]);
    expect(words.byteLength).toBe(32);
    expect(new DataView(words).getFloat32(16, true)).toBe(-2);
    expect(Array.from(new Uint32Array(words)).slice(0, 4)).toEqual([1, 2, 3, 4]);
    expect(new Uint32Array(packParams([0xffffffff]))[0]).toBe(0xffffffff);
    for (const bad of [-1, 1.5, 2 ** 32, Number.NaN]) expect(() => packParams([bad])).toThrow(RangeError);
  });
});

describe('StepUniform', () => {
  it('is one uniform, rounded up to 16-byte rows, rewritten with each step\'s values and destroyed once', () => {
    const { device, created } = fakeDevice();
    const step = new StepUniform(device, 'forward step', 12);
    expect(created.map((b) => [b.label, b.size, b.usage])).toEqual([['forward step', 16, 64 | 8]]);
    step.write(packParams([1, 7, 1]));
    expect(created[0].written).toEqual([1, 7, 1, 0]);
    step.write(packParams([1, 8, 2]));
    expect(created).toHaveLength(1);
    expect(created[0].written).toEqual([1, 8, 2, 0]);
    step.destroy();
    expect(created[0].destroyed).toBe(true);
  });
});
