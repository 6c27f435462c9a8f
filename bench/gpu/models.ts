// Random-weight models of real shapes for the GPU bench, made fast: tools/make-test-model generates ONE layer (and
// the embedding at the real vocabulary size), then `repeatLayers` rewrites the GGUF with that layer's tensors
// copied to every block (same bytes, separate tensors: each layer is its own GPU buffer, so decode reads as many
// bytes as the real model). Generating every layer would take minutes of a lent GPU machine's time.
import { buildTestModel, type TestModelOptions } from '../../tools/make-test-model/build.ts';
import { buildByteLevelBpeVocab, tokenizerConfigJson, tokenizerJson } from '../../tools/make-test-model/byte-level-bpe.ts';
import { realTokenizerVocab } from '../../tools/make-test-model/real-tokenizer.ts';
import { CHATML_TOOLS_TEMPLATE } from '../../tools/make-test-model/chatml-template.ts';
import { elementCount, fileByteSize, tensorTypeFromGgml } from '../../src/model/tensor-types.ts';

export interface BenchShape {
  /** The real model whose shape this is. */
  name: string;
  options: TestModelOptions;
  /** Vocabulary rows (the real model's vocab_size): a small byte-level BPE padded with unused tokens. */
  vocab: number;
  /** The llama.cpp file type it stands in for. */
  like: string;
  /**
   * Mixture of experts: experts generated (the rest of options.experts are copies of them, as the layers are of
   * layer 0: generating gpt-oss-20b's 32 experts of 2880 x 2880 x 3 a layer would take minutes).
   */
  generatedExperts?: number;
}

const tiny = (o: TestModelOptions): TestModelOptions => ({ ...o, layers: 2, hidden: 256, heads: 4, kvHeads: 2, headDim: 64, intermediate: 512 });

/** Shapes from each model's config.json; matrices whose rows are not a multiple of 256 cannot be K-quants. */
export const SHAPES: Record<string, BenchShape> = {
  // Qwen2.5-0.5B: hidden 896 (not a multiple of 256, so its published Q4_K_M falls back to Q5_0/Q8_0 there).
  'qwen2.5-0.5b-q4_0': { name: 'Qwen2.5-0.5B', like: 'Q4_0 (token_embd Q8_0, tied)', vocab: 151936, options: { arch: 'qwen2', type: 'Q4_0', embeddingType: 'Q8_0', tiedEmbeddings: true, layers: 24, hidden: 896, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, ropeTheta: 1000000 } },
  'qwen2.5-0.5b-q8_0': { name: 'Qwen2.5-0.5B', like: 'Q8_0 (tied)', vocab: 151936, options: { arch: 'qwen2', type: 'Q8_0', tiedEmbeddings: true, layers: 24, hidden: 896, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, ropeTheta: 1000000 } },
  // Qwen3-1.7B: Q4_K matrices with a Q6_K (tied) embedding, about what Q4_K_M holds.
  'qwen3-1.7b-q4_k': { name: 'Qwen3-1.7B', like: 'Q4_K_M-ish: Q4_K, token_embd Q6_K (tied)', vocab: 151936, options: { arch: 'qwen3', type: 'Q4_K', embeddingType: 'Q6_K', tiedEmbeddings: true, layers: 28, hidden: 2048, heads: 16, kvHeads: 8, headDim: 128, intermediate: 6144, ropeTheta: 1000000 } },
  // Llama-3.2-1B: Q4_K matrices with a Q6_K (tied) embedding.
  'llama-3.2-1b-q4_k': { name: 'Llama-3.2-1B', like: 'Q4_K_M-ish: Q4_K, token_embd Q6_K (tied)', vocab: 128256, options: { arch: 'llama', type: 'Q4_K', embeddingType: 'Q6_K', tiedEmbeddings: true, layers: 16, hidden: 2048, heads: 32, kvHeads: 8, headDim: 64, intermediate: 8192, ropeTheta: 500000 } },
  // gpt-oss-20b: 24 layers of 32 MXFP4 experts (4 a token) of 2880 x 2880, Q8_0 attention (64 heads of 64, 8 KV
  // heads, a 128-position window on even layers, sinks) and Q8_0 embedding and head (untied) at 201088 rows, as
  // the published GGUF holds them (real-sizes/header-check.ts reads its header). About 12 GB; last, so that the
  // smaller models finish first.
  'gpt-oss-20b-mxfp4': { name: 'gpt-oss-20b', like: 'MXFP4 experts, Q8_0 elsewhere', vocab: 201088, generatedExperts: 4, options: { arch: 'gpt-oss', type: 'Q8_0', expertType: 'MXFP4', layers: 24, hidden: 2880, heads: 64, kvHeads: 8, headDim: 64, intermediate: 2880, experts: 32, expertsUsed: 4, window: 128, ropeTheta: 150000 } },
};

/** The same shapes shrunk for a CPU adapter (--tiny): 2 layers of hidden 256, vocabularies of 4096 or 3000. */
export function tinyShape(s: BenchShape): BenchShape {
  const type = s.options.type === 'Q4_0' || s.options.type === 'Q8_0' ? s.options.type : 'Q4_K';
  return { ...s, vocab: s.vocab === 128256 ? 3000 : 4096, options: { ...tiny(s.options), type, ...(s.options.experts ? { intermediate: 256 } : {}) } };
}

/** The model as GGUF chunks: one generated layer repeated `layers` times; the real vocabulary size. */
export function buildBenchModel(shape: BenchShape, seed = 1): { chunks: Uint8Array[]; bytes: number; layers: number; vocab: number } {
  const layers = shape.options.layers ?? 1;
  const bpe = buildByteLevelBpeVocab(250);
  const vocab = realTokenizerVocab(tokenizerJson(bpe), tokenizerConfigJson(bpe, CHATML_TOOLS_TEMPLATE, 4096), { vocabSize: shape.vocab });
  const experts = shape.options.experts;
  const generated = experts && shape.generatedExperts ? Math.min(experts, shape.generatedExperts) : experts;
  const used = shape.options.expertsUsed;
  const options = generated !== experts ? { experts: generated, ...(used ? { expertsUsed: Math.min(used, generated!) } : {}) } : {};
  const one = buildTestModel({ ...shape.options, layers: 1, seed, ...options }, vocab);
  let file = concatBytes(one.files['model.gguf']);
  if (generated !== experts) file = concatBytes(repeatExperts(file, experts!, used));
  const chunks = repeatLayers(file, layers);
  return { chunks, bytes: chunks.reduce((n, c) => n + c.byteLength, 0), layers, vocab: one.info.vocabSize };
}

/** The chunks as one array. */
export function concatBytes(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

const SCALAR_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
const STRING = 8;
const ARRAY = 9;
const MAGIC = 0x46554747;

/** A GGUF tensor info: name, dimensions, ggml type, offset in the data section. */
export interface GgufInfo { name: string; dims: number[]; type: number; offset: number }

/**
 * Where a GGUF v3 file's parts lie, read without decoding the values: each metadata entry's key, value type and the
 * byte offset of its value (`at`), the metadata's byte range [kvStart, kvEnd), the tensor infos and where they end.
 * For rewriting a header in place (bench models); the runtime's reader is src/model/gguf.ts.
 */
export interface GgufLayout {
  version: number;
  kvCount: number;
  kvStart: number;
  kvEnd: number;
  entries: { key: string; type: number; at: number }[];
  alignment: number;
  infos: GgufInfo[];
  infoEnd: number;
}

export function readGgufLayout(file: Uint8Array): GgufLayout {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  let at = 0;
  const u32 = () => {
    const v = view.getUint32(at, true);
    at += 4;
    return v;
  };
  const u64 = () => {
    const v = Number(view.getBigUint64(at, true));
    at += 8;
    return v;
  };
  const str = () => {
    const n = u64();
    const s = new TextDecoder().decode(file.subarray(at, at + n));
    at += n;
    return s;
  };
  const skipValue = (type: number): void => {
    if (type === STRING) {
      const n = u64(); // (`at += u64()` would read `at` before u64 moves it)
      at += n;
    } else if (type === ARRAY) {
      const item = u32();
      const count = u64();
      for (let i = 0; i < count; i++) skipValue(item);
    } else if (SCALAR_BYTES[type] !== undefined) at += SCALAR_BYTES[type];
    else throw new Error(`GGUF value type ${type} unknown`);
  };
  if (u32() !== MAGIC) throw new Error('not a GGUF file');
  const version = u32();
  const tensorCount = u64();
  const kvCount = u64();
  const kvStart = at;
  const entries: GgufLayout['entries'] = [];
  let alignment = 32;
  for (let k = 0; k < kvCount; k++) {
    const key = str();
    const type = u32();
    entries.push({ key, type, at });
    if (key === 'general.alignment' && type === 4) alignment = view.getUint32(at, true);
    skipValue(type);
  }
  const kvEnd = at;
  const infos: GgufInfo[] = [];
  for (let t = 0; t < tensorCount; t++) {
    const name = str();
    const nd = u32();
    const dims = Array.from({ length: nd }, () => u64());
    const type = u32();
    const offset = u64();
    infos.push({ name, dims, type, offset });
  }
  return { version, kvCount, kvStart, kvEnd, entries, alignment, infos, infoEnd: at };
}

/** The string value at `at` (a metadata entry's value offset). */
export function ggufStringAt(file: Uint8Array, at: number): string {
  const n = Number(new DataView(file.buffer, file.byteOffset, file.byteLength).getBigUint64(at, true));
  return new TextDecoder().decode(file.subarray(at + 8, at + 8 + n));
}

/** A GGUF v3 header: magic, version, counts, the metadata bytes as given, the infos; padded to `alignment`. */
export function encodeGgufHeader(version: number, kvCount: number, kvBytes: Uint8Array, infos: readonly GgufInfo[], alignment: number): Uint8Array {
  const enc = new TextEncoder();
  const head = new Uint8Array(24);
  const hv = new DataView(head.buffer);
  hv.setUint32(0, MAGIC, true);
  hv.setUint32(4, version, true);
  hv.setBigUint64(8, BigInt(infos.length), true);
  hv.setBigUint64(16, BigInt(kvCount), true);
  const parts: Uint8Array[] = [head, kvBytes];
  for (const t of infos) {
    const name = enc.encode(t.name);
    const b = new Uint8Array(8 + name.byteLength + 4 + 8 * t.dims.length + 4 + 8);
    const v = new DataView(b.buffer);
    let p = 0;
    v.setBigUint64(p, BigInt(name.byteLength), true);
    p += 8;
    b.set(name, p);
    p += name.byteLength;
    v.setUint32(p, t.dims.length, true);
    p += 4;
    for (const d of t.dims) {
      v.setBigUint64(p, BigInt(d), true);
      p += 8;
    }
    v.setUint32(p, t.type, true);
    p += 4;
    v.setBigUint64(p, BigInt(t.offset), true);
    parts.push(b);
  }
  const header = concatBytes(parts);
  const padded = new Uint8Array(Math.ceil(header.byteLength / alignment) * alignment);
  padded.set(header);
  return padded;
}

/**
 * A GGUF v3 file whose expert tensors (names with `_exps`, and the router `ffn_gate_inp`: experts their outermost
 * dimension) hold `experts` experts, the generated ones repeated in order, and whose `<arch>.expert_count` (and,
 * given, `<arch>.expert_used_count`) say so; everything else as it was. The copies' router rows equal their
 * originals': the router's choice among equal logits is the runtime's, and a token still reads `used` experts.
 */
export function repeatExperts(file: Uint8Array, experts: number, used?: number): Uint8Array[] {
  const layout = readGgufLayout(file);
  const count = layout.entries.find((e) => e.key.endsWith('.expert_count') && e.type === 4);
  if (!count) throw new Error('no <arch>.expert_count (u32) in the GGUF');
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const from = view.getUint32(count.at, true);
  if (experts % from !== 0) throw new Error(`${experts} experts is not a multiple of the ${from} generated`);
  const kvBytes = file.slice(layout.kvStart, layout.kvEnd);
  const kv = new DataView(kvBytes.buffer);
  kv.setUint32(count.at - layout.kvStart, experts, true);
  if (used !== undefined) {
    const usedEntry = layout.entries.find((e) => e.key.endsWith('.expert_used_count') && e.type === 4);
    if (!usedEntry) throw new Error('no <arch>.expert_used_count (u32) in the GGUF');
    kv.setUint32(usedEntry.at - layout.kvStart, used, true);
  }
  const isExpert = (info: GgufInfo) => (info.name.includes('_exps') || info.name.includes('ffn_gate_inp')) && info.dims[info.dims.length - 1] === from;
  const dataStart = Math.ceil(layout.infoEnd / layout.alignment) * layout.alignment;
  return rewriteTensors(file, layout, kvBytes, layout.infos.map((info) => {
    // Exactly the tensor's bytes (not the alignment padding after it), so that the copies lie back to back.
    const data = file.subarray(dataStart + info.offset, dataStart + info.offset + fileByteSize(tensorTypeFromGgml(info.type, info.name), elementCount(info.dims)));
    if (!isExpert(info)) return { ...info, data: [data] };
    return { ...info, dims: [...info.dims.slice(0, -1), experts], data: Array.from({ length: experts / from }, () => data) };
  }));
}

/** A GGUF v3 file of these metadata bytes and tensors (each its data chunks), offsets laid out afresh. */
function rewriteTensors(file: Uint8Array, layout: GgufLayout, kvBytes: Uint8Array, tensors: { name: string; dims: number[]; type: number; data: Uint8Array[] }[]): Uint8Array[] {
  const { alignment } = layout;
  let offset = 0;
  const infos: GgufInfo[] = tensors.map((t) => {
    offset = Math.ceil(offset / alignment) * alignment;
    const info = { name: t.name, dims: t.dims, type: t.type, offset };
    offset += t.data.reduce((n, d) => n + d.byteLength, 0);
    return info;
  });
  const chunks: Uint8Array[] = [encodeGgufHeader(layout.version, layout.kvCount, kvBytes, infos, alignment)];
  let dataAt = 0;
  tensors.forEach((t, i) => {
    if (infos[i].offset > dataAt) {
      chunks.push(new Uint8Array(infos[i].offset - dataAt));
      dataAt = infos[i].offset;
    }
    for (const d of t.data) {
      chunks.push(d);
      dataAt += d.byteLength;
    }
  });
  return chunks;
}

/**
 * A GGUF v3 file with blk.0's tensors copied to blk.0 .. blk.(layers - 1) and `<arch>.block_count` set to `layers`;
 * the metadata is copied byte for byte otherwise, the tensor data re-aligned to general.alignment.
 */
export function repeatLayers(file: Uint8Array, layers: number): Uint8Array[] {
  const layout = readGgufLayout(file);
  const { alignment } = layout;
  const arch = layout.entries.find((e) => e.key === 'general.architecture' && e.type === STRING);
  const blockCount = layout.entries.find((e) => e.key.endsWith('.block_count') && e.type === 4);
  if (!blockCount || !arch || !ggufStringAt(file, arch.at)) throw new Error('no <arch>.block_count (u32) in the GGUF');
  const kvBytes = file.slice(layout.kvStart, layout.kvEnd);
  new DataView(kvBytes.buffer).setUint32(blockCount.at - layout.kvStart, layers, true);

  const dataStart = Math.ceil(layout.infoEnd / alignment) * alignment;
  const size = new Map<GgufInfo, number>();
  const byOffset = [...layout.infos].sort((a, b) => a.offset - b.offset);
  byOffset.forEach((info, i) => size.set(info, (i + 1 < byOffset.length ? byOffset[i + 1].offset : file.byteLength - dataStart) - info.offset));
  const data = (info: GgufInfo) => file.subarray(dataStart + info.offset, dataStart + info.offset + size.get(info)!);
  const out: { name: string; dims: number[]; type: number; data: Uint8Array }[] = [];
  for (const info of layout.infos) if (!info.name.startsWith('blk.')) out.push({ name: info.name, dims: info.dims, type: info.type, data: data(info) });
  const layer0 = layout.infos.filter((i) => i.name.startsWith('blk.0.'));
  for (let l = 0; l < layers; l++) {
    for (const info of layer0) out.push({ name: `blk.${l}.${info.name.slice('blk.0.'.length)}`, dims: info.dims, type: info.type, data: data(info) });
  }

  return rewriteTensors(file, layout, kvBytes, out.map((t) => ({ ...t, data: [t.data] })));
}
