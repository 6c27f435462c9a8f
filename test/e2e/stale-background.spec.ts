// A background response whose service worker is stopped mid-run (browser closed, worker stopped) does not stay
// `in_progress` forever: the next worker, on opening the store, marks it `failed` with an OpenAI-shaped
// `server_error`, GET shows that, and cancel answers 400 as for any terminal response. A background response of the
// new, living worker is untouched and can still be cancelled. Real browser, real service worker, real IndexedDB:
// the worker is stopped through CDP while it generates. The same with the engine in pages' dedicated workers (the
// fallback): a run in tab A's engine worker is left alone by tab B's engine worker while A lives, and reads failed
// from B once tab A was closed. That fixture page (test/e2e/fixtures/worker-fallback.html) is built here with Vite.
import { expect, test, type Page } from '@playwright/test';
import { buildFixturePage, callApi, importLongTalkingModel, openDemo, stopServiceWorker } from './fixtures/page-requests.ts';

const fallbackPagePath = '/e2e/stale-background/test/e2e/fixtures/worker-fallback.html';

test.beforeAll(async () => {
  test.setTimeout(120_000);
  await buildFixturePage('stale-background', 'test/e2e/fixtures/worker-fallback.html');
});




/** Starts a long background response (random weights talk for thousands of tokens) and waits until it runs. */
async function startLongBackgroundRun(page: Page, model: string): Promise<string> {
  const created = await callApi(page, 'POST', '/v1/responses', {
    model,
    background: true,
    input: 'Tell me a very long story about the sea.',
    max_output_tokens: 3500,
    temperature: 0,
  });
  expect(created.status, JSON.stringify(created.json)).toBe(200);
  expect(created.json.status).toBe('queued');
  const id = created.json.id as string;
  await expect.poll(async () => (await callApi(page, 'GET', `/v1/responses/${id}`)).json.status).toBe('in_progress');
  return id;
}

test('a background response whose worker was stopped mid-run is failed on the next start; cancel then is a 400', async ({ page }) => {
  await openDemo(page);
  const model = await importLongTalkingModel(page);
  const id = await startLongBackgroundRun(page, model);

  await stopServiceWorker(page);
  const after = await callApi(page, 'GET', `/v1/responses/${id}`);
  expect(after.status).toBe(200);
  expect(after.json).toMatchObject({ id, status: 'failed', background: true, completed_at: null });
  expect(after.json.error.code).toBe('server_error');
  expect(after.json.error.message).toMatch(/stopped .* before it finished/);

  const cancel = await callApi(page, 'POST', `/v1/responses/${id}/cancel`);
  expect(cancel.status).toBe(400);
  expect(cancel.json.error).toMatchObject({ type: 'invalid_request_error', param: 'response_id', message: "Cannot cancel a response with status 'failed'." });
  expect((await callApi(page, 'GET', `/v1/responses/${id}`)).json.status).toBe('failed');

  // The living worker's own background run is not touched: it runs, and cancel stops it.
  const live = await startLongBackgroundRun(page, model);
  const cancelled = await callApi(page, 'POST', `/v1/responses/${live}/cancel`);
  expect(cancelled.status).toBe(200);
  expect(cancelled.json.status).toBe('cancelled');
});

test('engine in page workers: tab B leaves tab A\'s run alone while A lives, and reads it failed once A was closed', async ({ context }) => {
  const tabA = await context.newPage();
  await tabA.goto(fallbackPagePath);
  await tabA.evaluate(() => window.shimReady);
  const model = await importLongTalkingModel(tabA);
  const id = await startLongBackgroundRun(tabA, model);
  expect(await tabA.evaluate(() => window.engineFallback.worker !== null)).toBe(true);

  // Tab B offers its own engine worker at once: from now on the service worker relays /v1 to it (the newest host).
  const tabB = await context.newPage();
  await tabB.goto(`${fallbackPagePath}?eager`);
  await tabB.evaluate(() => window.shimReady);
  expect(await tabB.evaluate(() => window.engineFallback.worker !== null)).toBe(true);
  // B's engine worker opened the store while A's worker runs the response: it is still running.
  expect((await callApi(tabB, 'GET', `/v1/responses/${id}`)).json.status).toBe('in_progress');

  await tabA.close();
  await expect.poll(async () => (await callApi(tabB, 'GET', `/v1/responses/${id}`)).json.status).toBe('failed');
  const after = await callApi(tabB, 'GET', `/v1/responses/${id}`);
  expect(after.json.error.code).toBe('server_error');
  const cancel = await callApi(tabB, 'POST', `/v1/responses/${id}/cancel`);
  expect(cancel.status).toBe(400);
});
