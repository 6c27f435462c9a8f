// The dedicated-worker fallback in Chromium, forced (the service worker registered as `sw.js?engine=worker`):
// the page hosts the engine in a dedicated worker, the service worker relays /v1 to it over a MessagePort, and the
// same requests as in service-worker.spec.ts are answered: a stream that completes, the model list, an unknown
// model's 404, a request after the service worker was stopped, and an aborted fetch that stops its generation and
// lets the next request through.
// The fixture page (test/e2e/fixtures/worker-fallback.html) is built here with Vite into dist/app, next to the app.
import { expect, test, type Page } from '@playwright/test';
import { abortWhileAnotherWaits, buildFixturePage, expectWellFormedStream, importLongTalkingModel, storedStatus, streamFromPage } from './fixtures/page-requests.ts';

const pagePath = '/e2e/worker-fallback/test/e2e/fixtures/worker-fallback.html';

test.beforeAll(async () => {
  test.setTimeout(120_000);
  await buildFixturePage('worker-fallback', 'test/e2e/fixtures/worker-fallback.html');
});

async function openFallbackPage(page: Page): Promise<string[]> {
  await page.goto(pagePath);
  return page.evaluate(() => window.shimReady);
}

test('forced fallback: the engine in a page-owned dedicated worker answers through the service worker', async ({ page }) => {
  const models = await openFallbackPage(page);
  expect(models).toContain('toy-qwen3');
  const scriptUrl = await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL ?? '');
  expect(scriptUrl).toContain('engine=worker');

  const { status, contentType, engine, events } = await streamFromPage(page, { input: 'Hello there', max_output_tokens: 12, temperature: 0 });
  expect(status).toBe(200);
  expect(contentType).toContain('text/event-stream');
  expect(engine).toBe('page-worker');
  expectWellFormedStream(events);

  const unknown = await page.evaluate(async () => {
    const response = await fetch('/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-nope', input: 'x' }) });
    return { status: response.status, engine: response.headers.get('x-webgpu-responses-engine'), body: await response.json() };
  });
  expect(unknown.status).toBe(404);
  expect(unknown.engine).toBe('page-worker');
  expect(unknown.body.error).toMatchObject({ type: 'invalid_request_error', param: 'model' });
  // The page started its engine worker because the service worker asked for it.
  expect(await page.evaluate(() => window.engineFallback.worker !== null)).toBe(true);
});

test('forced fallback: a stopped service worker asks the page for its engine worker again and answers', async ({ page, context }) => {
  await openFallbackPage(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  const { status, engine, events } = await streamFromPage(page, { input: 'Still there?', max_output_tokens: 8, temperature: 0 });
  expect(status).toBe(200);
  expect(engine).toBe('page-worker');
  expectWellFormedStream(events);
});

test('forced fallback: an aborted fetch stops its generation in the worker and the next request gets its turn', async ({ page }) => {
  await openFallbackPage(page);
  const { aId, aSawDelta, bStatus, b } = await abortWhileAnotherWaits(page, await importLongTalkingModel(page));
  expect(aSawDelta).toBe(true);
  expect(bStatus).toBe(200);
  expect(['completed', 'incomplete']).toContain(b.status);
  await expect.poll(async () => (await storedStatus(page, aId!))?.status).toBe('cancelled');
});
