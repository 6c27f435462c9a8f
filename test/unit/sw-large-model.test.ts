// A 13 GB model file (gpt-oss-20b's size class) through the model file store, sizes only: the storage is a fake
// Cache Storage, the file's Blobs are virtual (they keep references to one shared 16 MiB chunk, never 13 GB of
// bytes), the server's Response is a plain object with a body stream and no way to be read whole. Pinned:
// - the download checks navigator.storage.estimate() against the file's size before any byte is fetched, asks for
//   persistent storage, and refuses with a message naming the bytes needed and available;
// - where the quota allows, the file streams into parts of at most a few MiB (no read of the response as one
//   ArrayBuffer, no Blob of more than one chunk built from bytes), is completed (size and GGUF magic checked by a
//   4-byte read), opened as one Blob over its parts, and read back by range at any offset past 4 GiB
//   (StoredModelFileSource, what the engine reads through): no single read larger than the range asked.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { checkQuota, ModelFileError, ModelFileStore } from '../../src/model-store/model-files.ts';
import { StoredModelFileSource } from '../../src/model-store/model-cache.ts';
import { headerCheckGguf } from '../support/sw-fakes.ts';

const GB = 1_000_000_000;
const FILE_BYTES = 13 * GB;
const CHUNK = 16 << 20;
/** The one real chunk every piece of the 13 GB stream is: a small GGUF (its header is checked on first open), then byte i = i & 255. */
const chunk = new Uint8Array(CHUNK).map((_, i) => i & 255);
chunk.set(headerCheckGguf(), 0);
/** The byte of the streamed file at `offset` (the stream repeats `chunk`; the last piece is cut short). */
const byteAt = (offset: number): number => chunk[offset % CHUNK]!;

/** Every arrayBuffer() read of a virtual Blob, by length. */
let reads: number[] = [];

/** A Blob that holds references to byte arrays (or slices of them), never a copy: sizes only. */
class VirtualBlob {
  readonly type: string;
  constructor(
    parts: readonly (VirtualBlob | Uint8Array)[] = [],
    options: { type?: string } = {},
    private readonly pieces: Uint8Array[] = parts.flatMap((p) => (p instanceof VirtualBlob ? p.pieces : [p])),
  ) {
    this.type = options.type ?? '';
  }
  get size(): number {
    return this.pieces.reduce((sum, p) => sum + p.byteLength, 0);
  }
  slice(start = 0, end = this.size): VirtualBlob {
    const out: Uint8Array[] = [];
    let at = 0;
    for (const piece of this.pieces) {
      const from = Math.max(start - at, 0);
      const to = Math.min(end - at, piece.byteLength);
      if (from < to) out.push(piece.subarray(from, to));
      at += piece.byteLength;
      if (at >= end) break;
    }
    return new VirtualBlob([], {}, out);
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    const size = this.size;
    reads.push(size);
    if (size > 256 << 20) throw new RangeError(`read ${size} bytes as one ArrayBuffer`);
    const out = new Uint8Array(size);
    let at = 0;
    for (const piece of this.pieces) {
      out.set(piece, at);
      at += piece.byteLength;
    }
    return out.buffer;
  }
}

/** What ModelFileStore asks of a Response: a body to keep (a Blob or JSON text) and it back. */
class FakeResponse {
  constructor(readonly body: VirtualBlob | string) {}
  static json(value: unknown): FakeResponse {
    return new FakeResponse(JSON.stringify(value));
  }
  async blob(): Promise<VirtualBlob> {
    if (typeof this.body === 'string') throw new Error('not a blob');
    return this.body;
  }
  async json(): Promise<unknown> {
    if (typeof this.body !== 'string') throw new Error('not JSON');
    return JSON.parse(this.body);
  }
}

/** A Cache Storage with one cache, keyed by URL; `puts` logs each stored body's size. */
function fakeCaches() {
  const entries = new Map<string, FakeResponse>();
  const puts: number[] = [];
  const url = (r: string | { url: string }): string => (typeof r === 'string' ? r : r.url);
  const cache = {
    async put(request: string | { url: string }, response: FakeResponse) {
      puts.push(typeof response.body === 'string' ? response.body.length : response.body.size);
      entries.set(url(request), response);
    },
    async match(request: string | { url: string }) {
      return entries.get(url(request));
    },
    async keys() {
      return [...entries.keys()].map((u) => ({ url: u }));
    },
    async delete(request: string | { url: string }) {
      return entries.delete(url(request));
    },
  };
  return { storage: { open: async () => cache }, puts };
}

/** navigator.storage with this estimate; persist() grants `grant` and is counted. */
function fakeStorage(quota: number, usage: number, grant = true) {
  const calls = { persist: 0, estimate: 0 };
  const storage = {
    persisted: async () => false,
    persist: async () => (calls.persist++, grant),
    estimate: async () => (calls.estimate++, { quota, usage }),
  };
  vi.stubGlobal('navigator', { storage });
  return calls;
}

/** The server's answer: FILE_BYTES streamed as `chunk` again and again; a plain object, so nothing can read it whole. */
function streamedResponse(total = FILE_BYTES) {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close();
      const piece = chunk.subarray(0, Math.min(CHUNK, total - sent));
      sent += piece.byteLength;
      controller.enqueue(piece);
    },
  });
  return { ok: true, status: 200, body, headers: new Headers({ 'content-length': String(total) }) };
}

let cachesFake: ReturnType<typeof fakeCaches>;
let fetchMock: ReturnType<typeof vi.fn>;

beforeEach(() => {
  reads = [];
  cachesFake = fakeCaches();
  vi.stubGlobal('caches', cachesFake.storage);
  vi.stubGlobal('Blob', VirtualBlob);
  vi.stubGlobal('Response', FakeResponse);
  fetchMock = vi.fn(async () => streamedResponse());
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => vi.unstubAllGlobals());

const url = 'https://models.example/gpt-oss-20b-mxfp4.gguf';

describe('a 13 GB model in the model file store', () => {
  it('is refused before any byte is fetched when the quota is smaller, naming the bytes needed and available', async () => {
    const calls = fakeStorage(10 * GB, 1 * GB, false);
    const store = new ModelFileStore('https://app.example/');
    const error = await store.download('gpt-oss-20b', url, { expectedBytes: FILE_BYTES, checkQuota: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelFileError);
    expect(error).toMatchObject({ kind: 'insufficient_storage', code: 'insufficient_storage' });
    expect((error as Error).message).toBe(
      `Not enough storage for ${url}: it needs 12.11 GiB more but only 8.38 GiB is free for this site (quota 9.31 GiB). ` +
        'Delete other models or free disk space. (Needed: 13000000000 bytes; available: 9000000000 bytes.) ' +
        'Persistent storage was not granted for this site, so the browser may also evict stored models.',
    );
    expect(fetchMock).not.toHaveBeenCalled();
    expect(calls.persist).toBe(1);
    expect(cachesFake.puts).toEqual([]);
  });

  it("in a service worker (persisted() but no persist()) the refusal says persistence is not granted", async () => {
    vi.stubGlobal('navigator', { storage: { persisted: async () => false, estimate: async () => ({ quota: 4 * GB, usage: 0 }) } });
    await expect(checkQuota(FILE_BYTES, 'gpt-oss-20b')).rejects.toThrow(
      'Not enough storage for gpt-oss-20b: it needs 12.11 GiB more but only 3.73 GiB is free for this site (quota 3.73 GiB). Delete other models or free disk space. ' +
        '(Needed: 13000000000 bytes; available: 4000000000 bytes.) Persistent storage was not granted for this site, so the browser may also evict stored models.',
    );
  });

  it('counts what is already stored: a resumed download needs only the rest', async () => {
    fakeStorage(20 * GB, 14 * GB);
    await expect(checkQuota(FILE_BYTES - 8 * GB, 'the rest')).resolves.toBeUndefined();
    await expect(checkQuota(FILE_BYTES, 'all of it')).rejects.toThrow('available: 6000000000 bytes');
  });

  it('streams into parts where the quota allows, and is read back by range past 4 GiB, never whole', async () => {
    const calls = fakeStorage(20 * GB, 1 * GB);
    const store = new ModelFileStore('https://app.example/');
    const progress: number[] = [];
    const blob = await store.download('gpt-oss-20b', url, { expectedBytes: FILE_BYTES, checkQuota: true, onProgress: (p) => progress.push(p.loaded) });
    expect(calls).toEqual({ persist: 1, estimate: 1 });
    expect(fetchMock).toHaveBeenCalledTimes(1);
    expect(blob.size).toBe(FILE_BYTES);
    // Every part is one chunk of the stream (parts of 4 MiB, filled by 16 MiB pieces), then the completion record.
    const parts = cachesFake.puts.slice(0, -1);
    expect(parts).toHaveLength(Math.ceil(FILE_BYTES / CHUNK));
    expect(Math.max(...parts)).toBe(CHUNK);
    expect(parts.reduce((a, b) => a + b, 0)).toBe(FILE_BYTES);
    expect(progress.at(-1)).toBe(FILE_BYTES);
    // Completing it read 4 bytes (the magic), not the file.
    expect(reads).toEqual([4]);
    expect(await store.completeRecord('gpt-oss-20b')).toMatchObject({ bytes: FILE_BYTES, origin: url });

    // The engine's view: a ByteSource over the stored parts, read by range anywhere in the 13 GB.
    const source = new StoredModelFileSource(store, { key: 'gpt-oss-20b' }, 'gpt-oss-20b.gguf');
    expect(await source.size()).toBe(FILE_BYTES);
    reads = [];
    for (const offset of [0, 4 * 2 ** 30 + 3, 3 * CHUNK - 5, FILE_BYTES - 7]) {
      const length = Math.min(10, FILE_BYTES - offset);
      const bytes = await source.read(offset, length);
      expect([...bytes]).toEqual(Array.from({ length }, (_, i) => byteAt(offset + i)));
    }
    expect(Math.max(...reads)).toBeLessThanOrEqual(10);
    // A tensor-sized range streams in reads no larger than the source's step.
    reads = [];
    let streamed = 0;
    for await (const piece of source.stream(12 * GB, 300 << 20)) streamed += piece.byteLength;
    expect(streamed).toBe(300 << 20);
    expect(Math.max(...reads)).toBeLessThan(300 << 20);
  });

  it('a file whose server length exceeds the free space is refused on the first response, its body cancelled', async () => {
    fakeStorage(5 * GB, 0);
    const response = streamedResponse();
    const cancel = vi.spyOn(response.body, 'cancel');
    fetchMock.mockResolvedValueOnce(response);
    const store = new ModelFileStore('https://app.example/');
    // No expected size (a catalog entry with an approximate size): the server's content-length is checked.
    await expect(store.download('gpt-oss-20b', url, { checkQuota: true })).rejects.toThrow('Needed: 13000000000 bytes; available: 5000000000 bytes.');
    expect(cancel).toHaveBeenCalled();
    expect(cachesFake.puts).toEqual([]);
  });
});
