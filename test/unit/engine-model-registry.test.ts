import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { ModelRegistry, openModel } from '../../src/engine/model-registry.ts';
import { makeTestModel, type TestModel } from '../support/test-models.ts';

describe('ModelRegistry', () => {
  test('resolves ids and aliases; unknown names are a 404 naming the available models', () => {
    const registry = new ModelRegistry([
      { id: 'a', aliases: ['alpha'], gguf: new Uint8Array(8) },
      { id: 'b', hfDir: 'http://127.0.0.1/models/b/' },
    ]);
    expect(registry.resolve('alpha').id).toBe('a');
    expect(registry.resolve('b').id).toBe('b');
    expect(() => registry.resolve('c')).toThrow(expect.objectContaining({ kind: 'not_found', code: 'model_not_found', param: 'model' }));
    expect(() => registry.resolve('c')).toThrow(/available: a, b/);
  });

  test('rejects duplicate names and sources with neither or both of gguf and hfDir', () => {
    expect(() => new ModelRegistry([{ id: 'a', gguf: new Uint8Array(8) }, { id: 'b', aliases: ['a'], gguf: new Uint8Array(8) }])).toThrow(/used twice/);
    expect(() => new ModelRegistry([{ id: 'a' }])).toThrow(/exactly one of gguf or hfDir/);
    expect(() => new ModelRegistry([{ id: 'a', gguf: new Uint8Array(8), hfDir: 'x' }])).toThrow(/exactly one/);
  });
});

describe('openModel', () => {
  let model: TestModel;
  beforeAll(async () => {
    model = await makeTestModel({ arch: 'qwen3', type: 'F16', seed: 4, hidden: 64, heads: 4, kvHeads: 2, tiedEmbeddings: true });
  });

  test('a GGUF file and its Hugging Face directory open to the same config, tokenizer and tensor names', async () => {
    const gguf = await openModel({ id: 'g', gguf: new Uint8Array(readFileSync(model.ggufPath)) });
    const files: Record<string, Uint8Array> = {};
    for (const name of readdirSync(model.hfDir)) files[name] = new Uint8Array(readFileSync(join(model.hfDir, name)));
    const hf = await openModel({ id: 'h', hfDir: files });
    for (const key of ['arch', 'layers', 'hidden', 'intermediate', 'heads', 'kvHeads', 'headDim', 'vocabSize', 'tiedEmbeddings', 'qkNorm'] as const) {
      expect(hf.config[key], key).toEqual(gguf.config[key]);
    }
    expect(gguf.config.ropeStyle).toBe('neox');
    expect(new Set(hf.tensors.map((t) => t.name))).toEqual(new Set(gguf.tensors.map((t) => t.name)));
    const text = 'Hello, café!';
    expect(hf.tokenizer.encode(text)).toEqual(gguf.tokenizer.encode(text));
  });

  test('a directory without config.json is a clear error', async () => {
    await expect(openModel({ id: 'x', hfDir: { 'tokenizer.json': new Uint8Array(2) } })).rejects.toThrow(/no config\.json/);
  });
});
