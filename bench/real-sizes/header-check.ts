// gpt-oss-20b (the catalog's 12 GB MXFP4 file) cannot be loaded on this machine's CPU adapter, so its real shape
// gets the header and limits check alone:
//   npx tsx bench/real-sizes/header-check.ts gpt-oss-20b-mxfp4     (prints one JSON object)
// 1. A header of the real file's shape: make-test-model writes a one-layer gpt-oss (Q8_0 matrices, MXFP4 experts,
//    as llama-quantize's MXFP4_MOE and ggml-org's file hold them) at the real vocabulary but 128 wide; its
//    metadata is copied with the widths (embedding, expert FFN) set to the real ones and block_count to the real
//    layer count, and the tensor infos are rewritten with the real dimensions for every layer, offsets as the
//    types' block sizes give them. The file is the header followed by a sparse hole of the data's length (no disk).
// 2. The runtime's own readers on it: readGguf (the parser the download's header check runs), verifyHeader (what
//    the catalog's header check accepts), modelConfigFromGguf (the decoder's configuration).
// 3. Limits: per tensor, the GPU bytes (the weight-format table's GPU block size) and the largest unit the loader
//    cannot split (a row; for an expert tensor, one expert's matrix, times 2 for the stacked gate/up), against
//    WebGPU's default binding limit (128 MiB) and the 1 GiB this Chromium's SwiftShader adapter grants; the total
//    against the catalog's minGpuMemoryBytes.
import { closeSync, ftruncateSync, fstatSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import type { ByteSource } from '../../src/model/byte-source.ts';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTestModel } from '../../tools/make-test-model/build.ts';
import { buildByteLevelBpeVocab, tokenizerConfigJson, tokenizerJson } from '../../tools/make-test-model/byte-level-bpe.ts';
import { realTokenizerVocab } from '../../tools/make-test-model/real-tokenizer.ts';
import { CHATML_TOOLS_TEMPLATE } from '../../tools/make-test-model/chatml-template.ts';
import { readGguf } from '../../src/model/gguf.ts';
import { modelConfigFromGguf } from '../../src/model/model-config.ts';
import { verifyHeader } from '../../src/model-store/gguf-header-check.ts';
import { WEIGHT_FORMATS } from '../../src/common/weight-formats.ts';
import { remoteCatalog } from '../../src/model-store/remote-catalog.ts';
import { realSizeShape } from './shapes.ts';
import { concatBytes, encodeGgufHeader, readGgufLayout, type GgufInfo } from '../gpu/models.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TINY = 128;

/** The real-shape header (bytes) and the data length after it. */
function realShapeHeader(id: string): { header: Uint8Array; dataBytes: number; tensors: number } {
  const shape = realSizeShape(id);
  const hidden = shape.options.hidden!;
  const layers = shape.options.layers!;
  const bpe = buildByteLevelBpeVocab(250);
  const vocab = realTokenizerVocab(tokenizerJson(bpe), tokenizerConfigJson(bpe, CHATML_TOOLS_TEMPLATE, 4096), { vocabSize: shape.vocab });
  const tiny = buildTestModel({ ...shape.options, type: 'Q8_0', expertType: 'MXFP4', layers: 1, hidden: TINY, intermediate: TINY, ggufOnly: true }, vocab);
  const file = concatBytes(tiny.files['model.gguf']);
  const layout = readGgufLayout(file);
  const kv = file.slice(layout.kvStart, layout.kvEnd);
  const kvView = new DataView(kv.buffer);
  for (const e of layout.entries) {
    if (e.type !== 4) continue;
    if (e.key.endsWith('.embedding_length') || e.key.endsWith('.feed_forward_length') || e.key.endsWith('.expert_feed_forward_length')) kvView.setUint32(e.at - layout.kvStart, hidden, true);
    if (e.key.endsWith('.block_count')) kvView.setUint32(e.at - layout.kvStart, layers, true);
  }
  const { alignment } = layout;
  const infos: GgufInfo[] = [];
  let offset = 0;
  const add = (name: string, dims: number[], type: number) => {
    const format = WEIGHT_FORMATS.find((f) => f.ggmlType === type);
    if (!format) throw new Error(`${name}: ggml type ${type} not in the weight-format table`);
    const elements = dims.reduce((a, b) => a * b, 1);
    infos.push({ name, dims, type, offset });
    offset += Math.ceil(((elements / format.blockElements) * format.fileBlockBytes) / alignment) * alignment;
  };
  for (const info of layout.infos) {
    const dims = info.dims.map((d) => (d === TINY ? hidden : d));
    if (!info.name.startsWith('blk.')) add(info.name, dims, info.type);
    else for (let l = 0; l < layers; l++) add(`blk.${l}.${info.name.slice('blk.0.'.length)}`, dims, info.type);
  }
  return { header: encodeGgufHeader(layout.version, layout.kvCount, kv, infos, alignment), dataBytes: offset, tensors: infos.length };
}

/** A file by descriptor (Node 20's fs.openAsBlob gives the size modulo 2^32 for a file past 4 GiB). */
function fileSource(path: string, fd: number): ByteSource {
  const size = fstatSync(fd).size;
  const read = async (offset: number, length: number) => {
    if (offset + length > size) throw new Error(`${path}: truncated file: needs bytes up to ${offset + length} but the file has ${size}`);
    const out = new Uint8Array(length);
    let done = 0;
    while (done < length) done += readSync(fd, out, done, length - done, offset + done);
    return out;
  };
  return {
    name: path,
    size: async () => size,
    read,
    async *stream(offset: number, length: number) {
      for (let at = offset; at < offset + length; at += 8 << 20) yield await read(at, Math.min(8 << 20, offset + length - at));
    },
  };
}

export async function headerCheck(id: string): Promise<Record<string, unknown>> {
  const { header, dataBytes, tensors } = realShapeHeader(id);
  const dir = join(ROOT, '.tmp', 'real-sizes', id);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'header-only.gguf');
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, header);
    ftruncateSync(fd, header.byteLength + dataBytes); // a hole: no disk
  } finally {
    closeSync(fd);
  }
  const readFd = openSync(path, 'r');
  try {
    const file = await readGguf(fileSource(path, readFd));
    const verified = verifyHeader(`${id}.gguf`, file);
    const config = modelConfigFromGguf(file);
    const entry = remoteCatalog.find((e) => e.id === id);
    const limits = [128 * 2 ** 20, 2 ** 30];
    let gpuBytes = 0;
    let largest = { name: '', bytes: 0, unit_bytes: 0 };
    const partsAt = limits.map(() => 0);
    for (const t of file.tensors) {
      const format = WEIGHT_FORMATS.find((f) => f.name === t.type)!;
      const cols = t.shape[t.shape.length - 1];
      const rowGpu = (cols / format.blockElements) * format.gpuBlockBytes;
      const rows = t.shape.length === 1 ? 1 : t.shape[t.shape.length - 2];
      const matrices = t.shape.length === 3 ? t.shape[0] : 1;
      const bytes = rowGpu * rows * matrices;
      gpuBytes += bytes;
      // The loader splits by rows; an expert tensor by whole experts' matrices, gate and up stacked (x2).
      const unit = t.shape.length === 3 ? rowGpu * rows * (/gate|up/.test(t.name) ? 2 : 1) : rowGpu;
      if (bytes > largest.bytes) largest = { name: t.name, bytes, unit_bytes: unit };
      limits.forEach((limit, i) => {
        if (unit > limit) throw new Error(`${t.name}: an unsplittable unit of ${unit} bytes exceeds a ${limit}-byte binding`);
        partsAt[i] += Math.ceil(bytes / (Math.floor(limit / unit) * unit));
      });
    }
    const tokens = file.metadata['tokenizer.ggml.tokens'] as unknown as unknown[];
    const checks = {
      vocabulary_matches: tokens.length === realSizeShape(id).vocab && file.tensors.find((t) => t.name === 'output.weight')?.shape[0] === tokens.length,
      architecture_as_catalog: verified.architecture === entry?.architecture,
      fits_min_gpu_memory: entry?.minGpuMemoryBytes ? gpuBytes < entry.minGpuMemoryBytes : null,
    };
    return {
      pass: Object.values(checks).every((v) => v !== false),
      checks,
      file_bytes: file.fileSize,
      catalog_bytes_approximate: entry?.bytes ?? null,
      tensors,
      verified,
      config: { layers: config.layers, hidden: config.hidden, heads: config.heads, kvHeads: config.kvHeads, headDim: config.headDim, vocab: config.vocabSize, experts: (config as unknown as Record<string, unknown>).experts ?? null },
      gpu_weight_bytes: gpuBytes,
      min_gpu_memory_bytes: entry?.minGpuMemoryBytes ?? null,
      largest_tensor: largest,
      gpu_parts_at_binding_limit: Object.fromEntries(limits.map((l, i) => [`${l / 2 ** 20} MiB`, partsAt[i]])),
    };
  } finally {
    closeSync(readFd);
    rmSync(path, { force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`${JSON.stringify(await headerCheck(process.argv[2] ?? 'gpt-oss-20b-mxfp4'))}\n`);
}
