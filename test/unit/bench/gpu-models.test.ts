// bench/gpu/models.ts: the GPU bench's fast real-shape models (one generated layer repeated in the GGUF) must be
// GGUF files the engine's reader accepts, with every block present, each layer's tensors holding layer 0's bytes,
// the other tensors unchanged, and the real vocabulary size.
import { describe, expect, it } from 'vitest';
import { buildTestModel } from '../../../tools/make-test-model/build.ts';
import { readGguf, type GgufFile } from '../../../src/model/gguf.ts';
import { SHAPES, buildBenchModel, concatBytes, repeatLayers, tinyShape } from '../../../bench/gpu/models.ts';

function bytesOf(file: GgufFile, bytes: Uint8Array, name: string): Uint8Array {
  const t = file.tensors.find((x) => x.name === name);
  if (!t) throw new Error(`no tensor ${name}`);
  return bytes.subarray(t.offset, t.offset + t.byteLength);
}

describe('bench/gpu models', () => {
  it('repeats layer 0 into every block and keeps the rest', async () => {
    const one = concatBytes(buildTestModel({ arch: 'qwen3', type: 'Q4_K', layers: 1, hidden: 256, intermediate: 512, seed: 3 }).files['model.gguf']);
    const three = concatBytes(repeatLayers(one, 3));
    const a = await readGguf(one);
    const b = await readGguf(three);
    expect(b.metadata['qwen3.block_count']).toBe(3);
    expect(b.tensors.length).toBe(a.tensors.filter((t) => !t.name.startsWith('blk.')).length + 3 * a.tensors.filter((t) => t.name.startsWith('blk.0.')).length);
    for (const t of a.tensors) {
      const names = t.name.startsWith('blk.0.') ? [0, 1, 2].map((l) => `blk.${l}.${t.name.slice(6)}`) : [t.name];
      for (const name of names) {
        const u = b.tensors.find((x) => x.name === name)!;
        expect(u.type).toBe(t.type);
        expect(u.shape).toEqual(t.shape);
        expect(Buffer.from(bytesOf(b, three, name)).equals(Buffer.from(bytesOf(a, one, t.name)))).toBe(true);
      }
    }
    for (const key of Object.keys(a.metadata)) if (key !== 'qwen3.block_count') expect(b.metadata[key]).toEqual(a.metadata[key]);
  });

  it('builds a shape at its vocabulary size with its layer count', async () => {
    const shape = { ...tinyShape(SHAPES['llama-3.2-1b-q4_k']), vocab: 1000 };
    const model = buildBenchModel(shape);
    const file = await readGguf(concatBytes(model.chunks));
    expect(file.metadata['llama.block_count']).toBe(2);
    expect((file.metadata['tokenizer.ggml.tokens'] as string[]).length).toBe(1000);
    expect(file.tensors.find((t) => t.name === 'token_embd.weight')!.shape).toEqual([1000, 256]);
    expect(file.tensors.filter((t) => t.name.startsWith('blk.1.')).length).toBeGreaterThan(5);
  });
});
