// The model manager in the real service worker: a model downloaded by URL from a local test server (another
// 127.0.0.1 port) with progress, resumed after the server cut the connection mid-file, then served by the engine
// and deleted; refused cleanly when the origin's quota (set through the DevTools protocol) is too small; a local
// file imported. The model is generated at test time (tools/make-test-model), never downloaded.
import { expect, test, type Page } from '@playwright/test';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { makeTestModel } from '../support/test-models.ts';

let server: http.Server;
let modelUrl: string;
let modelBytes: Uint8Array;
let modelSha256: string;
/** The Range header of every GET of the model file. */
let ranges: (string | null)[] = [];
/** The closed ranges the header check asked for before each download. */
let headerProbes: string[] = [];
/** Bytes sent for the header check's ranges (the download keeps them and continues after them). */
let probedBytes = 0;
/** The body after the header check's first MiB (src/model-store/gguf-header-check.ts), which the download fetches itself. */
const bodyAfterProbe = () => modelBytes.byteLength - Math.min(1 << 20, modelBytes.byteLength);
/** When set, the next GET of the model sends this many bytes and then destroys the socket. */
let cutNextAfter: number | null = null;
/** When set, every GET of the model sends this many bytes and then destroys the socket. */
let cutEveryAfter: number | null = null;

test.beforeAll(async () => {
  const model = await makeTestModel({ arch: 'qwen3', type: 'Q8_0', seed: 11 });
  modelBytes = readFileSync(model.ggufPath);
  modelSha256 = createHash('sha256').update(modelBytes).digest('hex');
  server = http.createServer((req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-headers', 'range');
    res.setHeader('access-control-expose-headers', 'content-range, content-length, accept-ranges');
    if (req.method === 'OPTIONS') return void res.writeHead(204).end();
    if (req.url !== '/model.gguf') return void res.writeHead(404).end('not found');
    const range = req.headers.range ?? null;
    // A closed range (bytes=N-M) is the header check before a download (src/model-store/gguf-header-check.ts): answered
    // exactly, never cut, and counted apart from the body's requests.
    const probe = range ? /^bytes=(\d+)-(\d+)$/.exec(range) : null;
    if (probe) headerProbes.push(range!);
    else ranges.push(range);
    const start = range ? Number(/^bytes=(\d+)-/.exec(range)?.[1] ?? 0) : 0;
    const end = probe ? Math.min(modelBytes.byteLength, Number(probe[2]) + 1) : modelBytes.byteLength;
    const body = modelBytes.subarray(start, end);
    if (probe) probedBytes += body.byteLength;
    res.writeHead(range ? 206 : 200, {
      'content-type': 'application/octet-stream',
      'accept-ranges': 'bytes',
      'content-length': body.byteLength,
      ...(range ? { 'content-range': `bytes ${start}-${end - 1}/${modelBytes.byteLength}` } : {}),
    });
    if (probe) return void res.end(body);
    const cut = cutNextAfter ?? cutEveryAfter;
    cutNextAfter = null;
    if (cut === null) return void res.end(body);
    res.write(body.subarray(0, cut), () => setTimeout(() => res.socket?.destroy(), 50));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  modelUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/model.gguf`;
});

test.afterAll(async () => {
  server.closeAllConnections();
  await new Promise((ok) => server.close(ok));
});

test.beforeEach(() => {
  ranges = [];
  headerProbes = [];
  probedBytes = 0;
  cutNextAfter = null;
  cutEveryAfter = null;
});

/** A page of the app's origin controlled by the service worker (no demo UI involved). */
async function controlledPage(page: Page): Promise<void> {
  await page.goto('/e2e-blank');
  await page.evaluate(async () => {
    const registration = await navigator.serviceWorker.register('/sw.js');
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      const controlled = new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
      registration.active?.postMessage({ type: 'claim' });
      await controlled;
    }
  });
}

interface DownloadEvent {
  type: string;
  model: string;
  loaded?: number;
  total?: number;
  resumed_from?: number;
  bytes?: number;
  error?: { message: string; code: string };
}

/** POSTs a download from the page; returns the status, the SSE events of the answer and what the channel saw. */
async function downloadFromPage(page: Page, id: string, body: Record<string, unknown>) {
  return page.evaluate(
    async ({ id, body }) => {
      const broadcast: DownloadEvent[] = [];
      const channel = new BroadcastChannel('webgpu-responses-models');
      channel.onmessage = (e: MessageEvent<DownloadEvent>) => broadcast.push(e.data);
      const response = await fetch(`/v1/models/${id}/download`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await response.text();
      await new Promise((r) => setTimeout(r, 100));
      channel.close();
      const events = response.headers.get('content-type')?.includes('text/event-stream')
        ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as DownloadEvent)
        : [];
      return { status: response.status, json: events.length ? null : (JSON.parse(text) as { error: { message: string; code: string; type: string } }), events, broadcast };
    },
    { id, body },
  );
}

test('a model downloads by URL with progress, resumes after a cut connection, then serves requests and is deleted', async ({ page }) => {
  await controlledPage(page);
  expect(bodyAfterProbe()).toBeGreaterThan(0);
  const cutAt = Math.floor(bodyAfterProbe() * 0.45);
  cutNextAfter = cutAt;
  const { status, events, broadcast } = await downloadFromPage(page, 'downloaded-test-model', { url: modelUrl, bytes: modelBytes.byteLength, sha256: modelSha256, license: 'MIT' });
  expect(status).toBe(200);

  // First the header check (a closed range from byte 0), then two requests for the body: the first continued where
  // the header check ended (its bytes are kept, not fetched again) and was cut, the second asked for the rest from
  // the bytes already stored.
  expect(headerProbes[0]).toBe(`bytes=0-${(1 << 20) - 1}`);
  expect(probedBytes).toBeGreaterThan(0);
  expect(ranges).toHaveLength(2);
  expect(ranges[0]).toBe(`bytes=${probedBytes}-`);
  const resumedFrom = Number(/^bytes=(\d+)-$/.exec(ranges[1] ?? '')?.[1]);
  expect(resumedFrom).toBeGreaterThan(probedBytes);
  expect(resumedFrom).toBeLessThanOrEqual(probedBytes + cutAt);

  const progress = events.filter((e) => e.type === 'model.download.progress');
  expect(progress.length).toBeGreaterThan(1);
  expect(progress.every((e) => e.total === modelBytes.byteLength)).toBe(true);
  expect(progress.some((e) => e.resumed_from === resumedFrom)).toBe(true);
  expect(progress.at(-1)!.loaded).toBe(modelBytes.byteLength);
  expect(events.at(-1)).toMatchObject({ type: 'model.download.completed', model: 'downloaded-test-model', bytes: modelBytes.byteLength });
  // Other tabs see the same progress on the broadcast channel.
  expect(broadcast.some((e) => e.type === 'model.download.progress')).toBe(true);
  expect(broadcast.at(-1)?.type).toBe('model.download.completed');

  const listed = await page.evaluate(async () => (await (await fetch('/v1/models')).json()) as { data: { id: string; status: string; bytes: number }[] });
  expect(listed.data.find((m) => m.id === 'downloaded-test-model')).toMatchObject({ status: 'downloaded', bytes: modelBytes.byteLength, verified: { architecture: 'qwen3', tensor_types: expect.arrayContaining(['Q8_0']) } });

  // The engine serves the downloaded model (the stored file is the served one, byte for byte: the sha256 held).
  const answer = await page.evaluate(async () => {
    const response = await fetch('/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'downloaded-test-model', input: 'Hi', max_output_tokens: 4, temperature: 0, store: false }),
    });
    return { status: response.status, body: (await response.json()) as { model: string; status: string } };
  });
  expect(answer.status).toBe(200);
  expect(answer.body.model).toBe('downloaded-test-model');
  expect(['completed', 'incomplete']).toContain(answer.body.status);

  const deleted = await page.evaluate(async () => (await fetch('/v1/models/downloaded-test-model', { method: 'DELETE' })).json());
  expect(deleted).toEqual({ id: 'downloaded-test-model', object: 'model', deleted: true });
  const after = await page.evaluate(async () => (await (await fetch('/v1/models/catalog')).json()) as { data: { id: string }[] });
  expect(after.data.map((m) => m.id)).not.toContain('downloaded-test-model');
});

test('a download that failed (every attempt cut) continues on the next request from the bytes stored', async ({ page }) => {
  await controlledPage(page);
  const step = Math.floor(bodyAfterProbe() / 10);
  cutEveryAfter = step;
  const failed = await downloadFromPage(page, 'resumable-model', { url: modelUrl, bytes: modelBytes.byteLength, license: 'MIT' });
  expect(failed.status).toBe(200);
  expect(failed.events.at(-1)).toMatchObject({ type: 'model.download.failed', model: 'resumable-model', error: { code: 'model_download_failed' } });
  // Each retry asked for the bytes after those already stored, and got further.
  const starts = ranges.map((r) => Number(/^bytes=(\d+)-$/.exec(r ?? 'bytes=0-')?.[1]));
  expect(starts.length).toBeGreaterThan(1);
  starts.slice(1).forEach((start, i) => expect(start).toBeGreaterThan(starts[i]!));
  const catalog = await page.evaluate(async () => (await (await fetch('/v1/models/catalog')).json()) as { data: { id: string; status: string; stored_bytes?: number }[] });
  const partial = catalog.data.find((m) => m.id === 'resumable-model');
  expect(partial?.status).toBe('available');
  expect(partial?.stored_bytes).toBeGreaterThan(starts.at(-1)!);

  cutEveryAfter = null;
  ranges = [];
  const resumed = await downloadFromPage(page, 'resumable-model', {});
  expect(resumed.events.at(-1)).toMatchObject({ type: 'model.download.completed', bytes: modelBytes.byteLength });
  expect(Number(/^bytes=(\d+)-$/.exec(ranges[0] ?? '')?.[1])).toBeGreaterThan(starts.at(-1)!);
  expect(resumed.events.find((e) => e.type === 'model.download.progress')?.resumed_from).toBe(Number(/^bytes=(\d+)-$/.exec(ranges[0]!)?.[1]));
});

test('a download whose sha256 does not match is refused and nothing of it is kept', async ({ page }) => {
  await controlledPage(page);
  const wrong = modelSha256.replace(/^./, (c) => (c === '0' ? '1' : '0'));
  const { events } = await downloadFromPage(page, 'corrupt-model', { url: modelUrl, bytes: modelBytes.byteLength, sha256: wrong, license: 'MIT' });
  expect(events.at(-1)).toMatchObject({ type: 'model.download.failed', error: { code: 'model_checksum_mismatch' } });
  const catalog = await page.evaluate(async () => (await (await fetch('/v1/models/catalog')).json()) as { data: { id: string; status: string; stored_bytes?: number }[] });
  expect(catalog.data.find((m) => m.id === 'corrupt-model')).toBeUndefined();
});

test('a download that does not fit the quota is refused before any byte is fetched', async ({ page, context }) => {
  await controlledPage(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(page.url()).origin, quotaSize: 64 * 1024 });
  const { status, json } = await downloadFromPage(page, 'too-big-model', { url: modelUrl, bytes: modelBytes.byteLength, license: 'MIT' });
  expect(status, JSON.stringify(json)).toBe(507);
  expect(json!.error).toMatchObject({ code: 'insufficient_storage', type: 'server_error' });
  // Chromium enforces the overridden quota but its storage.estimate() keeps reporting the real one, so the refusal
  // comes from the first write (the model's description) rather than from the estimate: either way, before any fetch.
  expect(json!.error.message).toMatch(/storage/i);
  expect(ranges).toHaveLength(0);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(page.url()).origin });
});

test('a local file is imported as a model; a file that is not GGUF is refused', async ({ page }) => {
  await controlledPage(page);
  const result = await page.evaluate(async (url) => {
    const file = await (await fetch(url)).blob();
    const imported = await fetch('/v1/models/import?name=My%20Local%20Model.gguf', { method: 'POST', body: file });
    const bad = await fetch('/v1/models/import?name=notes.txt', { method: 'POST', body: new Blob(['hello, not a model']) });
    const listed = (await (await fetch('/v1/models')).json()) as { data: { id: string; source: string; bytes: number }[] };
    const deleted = await fetch('/v1/models/my-local-model', { method: 'DELETE' });
    return { imported: { status: imported.status, body: await imported.json() }, bad: { status: bad.status, body: await bad.json() }, listed, deleted: await deleted.json() };
  }, modelUrl);
  expect(result.imported.status).toBe(201);
  expect(result.imported.body).toMatchObject({ id: 'my-local-model', object: 'model', source: 'imported', status: 'downloaded', bytes: modelBytes.byteLength });
  expect(result.bad.status).toBe(400);
  expect(result.bad.body.error).toMatchObject({ code: 'unsupported_model_file', type: 'invalid_request_error' });
  expect(result.listed.data.find((m) => m.id === 'my-local-model')).toMatchObject({ source: 'imported', bytes: modelBytes.byteLength });
  expect(result.deleted).toEqual({ id: 'my-local-model', object: 'model', deleted: true });
});
