// gpt-oss-20b in the model catalog (issue 17): an entry for ggml-org's MXFP4 GGUF, offered because the loader
// supports the gpt-oss architecture, marked as needing a GPU with 16 GiB; the model manager's catalog rows carry
// that need (min_gpu_memory_bytes, what the model panel shows) only for it, and a download whose size the quota cannot
// hold is refused before any byte of the file is fetched, the message naming the bytes needed and available.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { catalogEntrySchema } from '../../src/model-store/model-catalog.ts';
import { remoteCatalog } from '../../src/model-store/remote-catalog.ts';
import { createModelManager } from '../../src/model-store/model-manager.ts';
import { SUPPORTED_ARCHITECTURES } from '../../src/model/model-config.ts';
import { fakeCaches } from '../support/sw-fakes.ts';

const GIB = 2 ** 30;
const gptOss = () => remoteCatalog.find((e) => e.id === 'gpt-oss-20b-mxfp4');

let fetched: string[] = [];

beforeEach(() => {
  fetched = [];
  vi.stubGlobal('caches', fakeCaches());
  // The app's own catalog (models/catalog.json) is empty here; any other fetch would be the model file.
  vi.stubGlobal('fetch', async (input: string | Request) => {
    const url = typeof input === 'string' ? input : input.url;
    fetched.push(url);
    if (url.endsWith('/models/catalog.json')) return Response.json([]);
    throw new Error(`unexpected fetch of ${url}`);
  });
});

afterEach(() => vi.unstubAllGlobals());

describe('gpt-oss-20b in the catalog', () => {
  it('is offered as the ggml-org MXFP4 GGUF, needing a GPU with 16 GiB, because the loader supports gpt-oss', () => {
    expect(SUPPORTED_ARCHITECTURES).toContain('gpt-oss');
    const entry = gptOss();
    expect(entry).toMatchObject({
      file: 'https://huggingface.co/ggml-org/gpt-oss-20b-GGUF/resolve/main/gpt-oss-20b-mxfp4.gguf',
      format: 'gguf',
      license: 'Apache-2.0',
      bytesApproximate: true,
      minGpuMemoryBytes: 16 * GIB,
    });
    expect(entry!.sha256).toBeUndefined();
    expect(entry!.bytes).toBeGreaterThan(11 * GIB);
    expect(entry!.bytes).toBeLessThan(13 * 10 ** 9);
    // Every entry is valid under the catalog's schema, which keeps the field.
    for (const e of remoteCatalog) expect(catalogEntrySchema.parse(e)).toEqual(e);
    expect(remoteCatalog.filter((e) => e.minGpuMemoryBytes !== undefined).map((e) => e.id)).toEqual(['gpt-oss-20b-mxfp4']);
  });

  it("the model manager's catalog rows say which model needs a 16 GiB GPU", async () => {
    vi.stubGlobal('navigator', { storage: { estimate: async () => ({ quota: 100 * GIB, usage: 0 }), persisted: async () => false } });
    const directory = createModelManager('https://app.example/').directory(async () => new Set());
    const body = (await (await directory.manage!.catalog()).json()) as { data: { id: string; min_gpu_memory_bytes?: number; bytes: number }[] };
    const row = body.data.find((m) => m.id === 'gpt-oss-20b-mxfp4');
    expect(row).toMatchObject({ min_gpu_memory_bytes: 16 * GIB, bytes: gptOss()!.bytes, status: 'available', source: 'catalog' });
    expect(body.data.filter((m) => m.min_gpu_memory_bytes !== undefined).map((m) => m.id)).toEqual(['gpt-oss-20b-mxfp4']);
  });

  it('a download the quota cannot hold is refused (insufficient_storage) before the file is fetched, asking for persistence', async () => {
    let persistAsked = 0;
    vi.stubGlobal('navigator', {
      storage: { estimate: async () => ({ quota: 8 * GIB, usage: GIB }), persisted: async () => false, persist: async () => (persistAsked++, false) },
    });
    const directory = createModelManager('https://app.example/').directory(async () => new Set());
    const error = await directory.manage!.download('gpt-oss-20b', new Request('https://app.example/v1/models/gpt-oss-20b/download', { method: 'POST' })).catch((e: unknown) => e);
    // The /v1 edge answers this kind with 507 insufficient_storage (toApiError).
    expect(error).toMatchObject({ name: 'ModelFileError', kind: 'insufficient_storage', code: 'insufficient_storage' });
    expect((error as Error).message).toContain(`Needed: ${gptOss()!.bytes} bytes; available: ${7 * GIB} bytes.`);
    expect((error as Error).message).toContain('Persistent storage was not granted');
    expect(persistAsked).toBe(1);
    expect(fetched.filter((u) => !u.endsWith('/models/catalog.json'))).toEqual([]);
  });
});
