// The forward plan on Dawn with the bundled toy model: after the first decode step (which builds the m = 1
// program), a decode step creates no buffer and no bind group and writes one uniform (the step's) plus nothing
// else; prefill chunks of a size seen before build nothing either; and Decoder.decode with 2 or 3 steps in flight
// gives the tokens, cache and next logits one step at a time gives, also when the caller stops with steps in flight
// (they are discarded: the cache holds the tokens taken, and decoding on gives the same tokens); loadDecoder builds
// the decoder beside the upload (compiled while the bytes are held back, the same logits) and a failing decoder
// stops the upload with its own error. Dawn needs a Vulkan driver: run with
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
import { openAsBlob } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { create, globals } from 'webgpu';
import { acquireGpu, type GpuContext } from '../../../src/gpu/device.ts';
import { openModel, type OpenedModel } from '../../../src/model/open-model.ts';
import { uploadTensors, type UploadedTensors } from '../../../src/model/upload-weights.ts';
import { assembleDecoderWeights } from '../../../src/model/decoder-weights.ts';
import { Decoder } from '../../../src/model/decoder.ts';
import { PipelineCache } from '../../../src/gpu/pipeline-cache.ts';
import { loadDecoder } from '../../../src/model/load-decoder.ts';
import type { ByteSource } from '../../../src/model/byte-source.ts';
import type { TensorSource } from '../../../src/model/weight-loader.ts';
import { needDawnAdapter } from '../../support/dawn-adapter.ts';

Object.assign(globalThis, globals);
// Dawn's GPU object must outlive every device made from it.
const dawn = create([]);

let gpu: GpuContext | null = null;
let opened: OpenedModel;
let uploaded: UploadedTensors;
let missing = '';

beforeAll(async () => {
  try {
    gpu = await acquireGpu({ gpu: dawn });
  } catch (error) {
    missing = `no WebGPU adapter on Dawn (${error instanceof Error ? error.message : String(error)}); set LD_LIBRARY_PATH and VK_ICD_FILENAMES as this file's header says`;
    return;
  }
  opened = await openModel({ id: 'toy', gguf: await openAsBlob('public/models/toy-qwen3/model.gguf') });
  uploaded = await uploadTensors(gpu.device, opened.tensors);
}, 120_000);
afterAll(() => {
  uploaded?.destroy();
  gpu?.destroy();
});

async function decoderOn(g: GpuContext, maxBatch = 8): Promise<Decoder> {
  const weights = assembleDecoderWeights(opened.config, (name) => uploaded.tensors.get(name), uploaded.ropeFreqFactors);
  // maxSeq 1024 and the toy model's 16 positions per split: decode steps past 16 positions split their attention.
  return Decoder.create(g, opened.config, weights, { maxSeq: 1024, maxBatch, shapes: { forward: { attention: { WORKGROUP_SIZE: 64, SPLIT_POSITIONS: 16 } } } });
}

/** The tensors with their file's bytes held back until release(), and the bytes read since. */
function heldBack(tensors: readonly TensorSource[]): { tensors: TensorSource[]; release: () => void; bytesRead: () => number } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let bytesRead = 0;
  const wrapped = new Map<ByteSource, ByteSource>();
  const wrap = (inner: ByteSource): ByteSource => ({
    name: inner.name,
    size: () => inner.size(),
    read: async (offset, length) => {
      await gate;
      bytesRead += length;
      return inner.read(offset, length);
    },
    async *stream(offset, length, signal) {
      await gate;
      for await (const chunk of inner.stream(offset, length, signal)) {
        bytesRead += chunk.length;
        yield chunk;
      }
    },
  });
  const out = tensors.map((t) => {
    if (!wrapped.has(t.source)) wrapped.set(t.source, wrap(t.source));
    return { ...t, source: wrapped.get(t.source)! };
  });
  return { tensors: out, release, bytesRead: () => bytesRead };
}

/** Counts the device calls that build state (buffers, bind groups) and the queue writes, while `run` runs. */
async function counting<T>(g: GpuContext, run: () => Promise<T>): Promise<{ result: T; buffers: number; bindGroups: number; writes: number }> {
  const device = g.device as GPUDevice & Record<string, unknown>;
  const queue = device.queue as GPUQueue & Record<string, unknown>;
  const counts = { buffers: 0, bindGroups: 0, writes: 0 };
  const wrap = (o: Record<string, unknown>, name: string, key: keyof typeof counts) => {
    const original = o[name] as (...a: unknown[]) => unknown;
    o[name] = (...a: unknown[]) => {
      counts[key]++;
      return original.apply(o, a);
    };
    return () => {
      delete o[name];
      if (o[name] !== original) o[name] = original;
    };
  };
  const restore = [wrap(device, 'createBuffer', 'buffers'), wrap(device, 'createBindGroup', 'bindGroups'), wrap(queue, 'writeBuffer', 'writes')];
  try {
    return { result: await run(), ...counts };
  } finally {
    for (const r of restore) r();
  }
}

describe('forward plan on Dawn', () => {
  // The engine builds its decoder beside the weight upload (src/model/load-decoder.ts): the pipelines compile before
  // a byte of the weights is in, and the decoder computes what one built after the upload does.
  test('loadDecoder: the decoder compiles while the weights are held back, and gives the logits of one built after them', async (ctx) => {
    const g = needDawnAdapter(ctx, gpu, missing);
    const tokens = [1, 2, 3, 4, 5, 6, 7, 8];
    const plain = new PipelineCache(g.device);
    const after = await Decoder.create(g, opened.config, assembleDecoderWeights(opened.config, (name) => uploaded.tensors.get(name), uploaded.ropeFreqFactors), { maxSeq: 256, pipelines: plain });
    const want = (await after.forward(tokens, { logits: 'all' })).logits!;
    want.push(...(await after.forward([9], { logits: 'last' })).logits!);
    after.destroy();

    const held = heldBack(opened.tensors);
    const pipelines = new PipelineCache(g.device);
    const loading = loadDecoder(g, opened.config, held.tensors, { decoder: { maxSeq: 256, pipelines } });
    for (let waited = 0; pipelines.size < plain.size && waited < 60_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    expect({ pipelines: pipelines.size, bytesRead: held.bytesRead() }).toEqual({ pipelines: plain.size, bytesRead: 0 });
    held.release();
    const { uploaded: early, decoder } = await loading;
    try {
      const got = (await decoder.forward(tokens, { logits: 'all' })).logits!;
      got.push(...(await decoder.forward([9], { logits: 'last' })).logits!);
      expect(got.map((row) => Array.from(row))).toEqual(want.map((row) => Array.from(row)));
    } finally {
      decoder.destroy();
      early.destroy();
    }
  }, 120_000);

  test('loadDecoder: a decoder that fails stops the upload, and its error is the one thrown', async (ctx) => {
    const g = needDawnAdapter(ctx, gpu, missing);
    const held = heldBack(opened.tensors);
    const loading = loadDecoder(g, opened.config, held.tensors, { decoder: { maxSeq: 2 ** 30 } });
    const outcome = loading.then(() => 'loaded', (error: unknown) => error);
    await new Promise((r) => setTimeout(r, 200)); // the KV cache refused meanwhile, the bytes still held back
    held.release();
    const error = await outcome;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/KV cache of 1073741824 positions/);
    const total = opened.tensors.reduce((s, t) => s + t.byteLength, 0);
    expect(held.bytesRead()).toBeLessThan(total);
  });

  test('a decode step builds nothing and writes only the step uniform; a prefill chunk size seen before builds nothing', async (ctx) => {
    const g = needDawnAdapter(ctx, gpu, missing);
    const decoder = await decoderOn(g);
    try {
      let { nextToken } = await decoder.forward([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
      nextToken = (await decoder.forward([nextToken])).nextToken; // builds the m = 1 program
      for (const _ of [0, 1, 2, 3, 4, 5, 6, 7]) {
        // Positions 13..20: past 16 the attention splits, with no new state either.
        const step = await counting(g, () => decoder.forward([nextToken]));
        expect({ buffers: step.buffers, bindGroups: step.bindGroups, writes: step.writes }).toEqual({ buffers: 0, bindGroups: 0, writes: 1 });
        nextToken = step.result.nextToken;
      }
      await decoder.forward([5, 6, 7]); // builds the m = 3 program
      const again = await counting(g, () => decoder.forward([8, 9, 10]));
      // The uploaded tokens and the step uniform.
      expect({ buffers: again.buffers, bindGroups: again.bindGroups, writes: again.writes }).toEqual({ buffers: 0, bindGroups: 0, writes: 2 });
    } finally {
      decoder.destroy();
    }
  }, 300_000);

  /** `count` decode results after `first` with `inFlight` steps submitted, stopping early after `keep` results. */
  async function decodeSome(d: Decoder, first: number, count: number, inFlight: number, keep = count): Promise<number[]> {
    const tokens: number[] = [];
    for await (const r of d.decode(first, { maxSteps: count, inFlight })) {
      tokens.push(r.nextToken);
      if (tokens.length === keep) break;
    }
    return tokens;
  }

  test('decode with 2 and 3 steps in flight gives the tokens, cache and next logits of one step at a time', async (ctx) => {
    const g = needDawnAdapter(ctx, gpu, missing);
    const prompt = [3, 14, 15, 92, 65, 35, 89, 79];
    const one = await decoderOn(g);
    const many = await decoderOn(g);
    try {
      let { nextToken } = await one.forward(prompt);
      const first = nextToken;
      const expected: number[] = [];
      for (let i = 0; i < 24; i++) {
        nextToken = (await one.forward([nextToken])).nextToken;
        expected.push(nextToken);
      }
      for (const inFlight of [1, 2, 3]) {
        many.kv.clear();
        expect((await many.forward(prompt)).nextToken).toBe(first);
        const tokens = await decodeSome(many, first, 24, inFlight);
        expect({ inFlight, tokens }).toEqual({ inFlight, tokens: expected });
        expect(many.kv.tokens).toEqual(one.kv.tokens);
        // The cache holds what one step at a time left: the next step's logits agree.
        const [a, b] = await Promise.all([one.forward([expected[23]], { logits: 'last' }), many.forward([tokens[23]], { logits: 'last' })]);
        expect(Array.from(b.logits![0])).toEqual(Array.from(a.logits![0]));
        one.kv.truncate(one.kv.length - 1);
      }
    } finally {
      one.destroy();
      many.destroy();
    }
  }, 300_000);

  test('stopping with steps in flight discards them: the cache holds exactly the tokens taken', async (ctx) => {
    const g = needDawnAdapter(ctx, gpu, missing);
    const prompt = [7, 1, 8, 2, 8, 1, 8, 2, 8];
    const one = await decoderOn(g);
    const three = await decoderOn(g);
    try {
      const first = (await one.forward(prompt)).nextToken;
      const expected = await decodeSome(one, first, 20, 1);
      const ones = one.kv.tokens.slice();
      expect((await three.forward(prompt)).nextToken).toBe(first);
      // 5 taken of 20: steps 6 and 7 were submitted (inFlight 3) and are discarded.
      const taken = await decodeSome(three, first, 20, 3, 5);
      expect(taken).toEqual(expected.slice(0, 5));
      expect(three.kv.tokens).toEqual(ones.slice(0, prompt.length + 5));
      // Going on from the 5th token (its step, not the discarded one) gives one step at a time's tokens and logits.
      const rest = await decodeSome(three, taken[4], 15, 3);
      expect(rest).toEqual(expected.slice(5));
      expect(three.kv.tokens).toEqual(ones);
      const [a, b] = await Promise.all([one.forward([expected[19]], { logits: 'last' }), three.forward([rest[14]], { logits: 'last' })]);
      expect(Array.from(b.logits![0])).toEqual(Array.from(a.logits![0]));
    } finally {
      one.destroy();
      three.destroy();
    }
  }, 300_000);
});
