// The service worker in the real browser: it answers /v1 with a real stream from the real engine, keeps answering
// offline after the first load, survives being stopped, serves two tabs at once, and an aborted fetch stops its
// generation so the next request in the queue gets its turn.
import { expect, test } from '@playwright/test';
import { abortWhileAnotherWaits, expectWellFormedStream, importLongTalkingModel, openDemo, storedStatus, streamFromPage } from './fixtures/page-requests.ts';


test('the service worker answers POST /v1/responses with a real stream from the engine', async ({ page }) => {
  await openDemo(page);
  const { status, contentType, events } = await streamFromPage(page, { input: 'Hello there', max_output_tokens: 12, temperature: 0 });
  expect(status).toBe(200);
  expect(contentType).toContain('text/event-stream');
  expectWellFormedStream(events);
  const final = events.at(-1)!.response!;
  const stored = await page.evaluate(async (id) => (await fetch(`v1/responses/${id}`)).json(), final.id);
  expect(stored.id).toBe(final.id);
  expect(stored.status).toBe(final.status);
  // The model stays loaded between requests.
  const models = await page.evaluate(async () => (await (await fetch('v1/models')).json()) as { data: { id: string; status: string }[] });
  expect(models.data.find((m) => m.id === 'toy-qwen3')?.status).toBe('loaded');
});

test('unknown model gets an OpenAI-shaped 404 from the worker', async ({ page }) => {
  await openDemo(page);
  const r = await page.evaluate(async () => {
    const response = await fetch('v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-nope', input: 'x' }) });
    return { status: response.status, body: await response.json() };
  });
  expect(r.status).toBe(404);
  expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param: 'model', message: "The model 'gpt-nope' does not exist" });
});

test('offline: with the network gone the page reloads from the cache and a request is answered', async ({ page, context }) => {
  await openDemo(page);
  await context.setOffline(true);
  await page.reload();
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  const { status, events } = await streamFromPage(page, { input: 'Offline?', max_output_tokens: 8, temperature: 0 });
  expect(status).toBe(200);
  expectWellFormedStream(events);
  await context.setOffline(false);
});

test('a stopped service worker restarts on the next request and answers', async ({ page, context }) => {
  await openDemo(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  const { status, events } = await streamFromPage(page, { input: 'Still there?', max_output_tokens: 8, temperature: 0 });
  expect(status).toBe(200);
  expectWellFormedStream(events);
});

test('a service worker stopped while offline reloads the model from its cache and answers', async ({ page, context }) => {
  await openDemo(page);
  expectWellFormedStream((await streamFromPage(page, { input: 'Load it', max_output_tokens: 4, temperature: 0 })).events);
  await context.setOffline(true);
  const cdp = await context.newCDPSession(page);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  const { status, events } = await streamFromPage(page, { input: 'From the cache?', max_output_tokens: 8, temperature: 0 });
  expect(status).toBe(200);
  expectWellFormedStream(events);
  await context.setOffline(false);
});

test('two tabs generating at once each get a complete, well-formed stream', async ({ context }) => {
  const [a, b] = [await context.newPage(), await context.newPage()];
  await openDemo(a);
  await openDemo(b);
  const [ra, rb] = await Promise.all([
    streamFromPage(a, { input: 'Tab A speaking', max_output_tokens: 10, temperature: 0 }),
    streamFromPage(b, { input: 'Tab B speaking', max_output_tokens: 10, temperature: 0 }),
  ]);
  for (const r of [ra, rb]) {
    expect(r.status).toBe(200);
    expectWellFormedStream(r.events);
  }
  expect(ra.events.at(-1)!.response!.id).not.toBe(rb.events.at(-1)!.response!.id);
});

test('an aborted fetch stops its generation and the request waiting behind it completes', async ({ page }) => {
  await openDemo(page);
  const { aId, aSawDelta, bStatus, b } = await abortWhileAnotherWaits(page, await importLongTalkingModel(page));
  expect(aSawDelta).toBe(true);
  expect(bStatus).toBe(200);
  expect(['completed', 'incomplete']).toContain(b.status);
  await expect.poll(async () => (await storedStatus(page, aId!))?.status).toBe('cancelled');
});
