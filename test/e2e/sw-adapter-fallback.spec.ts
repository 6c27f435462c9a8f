// A service worker that has WebGPU but gets no adapter (requestAdapter() returns null there, as in some browsers
// and profiles, while pages get one) falls back to the engine in a page's dedicated worker instead of failing:
// the app's real sw.js runs under a test wrapper that makes requestAdapter() return null, and a page that installs
// the shim without any fallback option gets its streamed request answered by the page worker, with the reason
// (`no-adapter`) on every answer, and the service worker asked for an adapter once, not per request.
// The fixture page is built here with Vite into dist/app, next to the app; the wrapper is copied beside it.
import { expect, test, type Page } from '@playwright/test';
import { copyFileSync } from 'node:fs';
import { buildFixturePage, expectWellFormedStream, streamFromPage } from './fixtures/page-requests.ts';

const serviceWorkerUrl = '/e2e/sw-adapter-fallback/null-adapter-sw.js';
const pagePath = `/e2e/sw-adapter-fallback/test/e2e/fixtures/sw-adapter-fallback.html?sw=${encodeURIComponent(serviceWorkerUrl)}`;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  const out = await buildFixturePage('sw-adapter-fallback', 'test/e2e/fixtures/sw-adapter-fallback.html');
  copyFileSync(new URL('fixtures/sw-adapter-fallback-null-adapter-sw.js', import.meta.url), `${out}/null-adapter-sw.js`);
});

async function requestAdapterCallsInServiceWorker(page: Page): Promise<number> {
  const worker = page.context().serviceWorkers().find((w) => w.url().endsWith(serviceWorkerUrl));
  if (!worker) throw new Error(`no service worker ${serviceWorkerUrl} in this context`);
  return worker.evaluate(() => (self as unknown as { requestAdapterCalls: number }).requestAdapterCalls);
}

test('requestAdapter() null in the service worker: the page worker answers, the reason is reported, the adapter asked once', async ({ page }) => {
  await page.goto(pagePath);
  const models = await page.evaluate(() => window.shimReady);
  expect(models).toContain('toy-qwen3');
  expect(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL ?? '')).toContain(serviceWorkerUrl);

  const listed = await page.evaluate(async () => {
    const response = await fetch('/v1/models');
    return {
      status: response.status,
      engine: response.headers.get('x-webgpu-responses-engine'),
      reason: response.headers.get('x-webgpu-responses-engine-fallback'),
    };
  });
  expect(listed).toEqual({ status: 200, engine: 'page-worker', reason: 'no-adapter' });

  const { status, contentType, engine, events } = await streamFromPage(page, { input: 'Hello there', max_output_tokens: 12, temperature: 0 });
  expect(status).toBe(200);
  expect(contentType).toContain('text/event-stream');
  expect(engine).toBe('page-worker');
  expectWellFormedStream(events);
  // The page started its engine worker because the service worker asked for it.
  expect(await page.evaluate(() => window.shim.engineWorker.worker !== null)).toBe(true);
  // Decided once for this worker's life, not per request (/v1/models twice, one stream).
  expect(await requestAdapterCallsInServiceWorker(page)).toBe(1);
});
