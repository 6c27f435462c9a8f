// The weight loader in Chromium on a real WebGPU adapter: generated models (built in the page) stream into
// GPU buffers, read back equal to the TypeScript dequantization of the file bytes, split by rows when a
// tensor exceeds the part size, report progress per file, and leave nothing behind on failure.
// The read-back is decoded with the GPU block layouts written out below (as the WGSL decoders read them), not
// with the weight-format table's repack the loader itself uses, so a wrong table entry fails here.

import { beforeAll, describe, expect, test } from 'vitest';
import { BlobSource, type ByteSource } from '../../src/model/byte-source.ts';
import { dequantizeGguf } from '../../src/model/dequantize.ts';
import { readGguf } from '../../src/model/gguf.ts';
import { readSafetensorsCheckpoint } from '../../src/model/safetensors.ts';
import { floatToHalf, halfToFloat, type TensorType } from '../../src/model/tensor-types.ts';
import {
  ggufTensorSources,
  loadTensorsToGpu,
  safetensorsTensorSources,
  type LoadProgress,
  type LoadedTensor,
  type TensorSource,
} from '../../src/model/weight-loader.ts';
import { buildTestModel, type TestModelOptions } from '../../tools/make-test-model/build.ts';

let device: GPUDevice;

beforeAll(async () => {
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('No WebGPU adapter');
  device = await adapter.requestDevice({
    requiredLimits: { maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize, maxBufferSize: adapter.limits.maxBufferSize },
  });
});

function modelFiles(options: TestModelOptions): Map<string, Blob> {
  const { files } = buildTestModel(options);
  return new Map(Object.entries(files).map(([name, chunks]) => [name, new Blob(chunks as BlobPart[])]));
}

async function readBack(buffer: GPUBuffer, size: number): Promise<Uint8Array> {
  const staging = device.createBuffer({ size: (size + 3) & ~3, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, 0, staging, 0, staging.size);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Uint8Array(staging.getMappedRange().slice(0, size));
  staging.unmap();
  staging.destroy();
  return out;
}

/**
 * How each block format sits in a GPU buffer, written out from the WGSL decoders' word layouts (independent of
 * src/common/weight-formats.ts): the block's bytes on the GPU, per field [file offset, length, GPU offset], and
 * where the GPU holds an f16 of the file as an f32 (widenedD: [file offset, GPU offset]). Q8_0 and Q4_0 hold d as
 * an f32 in word 0 and their qs from word 1; Q6_K gains two pad bytes at the end (d stays an f16 at byte 208); Q4_K
 * is the file block as is.
 */
const GPU_BLOCKS: Partial<Record<TensorType, { elements: number; fileBytes: number; gpuBytes: number; fields: [number, number, number][]; widenedD?: [number, number] }>> = {
  Q8_0: { elements: 32, fileBytes: 34, gpuBytes: 36, fields: [[2, 32, 4]], widenedD: [0, 0] },
  Q4_0: { elements: 32, fileBytes: 18, gpuBytes: 20, fields: [[2, 16, 4]], widenedD: [0, 0] },
  Q4_K: { elements: 256, fileBytes: 144, gpuBytes: 144, fields: [[0, 144, 0]] },
  Q6_K: { elements: 256, fileBytes: 210, gpuBytes: 212, fields: [[0, 210, 0]] },
};

/** `elements` values from GPU-buffer bytes of `type`: F32 as is, F16 two halves a word, blocks by GPU_BLOCKS. */
function valuesOnGpu(type: TensorType, bytes: Uint8Array, elements: number): Float32Array {
  if (type === 'F32') return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + elements * 4));
  if (type === 'F16') return dequantizeGguf('F16', bytes.subarray(0, elements * 2));
  const layout = GPU_BLOCKS[type];
  if (!layout) throw new Error(`no GPU block layout written for ${type}`);
  const blocks = elements / layout.elements;
  const file = new Uint8Array(blocks * layout.fileBytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0; b < blocks; b++) {
    for (const [from, length, to] of layout.fields) file.set(bytes.subarray(b * layout.gpuBytes + to, b * layout.gpuBytes + to + length), b * layout.fileBytes + from);
    if (layout.widenedD) {
      const [from, to] = layout.widenedD;
      const d = view.getFloat32(b * layout.gpuBytes + to, true);
      const half = floatToHalf(d);
      expect(halfToFloat(half), `${type} block ${b}: d on the GPU is not an f16's value`).toBe(d);
      file[b * layout.fileBytes + from] = half & 0xff;
      file[b * layout.fileBytes + from + 1] = half >> 8;
    }
  }
  return dequantizeGguf(type, file);
}

/** A tensor's values as the GPU holds them (all parts, decoded by valuesOnGpu). */
async function gpuValues(t: LoadedTensor): Promise<Float32Array> {
  const out = new Float32Array(t.rows * t.cols);
  for (const part of t.parts) {
    const elements = part.rowCount * t.cols;
    const bytes = await readBack(part.buffer, part.buffer.size);
    out.set(valuesOnGpu(t.type, bytes, elements), part.rowStart * t.cols);
  }
  return out;
}

function firstDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

const TYPES: TensorType[] = ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K'];

describe.each(TYPES)('%s model', (type) => {
  test('loads into GPU buffers equal to the file dequantized, with row splits', async () => {
    const small = type !== 'Q4_K' && type !== 'Q6_K';
    const files = modelFiles({ arch: 'qwen3', type, layers: 1, ...(small ? { hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 96 } : {}) });
    const gguf = await readGguf(new BlobSource(files.get('model.gguf')!, 'model.gguf'));
    const sources = ggufTensorSources(gguf);
    // Parts of at most ~1/5 of the embedding force splits of the large matrices.
    const embedding = sources.find((s) => s.name === 'token_embd.weight')!;
    const maxPartBytes = Math.ceil(embedding.byteLength / 5 / 4) * 4 + 64;
    const progress: LoadProgress[] = [];
    const loaded = await loadTensorsToGpu(device, sources, { maxPartBytes, extraUsage: GPUBufferUsage.COPY_SRC, onProgress: (p) => progress.push(p) });
    try {
      expect([...loaded.tensors.keys()].sort()).toEqual(sources.map((s) => s.name).sort());
      const split = loaded.tensors.get('token_embd.weight')!;
      expect(split.parts.length).toBeGreaterThan(4);
      for (const part of split.parts) expect(part.buffer.size).toBeLessThanOrEqual(maxPartBytes);
      for (const s of sources) {
        const t = loaded.tensors.get(s.name)!;
        expect(t.fileType).toBe(s.type);
        expect(t.type).toBe(s.type === 'BF16' ? 'F32' : s.type);
        expect(t.parts.reduce((a, p) => a + p.rowCount, 0)).toBe(t.rows);
        const expected = dequantizeGguf(s.type, await s.source.read(s.offset, s.byteLength));
        expect(firstDifference(await gpuValues(t), expected), s.name).toBe(-1);
      }
      const total = sources.reduce((a, s) => a + s.byteLength, 0);
      expect(progress.at(-1)).toEqual({ file: 'model.gguf', fileBytesDone: total, fileBytesTotal: total, bytesDone: total, bytesTotal: total });
      for (let i = 1; i < progress.length; i++) expect(progress[i].bytesDone).toBeGreaterThanOrEqual(progress[i - 1].bytesDone);
    } finally {
      loaded.destroy();
    }
  });
});

describe('weight loader', () => {
  test.each([
    ['Q8_0', false],
    ['F16', false],
    ['F16', true],
  ] as const)('a group of %s tensors (widenF16 %s) shares buffers: each part holds its rows of every member, in member order', async (type, widenF16) => {
    const files = modelFiles({ arch: 'llama', type, layers: 1, hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 96 });
    const gguf = await readGguf(new BlobSource(files.get('model.gguf')!, 'model.gguf'));
    const sources = ggufTensorSources(gguf);
    const gate = sources.find((s) => s.name === 'blk.0.ffn_gate.weight')!;
    const up = sources.find((s) => s.name === 'blk.0.ffn_up.weight')!;
    // Parts of about a third of one member: the 96 rows split into row ranges holding both members' rows.
    const maxPartBytes = Math.ceil((2 * gate.byteLength) / 3 / 64) * 64 + 64;
    const loaded = await loadTensorsToGpu(device, sources, {
      maxPartBytes,
      extraUsage: GPUBufferUsage.COPY_SRC,
      groups: [{ name: 'blk.0.ffn_gate_up.weight', members: [gate.name, up.name] }],
      widenF16,
    });
    try {
      expect(loaded.tensors.has(gate.name)).toBe(false);
      expect(loaded.tensors.has(up.name)).toBe(false);
      const group = loaded.tensors.get('blk.0.ffn_gate_up.weight')!;
      expect(group).toMatchObject({ stacked: 2, rows: 96, cols: 64, type: widenF16 ? 'F32' : type, fileType: type });
      expect(loaded.tensors.get('blk.0.attn_q.weight')!.type).toBe(widenF16 ? 'F32' : type);
      expect(group.parts.length).toBeGreaterThan(2);
      const expected = [gate, up].map(async (s) => dequantizeGguf(s.type, await s.source.read(s.offset, s.byteLength)));
      const [gateValues, upValues] = await Promise.all(expected);
      for (const part of group.parts) {
        expect(part.buffer.size).toBeLessThanOrEqual(maxPartBytes);
        const elements = part.rowCount * group.cols;
        const values = valuesOnGpu(group.type, await readBack(part.buffer, part.buffer.size), 2 * elements);
        const from = part.rowStart * group.cols;
        expect(firstDifference(values.subarray(0, elements), gateValues.subarray(from, from + elements))).toBe(-1);
        expect(firstDifference(values.subarray(elements), upValues.subarray(from, from + elements))).toBe(-1);
      }
    } finally {
      loaded.destroy();
    }
  });

  test('a concatenated group (q, k, v) is one matrix of their rows, split into parts anywhere', async () => {
    const files = modelFiles({ arch: 'llama', type: 'Q8_0', layers: 1, hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 96 });
    const sources = ggufTensorSources(await readGguf(new BlobSource(files.get('model.gguf')!, 'model.gguf')));
    const members = ['blk.0.attn_q.weight', 'blk.0.attn_k.weight', 'blk.0.attn_v.weight'].map((n) => sources.find((s) => s.name === n)!);
    // 64 + 32 + 32 rows of 64 Q8_0 weights (72 bytes on the GPU): parts of 17 rows cut inside every member.
    const loaded = await loadTensorsToGpu(device, sources, {
      maxPartBytes: 17 * 72,
      extraUsage: GPUBufferUsage.COPY_SRC,
      groups: [{ name: 'blk.0.attn_qkv.weight', members: members.map((m) => m.name), layout: 'concatenated' }],
    });
    try {
      const qkv = loaded.tensors.get('blk.0.attn_qkv.weight')!;
      expect(qkv).toMatchObject({ rows: 128, cols: 64, stacked: 1, shape: [128, 64] });
      expect(qkv.parts.map((p) => p.rowCount)).toEqual([17, 17, 17, 17, 17, 17, 17, 9]);
      const expected = new Float32Array(128 * 64);
      let at = 0;
      for (const m of members) {
        const values = dequantizeGguf(m.type, await m.source.read(m.offset, m.byteLength));
        expected.set(values, at);
        at += values.length;
      }
      expect(firstDifference(await gpuValues(qkv), expected)).toBe(-1);
      for (const m of members) expect(loaded.tensors.has(m.name)).toBe(false);
    } finally {
      loaded.destroy();
    }
  });

  test('a group of tensors of different types or shapes is refused, naming both', async () => {
    const files = modelFiles({ arch: 'llama', type: 'F32', layers: 1, hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 96 });
    const sources = ggufTensorSources(await readGguf(new BlobSource(files.get('model.gguf')!, 'model.gguf')));
    await expect(loadTensorsToGpu(device, sources, { groups: [{ name: 'g', members: ['blk.0.ffn_gate.weight', 'blk.0.ffn_down.weight'] }] })).rejects.toThrow(
      'Tensor group "g": "blk.0.ffn_down.weight" is F32 [64, 96], "blk.0.ffn_gate.weight" is F32 [96, 64]',
    );
    await expect(loadTensorsToGpu(device, sources, { groups: [{ name: 'g', members: ['blk.0.ffn_gate.weight', 'nope'] }] })).rejects.toThrow('Tensor group "g": no tensor "nope"');
  });

  test('sharded safetensors load under GGUF names with progress per file', async () => {
    const files = modelFiles({ arch: 'llama', type: 'BF16', layers: 2, hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 96, shards: 2 });
    const checkpoint = await readSafetensorsCheckpoint(async (name) => {
      const blob = files.get(`hf/${name}`);
      return blob ? new BlobSource(blob, name) : null;
    });
    const sources = safetensorsTensorSources(checkpoint);
    expect(sources.map((s) => s.name)).toContain('blk.1.ffn_down.weight');
    const progress: LoadProgress[] = [];
    const loaded = await loadTensorsToGpu(device, sources, { extraUsage: GPUBufferUsage.COPY_SRC, onProgress: (p) => progress.push(p) });
    try {
      const lastPerFile = new Map(progress.map((p) => [p.file, p]));
      expect([...lastPerFile.keys()].sort()).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
      for (const p of lastPerFile.values()) expect(p.fileBytesDone).toBe(p.fileBytesTotal);
      const t = loaded.tensors.get('blk.1.ffn_down.weight')!;
      expect(t.type).toBe('F32');
      const s = sources.find((x) => x.name === 'blk.1.ffn_down.weight')!;
      expect(firstDifference(await gpuValues(t), dequantizeGguf('BF16', await s.source.read(s.offset, s.byteLength)))).toBe(-1);
    } finally {
      loaded.destroy();
    }
  });

  test.each([
    [false, [[0, 2], [2, 2], [4, 2], [6, 1]]],
    [true, [[0, 1], [1, 1], [2, 1], [3, 1], [4, 1], [5, 1], [6, 1]]],
  ])('F16 rows of odd length (widenF16 %s) split on even rows (widened: any) and read back whole', async (widenF16, split) => {
    const values = Float32Array.from({ length: 7 * 3 }, (_, i) => i - 10.5);
    const halves = new Uint16Array(values.length);
    const view = new DataView(halves.buffer);
    values.forEach((v, i) => view.setUint16(2 * i, float16Bits(v), true));
    const source = new BlobSource(new Blob([new Uint8Array(8), new Uint8Array(halves.buffer)]), 'odd.bin');
    const loaded = await loadTensorsToGpu(device, [{ name: 'odd', type: 'F16', shape: [7, 3], source, offset: 8, byteLength: halves.byteLength }], {
      maxPartBytes: 16,
      extraUsage: GPUBufferUsage.COPY_SRC,
      widenF16,
    });
    try {
      const t = loaded.tensors.get('odd')!;
      expect(t.type).toBe(widenF16 ? 'F32' : 'F16');
      expect(t.parts.map((p) => [p.rowStart, p.rowCount])).toEqual(split);
      expect(firstDifference(await gpuValues(t), values)).toBe(-1);
    } finally {
      loaded.destroy();
    }
  });

  test('a failure part-way destroys every buffer it made and names the problem', async () => {
    const files = modelFiles({ arch: 'qwen2', type: 'Q8_0', layers: 1, hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 96 });
    const gguf = await readGguf(new BlobSource(files.get('model.gguf')!, 'model.gguf'));
    const inner = gguf.source;
    const failing: ByteSource = {
      name: 'flaky.gguf',
      size: () => inner.size(),
      read: (o, n) => inner.read(o, n),
      async *stream(offset, length) {
        let sent = 0;
        for await (const chunk of inner.stream(offset, length)) {
          for (let at = 0; at < chunk.length; at += 4096) {
            if (sent > length / 2) throw new Error('flaky.gguf: network connection lost');
            const piece = chunk.subarray(at, at + 4096);
            sent += piece.length;
            yield piece;
          }
        }
      },
    };
    const sources: TensorSource[] = ggufTensorSources(gguf).map((s) => ({ ...s, source: failing }));
    const made: GPUBuffer[] = [];
    const destroyed = new Set<GPUBuffer>();
    const createBuffer = device.createBuffer.bind(device);
    const tracking = Object.create(device) as GPUDevice;
    Object.defineProperty(tracking, 'createBuffer', {
      value: (descriptor: GPUBufferDescriptor) => {
        const buffer = createBuffer(descriptor);
        const destroy = buffer.destroy.bind(buffer);
        Object.defineProperty(buffer, 'destroy', { value: () => { destroyed.add(buffer); destroy(); } });
        made.push(buffer);
        return buffer;
      },
    });
    for (const key of ['pushErrorScope', 'popErrorScope'] as const) Object.defineProperty(tracking, key, { value: device[key].bind(device) });
    Object.defineProperty(tracking, 'queue', { value: device.queue });
    Object.defineProperty(tracking, 'limits', { value: device.limits });
    await expect(loadTensorsToGpu(tracking, sources)).rejects.toThrow(/network connection lost/);
    expect(made.length).toBe(sources.length);
    expect(made.filter((b) => !destroyed.has(b))).toEqual([]);
    await expect(loadTensorsToGpu(device, [{ ...sources[1], shape: [3, 5] }])).rejects.toThrow(/rows of 5 elements are not whole Q8_0 blocks of 32|needs/);
    await expect(loadTensorsToGpu(device, sources, { maxPartBytes: 8 })).rejects.toThrow(/one row \(\d+ bytes on the GPU\) is larger than the largest buffer allowed \(8 bytes\)/);
  });
});

function float16Bits(v: number): number {
  // Exact for the small integers and halves used here.
  const f = new Float32Array([v]);
  const x = new Uint32Array(f.buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  if (((x >>> 23) & 0xff) === 0) return sign;
  return sign | (exp << 10) | ((x >>> 13) & 0x3ff);
}
