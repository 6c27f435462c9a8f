// bench/gpu/models.ts: the GPU bench's fast real-shape models (one generated layer repeated in the GGUF) must be
// GGUF files the engine's reader accepts, with every block present, each layer's tensors holding layer 0's bytes,
// the other tensors unchanged, and the real vocabulary size; a mixture of experts' generated experts repeated to the
// real count (expert e holding generated expert e mod the generated count, the router's rows too).
import { describe, expect, it } from 'vitest';
import { buildTestModel } from '../../../tools/make-test-model/build.ts';
import { readGguf, type GgufFile } from '../../../src/model/gguf.ts';
import { SHAPES, buildBenchModel, concatBytes, repeatExperts, repeatLayers, tinyShape } from '../../../bench/gpu/models.ts';

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

  it('repeats the generated experts to the real count, router rows included, and keeps the rest', async () => {
    const one = concatBytes(buildTestModel({ arch: 'gpt-oss', type: 'Q8_0', expertType: 'MXFP4', layers: 1, hidden: 64, intermediate: 64, experts: 2, expertsUsed: 2, seed: 5 }).files['model.gguf']);
    const eight = concatBytes(repeatExperts(one, 8, 4));
    const a = await readGguf(one);
    const b = await readGguf(eight);
    expect(b.metadata['gpt-oss.expert_count']).toBe(8);
    expect(b.metadata['gpt-oss.expert_used_count']).toBe(4);
    const repeated = a.tensors.filter((t) => t.name.includes('_exps') || t.name.includes('ffn_gate_inp'));
    expect(repeated.map((t) => t.name).sort()).toEqual(['blk.0.ffn_down_exps.bias', 'blk.0.ffn_down_exps.weight', 'blk.0.ffn_gate_exps.bias', 'blk.0.ffn_gate_exps.weight', 'blk.0.ffn_gate_inp.bias', 'blk.0.ffn_gate_inp.weight', 'blk.0.ffn_up_exps.bias', 'blk.0.ffn_up_exps.weight']);
    for (const t of a.tensors) {
      const u = b.tensors.find((x) => x.name === t.name)!;
      const before = bytesOf(a, one, t.name);
      const after = bytesOf(b, eight, t.name);
      if (!repeated.includes(t)) {
        expect(u.shape).toEqual(t.shape);
        expect(Buffer.from(after).equals(Buffer.from(before))).toBe(true);
        continue;
      }
      expect(u.shape).toEqual([8, ...t.shape.slice(1)]); // experts outermost
      const per = before.byteLength / 2;
      for (let e = 0; e < 8; e++) {
        expect(Buffer.from(after.subarray(e * per, (e + 1) * per)).equals(Buffer.from(before.subarray((e % 2) * per, (e % 2 + 1) * per)))).toBe(true);
      }
    }
    expect(() => repeatExperts(one, 7)).toThrow(/multiple/);
  });

  it('builds gpt-oss-20b\'s shape (tiny) with its 32 experts from 4 generated', async () => {
    const model = buildBenchModel({ ...tinyShape(SHAPES['gpt-oss-20b-mxfp4']), vocab: 1000 });
    const file = await readGguf(concatBytes(model.chunks));
    expect(file.metadata['gpt-oss.expert_count']).toBe(32);
    expect(file.metadata['gpt-oss.expert_used_count']).toBe(4);
    expect(file.tensors.find((t) => t.name === 'blk.1.ffn_up_exps.weight')!.shape).toEqual([32, 256, 256]);
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
