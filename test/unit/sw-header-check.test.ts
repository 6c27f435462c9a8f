// The header check before a download (issue 15): a GGUF's header is fetched by Range (grown as the parser asks),
// parsed, and a file the runtime cannot serve (a tensor type without a decoder, an architecture the loader lacks) is
// refused before its body is fetched; a server that ignores Range is read only as far as the header. What was
// verified (architecture, tensor types present, chat format) is kept on the stored record and shown on model rows.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ModelFileStore } from '../../src/model-store/model-files.ts';
import { probeGgufHeader } from '../../src/model-store/gguf-header-check.ts';
import { GGUF_LIMITS } from '../../src/model/gguf.ts';
import { createModelManager } from '../../src/model-store/model-manager.ts';
import { fakeCaches, headerCheckGguf, rangeFileServer, rangeOf } from '../support/sw-fakes.ts';

const MIB = 1 << 20;
const LLAMA3_TEMPLATE = "{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n{{ m['content'] }}<|eot_id|>{% endfor %}";

const URL_ = 'https://files.example/model.gguf';

function serve(server: ReturnType<typeof rangeFileServer>) {
  vi.stubGlobal('fetch', async (input: string | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input.url;
    if (url.endsWith('/models/catalog.json')) return Response.json([]);
    if (url !== URL_) throw new Error(`unexpected fetch of ${url}`);
    return server.handle(rangeOf(input, init));
  });
}

beforeEach(() => {
  vi.stubGlobal('caches', fakeCaches());
  vi.stubGlobal('navigator', { storage: { estimate: async () => ({ quota: 100 * 2 ** 30, usage: 0 }), persisted: async () => true } });
});
afterEach(() => vi.unstubAllGlobals());

describe('the header check before a download', () => {
  it('refuses an unsupported tensor type after reading only the header by Range, naming the tensor and type', async () => {
    const file = headerCheckGguf({ extraType: 16 });
    const server = rangeFileServer(file);
    serve(server);
    const store = new ModelFileStore('https://app.example/');
    const error = await store.download('k', URL_, { checkHeader: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'DomainError', kind: 'invalid_request', code: 'unsupported_model_file' });
    expect((error as Error).message).toContain('blk.0.attn_k.weight');
    expect((error as Error).message).toContain('IQ2_XXS');
    expect(file.byteLength).toBeGreaterThan(6 * MIB);
    expect(server.served.bytes).toBeLessThanOrEqual(MIB);
    // Only ranged requests: the body was never asked for; nothing stored.
    expect(server.served.requests.every((r) => r !== null && r.startsWith('bytes=0-'))).toBe(true);
    expect(await store.storedBytes('k')).toBe(0);
  });

  it('refuses an architecture the loader lacks', async () => {
    const server = rangeFileServer(headerCheckGguf({ arch: 'mamba' }));
    serve(server);
    const error = await new ModelFileStore('https://app.example/').download('k', URL_, { checkHeader: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'invalid_request', code: 'unsupported_model_file' });
    expect((error as Error).message).toMatch(/architecture "mamba" is not supported/);
    expect(server.served.bytes).toBeLessThanOrEqual(MIB);
  });

  it('grows the range past 1 MiB for a large header, verifies a supported file and records what it verified', async () => {
    const file = headerCheckGguf({ template: LLAMA3_TEMPLATE, padHeaderBytes: Math.floor(1.5 * MIB) });
    const server = rangeFileServer(file);
    serve(server);
    const store = new ModelFileStore('https://app.example/');
    const blob = await store.download('k', URL_, { checkHeader: true });
    expect(blob.size).toBe(file.byteLength);
    // Two header ranges (the first MiB, then the rest the parser asked for), then the body.
    expect(server.served.requests.slice(0, 2)).toEqual([`bytes=0-${MIB - 1}`, expect.stringMatching(/^bytes=1048576-\d+$/)]);
    expect(server.served.requests.length).toBe(3);
    const record = await store.completeRecord('k');
    expect(record?.verified).toMatchObject({ architecture: 'llama', tensor_types: ['F32', 'Q8_0'], chat_format: 'llama3', chat_template: true });
    expect(record!.verified!.header_bytes).toBeGreaterThan(1.5 * MIB);
    expect(record!.verified!.header_bytes).toBeLessThan(1.6 * MIB);
  });

  it("keeps to the parser's limits: a header past maxHeaderBytes is refused without fetching past the limit", async () => {
    const server = rangeFileServer(headerCheckGguf({ padHeaderBytes: 3 * MIB }));
    serve(server);
    const error = await probeGgufHeader(URL_, { limits: { ...GGUF_LIMITS, maxHeaderBytes: 2 * MIB } }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unsupported_model_file' });
    expect((error as Error).message).toMatch(/larger than the 2097152-byte limit/);
    expect(server.served.bytes).toBeLessThanOrEqual(2 * MIB);
  });

  it('reads only the header of a server that ignores Range (200 with the whole body) and cancels the rest', async () => {
    const file = headerCheckGguf({ extraType: 16 });
    const server = rangeFileServer(file, { honourRange: false });
    serve(server);
    const error = await new ModelFileStore('https://app.example/').download('k', URL_, { checkHeader: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unsupported_model_file' });
    expect(server.served.requests.length).toBe(1);
    expect(server.served.bytes).toBeLessThanOrEqual(MIB + 64 * 1024);
    expect(server.served.bytes).toBeLessThan(file.byteLength / 4);
  });

  it('a supported file on a server that ignores Range downloads whole, and GET /v1/models rows show what was verified', async () => {
    const file = headerCheckGguf({ template: LLAMA3_TEMPLATE });
    const server = rangeFileServer(file, { honourRange: false });
    serve(server);
    const directory = createModelManager('https://app.example/').directory(async () => new Set());
    const response = await directory.manage!.download('my-llama', new Request('https://app.example/v1/models/my-llama/download', { method: 'POST', body: JSON.stringify({ url: URL_ }) }));
    const events = await response.text();
    expect(events).toContain('model.download.completed');
    const rows = (await directory.list()) as { id: string; verified?: unknown }[];
    expect(rows.find((r) => r.id === 'my-llama')?.verified).toEqual({ architecture: 'llama', tensor_types: ['F32', 'Q8_0'], chat_format: 'llama3', chat_template: true, header_bytes: expect.any(Number) });
  });

  it('fetches no byte twice: the download keeps the probed bytes and continues from where the probe ended', async () => {
    const file = headerCheckGguf({ template: LLAMA3_TEMPLATE });
    const server = rangeFileServer(file);
    serve(server);
    const store = new ModelFileStore('https://app.example/');
    const blob = await store.download('k', URL_, { checkHeader: true });
    expect(Buffer.from(await blob.arrayBuffer()).equals(file)).toBe(true);
    expect(server.served.requests).toEqual([`bytes=0-${MIB - 1}`, `bytes=${MIB}-`]);
    expect(server.served.bytes).toBe(file.byteLength);
    expect((await store.completeRecord('k'))?.verified).toMatchObject({ architecture: 'llama', chat_format: 'llama3' });
  });

  it('from a server that ignores Range, the probe\'s own body is the download: one request, every byte once', async () => {
    const file = headerCheckGguf();
    const server = rangeFileServer(file, { honourRange: false });
    serve(server);
    const progress: number[] = [];
    const store = new ModelFileStore('https://app.example/');
    const blob = await store.download('k', URL_, { checkHeader: true, onProgress: (p) => progress.push(p.loaded) });
    expect(Buffer.from(await blob.arrayBuffer()).equals(file)).toBe(true);
    expect(server.served.requests.length).toBe(1);
    expect(server.served.bytes).toBe(file.byteLength);
    expect(progress.at(-1)).toBe(file.byteLength);
  });

  it('a download resumed after a cut keeps its stored bytes and fetches only the rest after the probe', async () => {
    const file = headerCheckGguf();
    const store = new ModelFileStore('https://app.example/', MIB);
    // 3 MiB stored by an earlier, cut attempt.
    await store.append('k', new Blob([file.slice(0, 3 * MIB)]).stream(), 0);
    const server = rangeFileServer(file);
    serve(server);
    const blob = await store.download('k', URL_, { checkHeader: true });
    expect(Buffer.from(await blob.arrayBuffer()).equals(file)).toBe(true);
    expect(server.served.requests).toEqual([`bytes=0-${MIB - 1}`, `bytes=${3 * MIB}-`]);
    expect(server.served.bytes).toBe(file.byteLength - 2 * MIB);
  });

  it('a refused download is reported as model.download.failed with unsupported_model_file', async () => {
    serve(rangeFileServer(headerCheckGguf({ extraType: 16 })));
    const directory = createModelManager('https://app.example/').directory(async () => new Set());
    const response = await directory.manage!.download('bad', new Request('https://app.example/v1/models/bad/download', { method: 'POST', body: JSON.stringify({ url: URL_ }) }));
    const events = await response.text();
    expect(events).toContain('model.download.failed');
    expect(events).toContain('unsupported_model_file');
    expect(events).toContain('IQ2_XXS');
  });
});
