// Files stored without the header check (downloaded before the runtime had one, or imported) are checked from their
// stored bytes on first open (src/model-store/model-files.ts open, src/model-store/gguf-header-check.ts checkStoredHeader): one the
// runtime cannot serve is refused with 400 unsupported_model_file naming the tensor and type, the file and what to
// do (it stays stored); a served one gets the same `verified` record as a checked download, shown on the model rows.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoredModelFileSource } from '../../src/model-store/model-cache.ts';
import { ModelFileStore } from '../../src/model-store/model-files.ts';
import { createModelManager } from '../../src/model-store/model-manager.ts';
import { fakeCaches, headerCheckGguf } from '../support/sw-fakes.ts';

const URL_ = 'https://files.example/old.gguf';

/** Stores `file` under `key` as the runtime did before the header check: whole, checked for size only. */
async function storeUnchecked(store: ModelFileStore, key: string, file: Uint8Array, origin = URL_): Promise<void> {
  await store.append(key, new Blob([file as BlobPart]).stream(), 0);
  await store.complete(key, { expectedBytes: file.byteLength, origin });
}

beforeEach(() => {
  vi.stubGlobal('caches', fakeCaches());
  vi.stubGlobal('navigator', { storage: { estimate: async () => ({ quota: 100 * 2 ** 30, usage: 0 }), persisted: async () => true } });
  vi.stubGlobal('fetch', async (input: string | Request) => {
    const url = typeof input === 'string' ? input : input.url;
    if (url.endsWith('/models/catalog.json')) return Response.json([]);
    throw new Error(`unexpected fetch of ${url}: a stored file is read from the store`);
  });
});
afterEach(() => vi.unstubAllGlobals());

describe('a file stored before the header check', () => {
  it('is refused on first open when the runtime cannot serve it, naming tensor, type and what to do; it stays stored', async () => {
    const file = headerCheckGguf({ extraType: 16 });
    const store = new ModelFileStore('https://app.example/');
    await storeUnchecked(store, 'old', file);
    expect((await store.completeRecord('old'))?.verified).toBeUndefined();
    const source = new StoredModelFileSource(store, { key: 'old', url: URL_, expectedBytes: file.byteLength }, 'old.gguf');
    const error = await source.size().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'DomainError', kind: 'invalid_request', code: 'unsupported_model_file' });
    expect((error as Error).message).toContain(URL_);
    expect((error as Error).message).toContain('blk.0.attn_k.weight');
    expect((error as Error).message).toContain('IQ2_XXS');
    expect((error as Error).message).toMatch(/stored without a header check.*delete it/);
    expect(await store.storedBytes('old')).toBe(file.byteLength);
    // Refused again on the next open (nothing recorded it as verified).
    await expect(store.open('old')).rejects.toMatchObject({ code: 'unsupported_model_file' });
  });

  it('an architecture the loader lacks is refused the same way', async () => {
    const store = new ModelFileStore('https://app.example/');
    await storeUnchecked(store, 'old', headerCheckGguf({ arch: 'mamba' }));
    await expect(store.open('old')).rejects.toMatchObject({ code: 'unsupported_model_file', message: expect.stringMatching(/architecture "mamba" is not supported/) });
  });

  it('a file the runtime serves opens as before and its record gets what the check verified', async () => {
    const file = headerCheckGguf();
    const store = new ModelFileStore('https://app.example/');
    await storeUnchecked(store, 'old', file);
    const source = new StoredModelFileSource(store, { key: 'old', url: URL_, expectedBytes: file.byteLength }, 'old.gguf');
    expect(await source.size()).toBe(file.byteLength);
    expect((await store.completeRecord('old'))?.verified).toMatchObject({ architecture: 'llama', tensor_types: ['F32', 'Q8_0'], chat_format: 'hermes', chat_template: false });
  });

  it('an imported file is checked when the engine first opens it; the model rows then show what was verified', async () => {
    const manager = createModelManager('https://app.example/');
    const directory = manager.directory(async () => new Set());
    const importOf = (name: string, file: Uint8Array) =>
      directory.manage!.importFile(new Request(`https://app.example/v1/models/import?name=${name}`, { method: 'POST', body: file as BodyInit }), new URL(`https://app.example/v1/models/import?name=${name}`));
    expect((await importOf('good.gguf', headerCheckGguf())).status).toBe(201);
    expect((await importOf('bad.gguf', headerCheckGguf({ extraType: 16 }))).status).toBe(201);
    const rowsBefore = (await directory.list()) as { id: string; verified?: unknown }[];
    expect(rowsBefore.find((r) => r.id === 'good')?.verified).toBeUndefined();
    const sources = await manager.engineSources();
    const gguf = (id: string) => sources.find((s) => s.id === id)!.gguf as StoredModelFileSource;
    expect(await gguf('good').size()).toBeGreaterThan(0);
    const refused = await gguf('bad').size().catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'unsupported_model_file', message: expect.stringContaining('IQ2_XXS') });
    const rows = (await directory.list()) as { id: string; verified?: unknown }[];
    expect(rows.find((r) => r.id === 'good')?.verified).toMatchObject({ architecture: 'llama', tensor_types: ['F32', 'Q8_0'] });
    expect(rows.find((r) => r.id === 'bad')?.verified).toBeUndefined();
  });
});
