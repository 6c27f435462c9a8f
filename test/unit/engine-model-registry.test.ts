import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { detectChatFormat } from '../../src/common/chat-format.ts';
import { ModelRegistry } from '../../src/engine/model-registry.ts';
import { openModel } from '../../src/model/open-model.ts';
import type { ByteSource } from '../../src/model/byte-source.ts';
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

  /** The generated HF folder's files, tokenizer_config.json without its chat_template. */
  function folderWithoutTemplate(): Record<string, Uint8Array> {
    const files: Record<string, Uint8Array> = {};
    for (const name of readdirSync(model.hfDir)) files[name] = new Uint8Array(readFileSync(join(model.hfDir, name)));
    const config = JSON.parse(new TextDecoder().decode(files['tokenizer_config.json'])) as Record<string, unknown>;
    expect(typeof config.chat_template).toBe('string');
    delete config.chat_template;
    files['tokenizer_config.json'] = new TextEncoder().encode(JSON.stringify(config));
    return files;
  }
  const LLAMA3_TEMPLATE = "{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n{{ m['content'] }}<|eot_id|>{% endfor %}";

  test('a chat_template.jinja beside a tokenizer_config.json without chat_template is the chat template (not hermes)', async () => {
    const files = folderWithoutTemplate();
    files['chat_template.jinja'] = new TextEncoder().encode(LLAMA3_TEMPLATE);
    const opened = await openModel({ id: 'jinja', hfDir: files });
    expect(opened.tokenizer.chatTemplate).toBe(LLAMA3_TEMPLATE);
    expect(detectChatFormat(opened.tokenizer.chatTemplate).name).toBe('llama3');
    // Without the file the folder has no template (and would be read as hermes).
    const bare = await openModel({ id: 'bare', hfDir: folderWithoutTemplate() });
    expect(bare.tokenizer.chatTemplate).toBeNull();
  });

  test("gpt-oss-20b's own chat_template.jinja beside a template-less tokenizer_config.json is read as harmony", async () => {
    const files = folderWithoutTemplate();
    files['chat_template.jinja'] = new Uint8Array(readFileSync('test/fixtures/harmony/gpt-oss-20b.jinja'));
    const opened = await openModel({ id: 'gpt-oss-like', hfDir: files });
    expect(detectChatFormat(opened.tokenizer.chatTemplate).name).toBe('harmony');
  });

  test('chat_template.jinja takes priority over tokenizer_config.json chat_template, as transformers reads it', async () => {
    const files: Record<string, Uint8Array> = {};
    for (const name of readdirSync(model.hfDir)) files[name] = new Uint8Array(readFileSync(join(model.hfDir, name)));
    files['chat_template.jinja'] = new TextEncoder().encode(LLAMA3_TEMPLATE);
    const opened = await openModel({ id: 'both', hfDir: files });
    expect(opened.tokenizer.chatTemplate).toBe(LLAMA3_TEMPLATE);
  });

  test('a chat_template.jinja over its bound is refused without reading it', async () => {
    const files: Record<string, Uint8Array | ByteSource> = folderWithoutTemplate();
    let bytesRead = 0;
    const huge: ByteSource = {
      name: 'chat_template.jinja',
      size: async () => 64 << 20,
      read: async (_offset, length) => ((bytesRead += length), new Uint8Array(length)),
      stream: () => {
        throw new Error('not streamed');
      },
    };
    files['chat_template.jinja'] = huge;
    await expect(openModel({ id: 'huge', hfDir: files })).rejects.toThrow(/chat_template\.jinja: 67108864 bytes, above the 4194304-byte limit/);
    // Only the failure cache's fingerprint reads (64 KiB head + 4 KiB tail).
    expect(bytesRead).toBeLessThanOrEqual(68 << 10);
  });

  test('a directory without config.json is a clear error', async () => {
    await expect(openModel({ id: 'x', hfDir: { 'tokenizer.json': new Uint8Array(2) } })).rejects.toThrow(/no config\.json/);
  });
});
