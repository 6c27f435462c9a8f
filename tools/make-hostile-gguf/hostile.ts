// Hostile GGUF files, each with the error opening (or rendering its chat template) must give: lying counts and
// lengths, arrays too long or too deep, a `__proto__` key, a template that loops or grows without end, and a
// real 262k-token vocabulary as the control that must still load. No Node APIs here (the browser may build
// them too); a file is its header bytes followed by zeros up to `size`, so a 256 MB file costs its header.
import type { ByteSource } from '../../src/model/byte-source.ts';
import { GGUF_MAGIC, GgufValueType, type GgufLimits, readGguf } from '../../src/model/gguf.ts';
import { GgmlType } from '../../src/model/tensor-types.ts';
import { buildTestModel } from '../make-test-model/build.ts';
import { type GgufWriteValue, encodeGguf, gv } from '../make-test-model/gguf-writer.ts';

export type HostilePhase =
  /** readGguf / openModel must reject it. */
  | 'open'
  /** It opens; rendering its chat template must fail. */
  | 'render'
  /** A control: it must open (and its template render). */
  | 'ok';

export interface HostileGguf {
  name: string;
  description: string;
  /** The file's first bytes; the rest, up to `size`, is zeros. */
  header: Uint8Array;
  size: number;
  phase: HostilePhase;
  /** What the error message must match ('open' and 'render'). */
  error?: RegExp;
  /** Limits to open it under (a header-limit case without a 128 MB file); default GGUF_LIMITS. */
  limits?: Partial<GgufLimits>;
}

// ---- a writer that can lie ------------------------------------------------------------------------------------

class Bytes {
  private parts: number[] = [];
  private static encoder = new TextEncoder();
  u8(v: number): this {
    this.parts.push(v & 255);
    return this;
  }
  u32(v: number): this {
    for (let i = 0; i < 4; i++) this.parts.push((v >>> (8 * i)) & 255);
    return this;
  }
  u64(v: number | bigint): this {
    let x = BigInt(v);
    for (let i = 0; i < 8; i++, x >>= 8n) this.parts.push(Number(x & 255n));
    return this;
  }
  raw(bytes: Uint8Array): this {
    for (const b of bytes) this.parts.push(b);
    return this;
  }
  /** A string with its true length, or `claimed` when given. */
  str(s: string, claimed?: number | bigint): this {
    const b = Bytes.encoder.encode(s);
    return this.u64(claimed ?? b.length).raw(b);
  }
  /** GGUF preamble: magic, version 3, tensor and metadata counts. */
  preamble(tensors: number | bigint, kvs: number | bigint): this {
    return this.u32(GGUF_MAGIC).u32(3).u64(tensors).u64(kvs);
  }
  /** A key with a string value. */
  kvString(key: string, value: string): this {
    return this.str(key).u32(GgufValueType.STRING).str(value);
  }
  get length(): number {
    return this.parts.length;
  }
  done(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

const MiB = 1 << 20;

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// ---- a real model with a hostile chat template ------------------------------------------------------------------

/** The write form of a metadata value read back (types from metadataTypes, e.g. "ARRAY<STRING>"). */
function writeValueOf(value: unknown, type: string): GgufWriteValue {
  const array = /^ARRAY<(\w+)>$/.exec(type);
  if (array) {
    const itemType = array[1] as keyof typeof GgufValueType;
    return { type: 'ARRAY', itemType, items: (value as unknown[]).map((v) => writeValueOf(v, itemType)) };
  }
  if (type === 'UINT64' || type === 'INT64') return { type, value: BigInt(value as number) };
  return { type, value } as GgufWriteValue;
}

let tinyModel: Promise<Uint8Array> | null = null;

/** A tiny real model (F32, one layer) as one GGUF. */
function tinyModelBytes(): Promise<Uint8Array> {
  tinyModel ??= Promise.resolve(
    concat(buildTestModel({ arch: 'qwen3', type: 'F32', layers: 1, hidden: 64, heads: 2, kvHeads: 1, headDim: 32, intermediate: 64, merges: 40 }).files['model.gguf']),
  );
  return tinyModel;
}

/** The tiny model with its `tokenizer.chat_template` replaced (the file re-encoded, tensor data kept). */
export async function tinyModelWithTemplate(template: string): Promise<Uint8Array> {
  const bytes = await tinyModelBytes();
  const file = await readGguf(bytes);
  const metadata: Record<string, GgufWriteValue> = {};
  for (const key of Object.keys(file.metadata)) metadata[key] = writeValueOf(file.metadata[key], file.metadataTypes[key]);
  metadata['tokenizer.chat_template'] = gv.str(template);
  const tensors = file.tensors.map((t) => ({ name: t.name, dims: t.dims, ggmlType: GgmlType[t.type], data: bytes.subarray(t.offset, t.offset + t.byteLength) }));
  return concat(encodeGguf(metadata, tensors, { alignment: file.alignment }));
}

// ---- the cases ----------------------------------------------------------------------------------------------------

/** Every hostile file with its expected outcome. */
export async function hostileGgufs(): Promise<HostileGguf[]> {
  const cases: HostileGguf[] = [];
  const add = (c: Omit<HostileGguf, 'size'> & { size?: number }) => cases.push({ ...c, size: c.size ?? c.header.length });

  add({
    name: 'bad-magic',
    description: 'not a GGUF file at all',
    header: new TextEncoder().encode('PK\u0003\u0004 this is a zip, not a model'),
    phase: 'open',
    error: /not a GGUF file: wrong magic/,
  });
  add({
    name: 'truncated-preamble',
    description: 'the file ends inside the metadata count',
    header: new Bytes().u32(GGUF_MAGIC).u32(3).u64(0).u32(1).done(),
    phase: 'open',
    error: /truncated file/,
  });
  add({
    name: 'kv-count-beyond-file',
    description: 'a metadata count of 2^40 (more than the file has bytes)',
    header: new Bytes().preamble(0, 2n ** 40n).done(),
    size: 4096,
    phase: 'open',
    error: /implausible metadata count/,
  });
  add({
    name: 'counts-cannot-fit',
    description: 'a thousand metadata entries and tensors claimed in a 20 KB file of zeros (read as empty keys)',
    header: new Bytes().preamble(1000, 1000).done(),
    size: 20_000,
    phase: 'open',
    error: /metadata key "" appears twice/,
  });
  {
    const size = 256 * MiB;
    const b = new Bytes().preamble(0, 1);
    add({
      name: 'key-claims-whole-file',
      description: 'the first key says it is 256 MB long (the rest of the file): refused without reading it',
      header: b.str('k', size - b.length - 8).done(),
      size,
      phase: 'open',
      error: /above the \d+-byte limit/,
    });
  }
  {
    const b = new Bytes().preamble(0, 1);
    const size = 2 * MiB;
    add({
      name: 'key-claims-more-than-file',
      description: 'the first key claims more bytes than the file has after it',
      header: b.str('k', size - 8).done(),
      size,
      phase: 'open',
      error: /claims \d+ bytes but the file has \d+ left/,
    });
  }
  {
    const n = 128 * MiB;
    const b = new Bytes().preamble(0, 1).str('big.array').u32(GgufValueType.ARRAY).u32(GgufValueType.UINT8).u64(n);
    add({
      name: 'array-128mb',
      description: 'a metadata array of 128 M u8 items (a real 128 MB array): refused by length before any item is read',
      header: b.done(),
      size: b.length + n,
      phase: 'open',
      error: /has 134217728 items, above the limit/,
    });
  }
  {
    const b = new Bytes().preamble(0, 1).str('lying.array').u32(GgufValueType.ARRAY).u32(GgufValueType.STRING).u64(1_000_000);
    add({
      name: 'array-claims-more-than-file',
      description: 'an array of a million strings in a 1 MB file (each string needs at least 8 bytes)',
      header: b.done(),
      size: MiB,
      phase: 'open',
      error: /claims 1000000 items but the file has \d+ bytes left/,
    });
  }
  {
    // Five arrays of 4 M u8 each: each within the per-array limit, 20 M together above the total.
    const n = 4 * MiB;
    const parts: Uint8Array[] = [new Bytes().preamble(0, 5).done()];
    for (let k = 0; k < 5; k++) {
      parts.push(new Bytes().str(`arr.${k}`).u32(GgufValueType.ARRAY).u32(GgufValueType.UINT8).u64(n).done(), new Uint8Array(n));
    }
    add({
      name: 'arrays-total-items',
      description: 'five 4 M-item arrays: 20 M items in all, above the total limit',
      header: concat(parts),
      phase: 'open',
      error: /more than \d+ items in all/,
    });
  }
  {
    let b = new Bytes().preamble(0, 1).str('deep').u32(GgufValueType.ARRAY);
    for (let d = 0; d < 6; d++) b = b.u32(GgufValueType.ARRAY).u64(1);
    add({
      name: 'arrays-nested-deep',
      description: 'arrays nested six deep',
      header: b.u32(GgufValueType.UINT8).u64(1).u8(0).done(),
      size: 4096,
      phase: 'open',
      error: /nested more than \d+ deep/,
    });
  }
  add({
    name: 'unknown-value-type',
    description: 'a metadata value of type 99',
    header: new Bytes().preamble(0, 1).str('weird').u32(99).u64(0).done(),
    phase: 'open',
    error: /unknown GGUF metadata value type 99/,
  });
  add({
    name: 'unknown-array-item-type',
    description: 'an array of item type 77 and 2^32 items',
    header: new Bytes().preamble(0, 1).str('weird').u32(GgufValueType.ARRAY).u32(77).u64(2n ** 32n).done(),
    size: 4096,
    phase: 'open',
    error: /unknown GGUF metadata array item type 77/,
  });
  add({
    name: 'duplicate-key',
    description: 'the same key twice',
    header: new Bytes().preamble(0, 2).kvString('general.architecture', 'qwen3').kvString('general.architecture', 'llama').done(),
    phase: 'open',
    error: /appears twice/,
  });
  add({
    name: 'proto-key',
    description: 'a key named __proto__ (must be an ordinary key, the metadata object keeping a null prototype)',
    header: new Bytes().preamble(0, 2).kvString('__proto__', 'polluted').kvString('constructor', 'x').done(),
    phase: 'open',
    // The metadata parses; the model has no architecture, and nothing was polluted.
    error: /general\.architecture/,
  });
  add({
    name: 'tensor-count-huge',
    description: 'a tensor count of 2^60',
    header: new Bytes().preamble(2n ** 60n, 0).done(),
    size: 4096,
    phase: 'open',
    error: /implausible tensor count/,
  });
  {
    // A header of 3 MiB of honest strings, opened under a 2 MiB header limit.
    const parts: Uint8Array[] = [new Bytes().preamble(0, 3).done()];
    for (let k = 0; k < 3; k++) parts.push(new Bytes().kvString(`blob.${k}`, 'x'.repeat(MiB)).done());
    add({
      name: 'header-over-limit',
      description: 'a 3 MiB header under a 2 MiB header limit',
      header: concat(parts),
      phase: 'open',
      error: /GGUF header is larger than the 2097152-byte limit/,
      limits: { maxHeaderBytes: 2 * MiB },
    });
  }
  {
    // The control: a Gemma-3-sized vocabulary (262,144 tokens with scores and types) must read.
    const n = 262_144;
    const tokens = Array.from({ length: n }, (_, i) => `tok${i}`);
    const header = concat(
      encodeGguf(
        {
          'general.architecture': gv.str('gemma3'),
          'tokenizer.ggml.model': gv.str('llama'),
          'tokenizer.ggml.tokens': gv.strings(tokens),
          'tokenizer.ggml.scores': gv.f32s(tokens.map((_, i) => -i)),
          'tokenizer.ggml.token_type': gv.i32s(tokens.map(() => 1)),
        },
        [],
      ),
    );
    add({ name: 'vocab-262k', description: 'control: a 262,144-token vocabulary (scores and types too) reads', header, phase: 'ok' });
  }

  const templates: [string, string, string, RegExp][] = [
    ['template-range-300m', 'a chat template looping over range(300000000)', '{% for i in range(300000000) %}x{% endfor %}', /range\(\) of 300000000 items/],
    [
      'template-doubling-string',
      'a chat template doubling a string 40 times (a terabyte)',
      '{% set ns = namespace(s="ab") %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}',
      /a string of \d+ characters/,
    ],
    [
      'template-nested-loops',
      'a chat template with 10^10 loop iterations (nested range(100000))',
      '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}',
      /evaluation steps|ms to render/,
    ],
  ];
  for (const [name, description, template, error] of templates) {
    add({ name, description, header: await tinyModelWithTemplate(template), phase: 'render', error });
  }
  return cases;
}

/** A ByteSource over a hostile file: its header, then zeros; counts the bytes read (and the largest read). */
export class HostileSource implements ByteSource {
  bytesRead = 0;
  largestRead = 0;
  reads = 0;
  constructor(
    private readonly file: Pick<HostileGguf, 'header' | 'size'>,
    readonly name = 'hostile.gguf',
  ) {}
  async size(): Promise<number> {
    return this.file.size;
  }
  async read(offset: number, length: number): Promise<Uint8Array> {
    if (offset < 0 || length < 0 || offset + length > this.file.size) throw new Error(`${this.name}: truncated file: needs bytes up to ${offset + length} but the file has ${this.file.size}`);
    this.bytesRead += length;
    this.largestRead = Math.max(this.largestRead, length);
    this.reads++;
    const out = new Uint8Array(length);
    const { header } = this.file;
    if (offset < header.length) out.set(header.subarray(offset, Math.min(header.length, offset + length)));
    return out;
  }
  async *stream(offset: number, length: number): AsyncIterable<Uint8Array> {
    for (let at = offset; at < offset + length; at += 8 * MiB) yield await this.read(at, Math.min(8 * MiB, offset + length - at));
  }
}
