// The bundled model's file as the engine opens it (StoredModelFileSource, src/model-store/model-cache.ts): its first read
// downloads the file with the same quota and header checks as the model manager's downloads (src/model-store/gguf-header-check.ts), so a
// file the runtime cannot serve is refused (400 unsupported_model_file) after its header only, and a served file's
// stored record says what the check verified.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoredModelFileSource } from '../../src/model-store/model-cache.ts';
import { ModelFileStore } from '../../src/model-store/model-files.ts';
import { fakeCaches, headerCheckGguf, rangeFileServer, rangeOf } from '../support/sw-fakes.ts';

const MIB = 1 << 20;
const URL_ = 'https://files.example/bundled.gguf';

/** The file server at URL_ (test/support/sw-fakes.ts), as fetch; returns what it served. */
function serve(file: Uint8Array) {
  const server = rangeFileServer(file);
  vi.stubGlobal('fetch', async (input: string | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input.url;
    if (url !== URL_) throw new Error(`unexpected fetch of ${url}`);
    return server.handle(rangeOf(input, init));
  });
  return server.served;
}

beforeEach(() => {
  vi.stubGlobal('caches', fakeCaches());
  vi.stubGlobal('navigator', { storage: { estimate: async () => ({ quota: 100 * 2 ** 30, usage: 0 }), persisted: async () => true } });
});
afterEach(() => vi.unstubAllGlobals());

describe('the bundled model opened by the engine', () => {
  it('is refused after its header when the runtime cannot serve it: nothing past the header fetched, nothing stored', async () => {
    const file = headerCheckGguf({ extraType: 16 });
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
    const file = headerCheckGguf();
    serve(file);
    const store = new ModelFileStore('https://app.example/');
    const source = new StoredModelFileSource(store, { key: 'bundled', url: URL_, expectedBytes: file.byteLength }, 'bundled.gguf');
    expect(await source.size()).toBe(file.byteLength);
    expect(await source.read(0, 4)).toEqual(new TextEncoder().encode('GGUF'));
    const record = await store.completeRecord('bundled');
    expect(record?.verified).toMatchObject({ architecture: 'llama', tensor_types: ['F32', 'Q8_0'] });
  });

  it('is refused (507 insufficient_storage) before any byte is fetched when it does not fit the storage quota', async () => {
    const file = headerCheckGguf();
    const served = serve(file);
    vi.stubGlobal('navigator', { storage: { estimate: async () => ({ quota: 4 * MIB, usage: MIB }), persisted: async () => true } });
    const store = new ModelFileStore('https://app.example/');
    const source = new StoredModelFileSource(store, { key: 'bundled', url: URL_, expectedBytes: file.byteLength }, 'bundled.gguf');
    const error = await source.size().catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'insufficient_storage', code: 'insufficient_storage' });
    expect((error as Error).message).toContain(URL_);
    expect(served.requests).toEqual([]);
    expect(await store.storedBytes('bundled')).toBe(0);
  });
});
