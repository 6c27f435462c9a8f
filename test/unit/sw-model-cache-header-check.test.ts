// The bundled model's file as the engine opens it (StoredModelFileSource, src/sw/model-cache.ts): its first read
// downloads the file with the same header check as the model manager's downloads (src/sw/gguf-header-check.ts), so a
// file the runtime cannot serve is refused (400 unsupported_model_file) after its header only, and a served file's
// stored record says what the check verified.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoredModelFileSource } from '../../src/sw/model-cache.ts';
import { ModelFileStore } from '../../src/sw/model-files.ts';
import { encodeGguf, gv, type GgufWriteValue } from '../../tools/make-test-model/gguf-writer.ts';

const MIB = 1 << 20;
const URL_ = 'https://files.example/bundled.gguf';

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.byteLength));
  return out;
}

/** A GGUF with a 6 MiB F32 tensor (the body), a Q8_0 tensor and, optionally, an IQ2_XXS one (no decoder). */
function model(opts: { unsupportedType?: boolean } = {}): Uint8Array {
  const metadata: Record<string, GgufWriteValue> = { 'general.architecture': gv.str('llama') };
  const tensors = [
    { name: 'token_embd.weight', dims: [1024, 1536], ggmlType: 0, data: new Uint8Array(1024 * 1536 * 4) },
    { name: 'blk.0.attn_q.weight', dims: [64, 4], ggmlType: 8, data: new Uint8Array(8 * 34) },
  ];
  if (opts.unsupportedType) tensors.push({ name: 'blk.0.attn_k.weight', dims: [256, 1], ggmlType: 16, data: new Uint8Array(66) });
  return concat(encodeGguf(metadata, tensors));
}

/** A file server at URL_ counting the bytes it sends (bodies pulled in 64 KiB chunks, so a cancelled body stops). */
function serve(file: Uint8Array) {
  const served = { bytes: 0, requests: [] as (string | null)[] };
  const body = (from: number, to: number) => {
    let at = from;
    return new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (at >= to) return controller.close();
          const chunk = file.slice(at, Math.min(to, at + 64 * 1024));
          at += chunk.byteLength;
          served.bytes += chunk.byteLength;
          controller.enqueue(chunk);
        },
      },
      { highWaterMark: 0 },
    );
  };
  vi.stubGlobal('fetch', async (input: string | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input.url;
    if (url !== URL_) throw new Error(`unexpected fetch of ${url}`);
    const range = new Headers(init?.headers ?? (typeof input === 'string' ? undefined : input.headers)).get('range');
    served.requests.push(range);
    const m = range ? /^bytes=(\d+)-(\d*)$/.exec(range) : null;
    if (m) {
      const from = Number(m[1]);
      const to = m[2] ? Math.min(file.byteLength, Number(m[2]) + 1) : file.byteLength;
      return new Response(body(from, to), { status: 206, headers: { 'content-range': `bytes ${from}-${to - 1}/${file.byteLength}`, 'content-length': String(to - from) } });
    }
    return new Response(body(0, file.byteLength), { status: 200, headers: { 'content-length': String(file.byteLength) } });
  });
  return served;
}

function fakeCaches() {
  const caches = new Map<string, Map<string, Response>>();
  const key = (r: string | Request) => (typeof r === 'string' ? r : r.url);
  return {
    async open(name: string) {
      const entries = caches.get(name) ?? caches.set(name, new Map()).get(name)!;
      return {
        put: async (r: string | Request, response: Response) => void entries.set(key(r), new Response(await response.blob(), { headers: response.headers })),
        match: async (r: string | Request) => entries.get(key(r))?.clone(),
        keys: async () => [...entries.keys()].map((url) => new Request(url)),
        delete: async (r: string | Request) => entries.delete(key(r)),
      };
    },
  };
}

beforeEach(() => {
  vi.stubGlobal('caches', fakeCaches());
  vi.stubGlobal('navigator', { storage: { estimate: async () => ({ quota: 100 * 2 ** 30, usage: 0 }), persisted: async () => true } });
});
afterEach(() => vi.unstubAllGlobals());

describe('the bundled model opened by the engine', () => {
  it('is refused after its header when the runtime cannot serve it: nothing past the header fetched, nothing stored', async () => {
    const file = model({ unsupportedType: true });
    const served = serve(file);
    const store = new ModelFileStore('https://app.example/');
    const source = new StoredModelFileSource(store, { key: 'bundled', url: URL_, expectedBytes: file.byteLength }, 'bundled.gguf');
    const error = await source.size().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'DomainError', kind: 'invalid_request', code: 'unsupported_model_file' });
    expect((error as Error).message).toContain('IQ2_XXS');
    expect(file.byteLength).toBeGreaterThan(6 * MIB);
    expect(served.bytes).toBeLessThanOrEqual(MIB);
    expect(served.requests.every((r) => r !== null && r.startsWith('bytes=0-'))).toBe(true);
    expect(await store.storedBytes('bundled')).toBe(0);
  });

  it('a file it can serve is stored with what the header check verified, and reads from the store', async () => {
    const file = model();
    serve(file);
    const store = new ModelFileStore('https://app.example/');
    const source = new StoredModelFileSource(store, { key: 'bundled', url: URL_, expectedBytes: file.byteLength }, 'bundled.gguf');
    expect(await source.size()).toBe(file.byteLength);
    expect(await source.read(0, 4)).toEqual(new TextEncoder().encode('GGUF'));
    const record = await store.completeRecord('bundled');
    expect(record?.verified).toMatchObject({ architecture: 'llama', tensor_types: ['F32', 'Q8_0'] });
  });
});
