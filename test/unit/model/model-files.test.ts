// GGUF and safetensors readers and the model config: the two files of a generated model hold the same
// weights and describe the same model; headers of every kind read back; bad files fail with clear errors.

import { openAsBlob, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ArrayBufferSource, BlobSource, UrlSource, type ByteSource } from '../../../src/model/byte-source.ts';
import { dequantizeGguf } from '../../../src/model/dequantize.ts';
import { ggufTensor, readGguf } from '../../../src/model/gguf.ts';
import { ggufNameOfHfTensor, llama3RopeFactors, modelConfigFromGguf, modelConfigFromHf } from '../../../src/model/model-config.ts';
import { readSafetensors, readSafetensorsCheckpoint, type ModelFileOpener } from '../../../src/model/safetensors.ts';
import { GgmlType, type TensorType } from '../../../src/model/tensor-types.ts';
import { encodeGgufHeader, gv, type GgufWriteTensor, type GgufWriteValue } from '../../../tools/make-test-model/gguf-writer.ts';
import { unpermuteForInterleavedRope } from '../../../tools/make-test-model/index.ts';
import { makeTestModel, type TestModelOptions } from '../../support/test-models.ts';

function directoryOpener(dir: string): ModelFileOpener {
  return async (name) => new BlobSource(await openAsBlob(join(dir, name)), name);
}

async function readTensorValues(source: ByteSource, type: TensorType, offset: number, byteLength: number): Promise<Float32Array> {
  return dequantizeGguf(type, await source.read(offset, byteLength));
}

/** Index of the first element that differs (-1 when equal in length and values; NaN equals NaN). */
function firstDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) return i;
  return -1;
}

const CASES: TestModelOptions[] = [
  { arch: 'llama', type: 'F32', hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 96 },
  { arch: 'qwen2', type: 'F16', hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 96 },
  { arch: 'qwen3', type: 'BF16', hidden: 64, heads: 4, kvHeads: 2, headDim: 32, intermediate: 96, tiedEmbeddings: true },
  { arch: 'llama', type: 'Q8_0', hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 96, shards: 3 },
  { arch: 'qwen3', type: 'Q4_K' },
  { arch: 'llama', type: 'Q4_0', hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 96, tokenizer: 'spm' },
];

describe.each(CASES)('$arch $type', (options) => {
  test('GGUF and safetensors load to the same values and the same config', async () => {
    const model = await makeTestModel(options);
    const gguf = await readGguf(await openAsBlob(model.ggufPath));
    const checkpoint = await readSafetensorsCheckpoint(directoryOpener(model.hfDir));
    const ggufConfig = modelConfigFromGguf(gguf);
    const hfConfig = modelConfigFromHf(JSON.parse(readFileSync(join(model.hfDir, 'config.json'), 'utf8')), {
      tensorNames: checkpoint.tensors.map((t) => t.name),
    });
    // GGUF stores the epsilon as f32.
    const comparable = (c: typeof ggufConfig) => ({ ...c, format: 0, ropeStyle: 0, rmsEps: Math.fround(c.rmsEps) });
    expect(comparable(ggufConfig)).toEqual(comparable(hfConfig));
    expect(ggufConfig.ropeStyle).toBe(options.arch === 'llama' ? 'interleaved' : 'neox');
    expect(hfConfig.ropeStyle).toBe('neox');
    expect(ggufConfig.qkvBias).toBe(options.arch === 'qwen2');
    expect(ggufConfig.qkNorm).toBe(options.arch === 'qwen3');
    expect(ggufConfig.tiedEmbeddings).toBe(options.tiedEmbeddings === true);
    expect(ggufConfig.vocabSize).toBe(model.vocabSize);

    expect(checkpoint.files.length).toBe(options.shards ?? 1);
    expect(checkpoint.tensors.length).toBe(gguf.tensors.length);
    for (const hfTensor of checkpoint.tensors) {
      const name = ggufNameOfHfTensor(hfTensor.name);
      expect(name, hfTensor.name).not.toBeNull();
      const g = ggufTensor(gguf, name!);
      expect(g.shape, name!).toEqual(hfTensor.shape);
      const hfValues = await readTensorValues(hfTensor.source, hfTensor.type, hfTensor.offset, hfTensor.byteLength);
      let ggufValues = await readTensorValues(gguf.source, g.type, g.offset, g.byteLength);
      const permuted = /attn_(q|k)\.weight$/.exec(name!);
      if (options.arch === 'llama' && permuted) {
        const heads = permuted[1] === 'q' ? ggufConfig.heads : ggufConfig.kvHeads;
        ggufValues = unpermuteForInterleavedRope(ggufValues, g.shape[0], g.shape[1], heads);
      }
      expect(firstDifference(ggufValues, hfValues), name!).toBe(-1);
    }
  });
});

test('Llama-3 RoPE scaling: config.json parameters give the divisors GGUF stores in rope_freqs.weight', async () => {
  const ropeScaling = { factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalContextLength: 64 };
  const model = await makeTestModel({ ...CASES[0], ropeScaling });
  const gguf = await readGguf(await openAsBlob(model.ggufPath));
  const ggufConfig = modelConfigFromGguf(gguf);
  expect(ggufConfig.ropeFreqsTensor).toBe(true);
  const hfConfig = modelConfigFromHf(JSON.parse(readFileSync(join(model.hfDir, 'config.json'), 'utf8')));
  expect(hfConfig.ropeScaling).toEqual({ type: 'llama3', ...ropeScaling });
  const t = ggufTensor(gguf, 'rope_freqs.weight');
  const stored = await readTensorValues(gguf.source, t.type, t.offset, t.byteLength);
  const computed = llama3RopeFactors(hfConfig.ropeTheta, hfConfig.headDim, ropeScaling);
  expect(Array.from(stored)).toEqual(Array.from(computed));
  // The divisors span the whole range: some frequencies kept, some divided by the factor, some in between.
  expect(stored[0]).toBe(1);
  expect(stored[stored.length - 1]).toBe(8);
  expect(stored.some((x) => x > 1 && x < 8)).toBe(true);
});

describe('GGUF header', () => {
  const everyType: Record<string, GgufWriteValue> = {
    'general.architecture': gv.str('qwen3'),
    'u8': { type: 'UINT8', value: 250 },
    'i8': { type: 'INT8', value: -5 },
    'u16': { type: 'UINT16', value: 65000 },
    'i16': { type: 'INT16', value: -32000 },
    'u32': { type: 'UINT32', value: 4000000000 },
    'i32': { type: 'INT32', value: -2000000000 },
    'f32': { type: 'FLOAT32', value: 0.5 },
    'f64': { type: 'FLOAT64', value: Math.PI },
    'u64': { type: 'UINT64', value: 2n ** 60n },
    'u64small': { type: 'UINT64', value: 42n },
    'i64': { type: 'INT64', value: -(2n ** 62n) },
    'bool': gv.bool(true),
    'str': gv.str('héllo 東京 🙂'),
    'strings': gv.strings(['a', '', 'ü']),
    'nested': {
      type: 'ARRAY',
      itemType: 'ARRAY',
      items: [gv.i32s([1, -2]), gv.i32s([]), gv.i32s([3])],
    },
    'general.alignment': gv.u32(64),
  };
  const tensor = { name: 'w', dims: [64, 2], ggmlType: GgmlType.F32, data: new Uint8Array(512) };

  function fileOf(meta: Record<string, GgufWriteValue>, version = 3, tensors: GgufWriteTensor[] = [tensor]): Uint8Array {
    const { header } = encodeGgufHeader(meta, tensors, { version, alignment: 64 });
    const out = new Uint8Array(header.length + tensors.reduce((a, t) => a + Math.ceil(t.data.length / 64) * 64, 0));
    out.set(header);
    return out;
  }

  test.each([2, 3])('every metadata value type reads back (version %i)', async (version) => {
    const file = await readGguf(fileOf(everyType, version));
    expect(file.version).toBe(version);
    expect(file.alignment).toBe(64);
    expect(file.dataOffset % 64).toBe(0);
    expect(file.metadata).toEqual({
      'general.architecture': 'qwen3',
      u8: 250, i8: -5, u16: 65000, i16: -32000, u32: 4000000000, i32: -2000000000, f32: 0.5, f64: Math.PI,
      u64: 2n ** 60n, u64small: 42, i64: -(2n ** 62n), bool: true, str: 'héllo 東京 🙂', strings: ['a', '', 'ü'],
      nested: [[1, -2], [], [3]], 'general.alignment': 64,
    });
    expect(file.metadataTypes.nested).toBe('ARRAY<ARRAY<INT32>>');
    expect(file.metadataTypes.u64).toBe('UINT64');
    expect(file.tensors).toEqual([{ name: 'w', dims: [64, 2], shape: [2, 64], type: 'F32', offset: file.dataOffset, byteLength: 512 }]);
  });

  test('a header larger than the first read is read in growing pieces', async () => {
    const big = { ...everyType, 'tokenizer.ggml.tokens': gv.strings(Array.from({ length: 200_000 }, (_, i) => `token-${i}`)) };
    const file = await readGguf(fileOf(big));
    expect((file.metadata['tokenizer.ggml.tokens'] as string[])[199_999]).toBe('token-199999');
  });

  test('wrong magic', async () => {
    const bytes = fileOf(everyType);
    bytes.set([0x47, 0x47, 0x4a, 0x54]); // "GGJT"
    await expect(readGguf(bytes)).rejects.toThrow(/not a GGUF file: wrong magic "GGJT"/);
  });

  test('unknown version', async () => {
    await expect(readGguf(fileOf(everyType, 1))).rejects.toThrow(/unsupported GGUF version 1 \(supported: 2, 3\)/);
    await expect(readGguf(fileOf(everyType, 4))).rejects.toThrow(/unsupported GGUF version 4/);
  });

  test('truncated inside the header names what it was reading', async () => {
    const bytes = fileOf(everyType);
    const { header } = encodeGgufHeader(everyType, [tensor], { alignment: 64 });
    await expect(readGguf(bytes.subarray(0, 40))).rejects.toThrow(/truncated file: the GGUF header ends inside metadata key 0 \(byte 32\)/);
    await expect(readGguf(bytes.subarray(0, header.length - 70))).rejects.toThrow(/truncated file: the GGUF header ends inside .*"general.alignment"/);
  });

  test('truncated tensor data names the tensor', async () => {
    const bytes = fileOf(everyType);
    await expect(readGguf(bytes.subarray(0, bytes.length - 1))).rejects.toThrow(/truncated file: tensor "w" needs bytes up to \d+ but the file has \d+/);
  });

  test('unsupported tensor type names the tensor and the type', async () => {
    const iq2 = { name: 'blk.0.attn_v.weight', dims: [256, 1], ggmlType: GgmlType.IQ2_XXS, data: new Uint8Array(66) };
    await expect(readGguf(fileOf(everyType, 3, [iq2]))).rejects.toThrow(/Tensor "blk.0.attn_v.weight" has unsupported type IQ2_XXS/);
  });

  test('unsupported architecture is named', async () => {
    const file = await readGguf(fileOf({ ...everyType, 'general.architecture': gv.str('gemma2') }));
    expect(() => modelConfigFromGguf(file)).toThrow(/Unsupported model architecture "gemma2" \(supported: llama, mistral, qwen2, qwen3, gpt-oss, phi3, smollm3, gemma3\)/);
    expect(() => modelConfigFromHf({ model_type: 'gemma2' })).toThrow(/Unsupported model architecture "gemma2"/);
  });

  test('mistral maps to llama', () => {
    const config = modelConfigFromHf({
      model_type: 'mistral', hidden_size: 64, intermediate_size: 128, num_hidden_layers: 1, num_attention_heads: 4,
      num_key_value_heads: 2, vocab_size: 100, rope_theta: 1e6, tie_word_embeddings: false,
      rope_scaling: { rope_type: 'llama3', factor: 32, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 },
    });
    expect(config.arch).toBe('llama');
    expect(config.headDim).toBe(16);
    expect(config.ropeScaling).toEqual({ type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalContextLength: 8192 });
  });
});

describe('safetensors', () => {
  test('a missing shard is named', async () => {
    const model = await makeTestModel(CASES[3]);
    const open = directoryOpener(model.hfDir);
    const missing = 'model-00002-of-00003.safetensors';
    await expect(readSafetensorsCheckpoint((name) => (name === missing ? Promise.resolve(null) : open(name)))).rejects.toThrow(
      /Missing safetensors shard "model-00002-of-00003.safetensors" \(listed in model.safetensors.index.json for tensor "[^"]+"\)/,
    );
  });

  test('truncated file and bad header', async () => {
    const model = await makeTestModel(CASES[0]);
    const bytes = readFileSync(join(model.hfDir, 'model.safetensors'));
    await expect(readSafetensors(bytes.subarray(0, bytes.length - 4), 'm.safetensors')).rejects.toThrow(/m.safetensors: truncated file: tensor "[^"]+" needs bytes/);
    await expect(readSafetensors(bytes.subarray(0, 100), 'm.safetensors')).rejects.toThrow(/truncated file: the safetensors header needs/);
    await expect(readSafetensors(new TextEncoder().encode('GGUF....not safetensors'), 'x')).rejects.toThrow(/not a safetensors file/);
    const i8 = new TextEncoder().encode('{"w":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}}');
    const file = new Uint8Array(8 + i8.length + 2);
    new DataView(file.buffer).setBigUint64(0, BigInt(i8.length), true);
    file.set(i8, 8);
    await expect(readSafetensors(file, 'x')).rejects.toThrow(/Tensor "w" has unsupported safetensors dtype I8/);
  });
});

describe('byte sources', () => {
  let server: Server;
  let baseUrl = '';
  let bytesServed = 0;
  let modelPath = '';

  beforeAll(async () => {
    const model = await makeTestModel({ arch: 'qwen3', type: 'F32' });
    modelPath = model.ggufPath;
    const data = readFileSync(modelPath);
    server = createServer((req, res) => {
      const range = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '');
      if (!range) {
        res.writeHead(200, { 'content-length': data.length });
        bytesServed += data.length;
        res.end(data);
        return;
      }
      const start = Number(range[1]);
      const end = Math.min(Number(range[2]), data.length - 1);
      if (start >= data.length) {
        res.writeHead(416, { 'content-range': `bytes */${data.length}` });
        res.end();
        return;
      }
      res.writeHead(206, { 'content-range': `bytes ${start}-${end}/${data.length}`, 'content-length': end - start + 1 });
      bytesServed += end - start + 1;
      res.end(data.subarray(start, end + 1));
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a URL is read with Range requests, header only, and streams tensor data', async () => {
    bytesServed = 0;
    const file = await readGguf(`${baseUrl}/model.gguf`);
    expect(file.fileSize).toBe(readFileSync(modelPath).length);
    expect(bytesServed).toBeLessThan(file.fileSize / 2);
    const t = ggufTensor(file, 'blk.1.ffn_down.weight');
    const chunks: Uint8Array[] = [];
    for await (const chunk of file.source.stream(t.offset, t.byteLength)) chunks.push(chunk.slice());
    const streamed = new Uint8Array(t.byteLength);
    let at = 0;
    for (const c of chunks) { streamed.set(c, at); at += c.length; }
    expect(Buffer.compare(streamed, readFileSync(modelPath).subarray(t.offset, t.offset + t.byteLength))).toBe(0);
    expect(await file.source.read(t.offset, 16)).toEqual(streamed.subarray(0, 16));
    await expect(new UrlSource(`${baseUrl}/model.gguf`).read(file.fileSize - 4, 8)).rejects.toThrow(/truncated file/);
  });

  test('ArrayBuffer and Blob sources read the same bytes', async () => {
    const data = new Uint8Array(readFileSync(modelPath));
    const a = new ArrayBufferSource(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
    const b = new BlobSource(await openAsBlob(modelPath));
    expect(await a.read(1000, 300)).toEqual(await b.read(1000, 300));
  });
});
