// Issue 22 item 1 in the real browser: a page of another site (localhost on another port, against the app on
// 127.0.0.1) auto-submits `<form method=POST enctype=text/plain>` forms at the app's /v1 — the body
// `{"input":"hi","pad":"="}` parses as JSON — and the service worker must refuse them (403, OpenAI-shaped) before
// anything runs: no response generated or stored, no model download started (the attacker's file is never
// fetched, the model never listed). A same-origin text/plain POST is a 415, and malformed percent-encoding in ids
// is a 400 on the worker's routes too.
import { expect, test, type Page } from '@playwright/test';
import http from 'node:http';
import { callApi, openDemo } from './fixtures/page-requests.ts';

let attacker: http.Server;
let attackerOrigin: string;
/** Every path the attacker's server was asked for. */
let attackerHits: string[] = [];

/** The app's origin (the config's baseURL: 127.0.0.1). */
let victimOrigin: string;

function formPage(action: string, fields: Record<string, unknown>): string {
  // enctype=text/plain sends `name=value`: a name of `{"input":"hi",…,"pad":"` and a value of `"}` make JSON.
  const json = JSON.stringify({ ...fields, pad: '' });
  const name = json.slice(0, -2);
  return `<!doctype html><html><body><form method="POST" enctype="text/plain" action="${action}">
<input type="hidden" name='${name.replace(/'/g, '&#39;')}' value='"}'></form>
<script>document.forms[0].submit()</script></body></html>`;
}

test.beforeAll(async ({}, testInfo) => {
  victimOrigin = new URL(testInfo.project.use.baseURL ?? 'http://127.0.0.1:4173/').origin;
  attacker = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://attacker');
    attackerHits.push(url.pathname);
    res.setHeader('access-control-allow-origin', '*');
    if (url.pathname === '/responses.html') {
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(formPage(`${victimOrigin}/v1/responses`, { input: 'hi', max_output_tokens: 4 }));
    }
    if (url.pathname === '/download.html') {
      const evil = `${attackerOrigin}/evil.gguf`;
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(formPage(`${victimOrigin}/v1/models/evil-model/download`, { url: evil }));
    }
    if (url.pathname === '/evil.gguf') return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from('GGUF not really'));
    res.writeHead(404).end();
  });
  // All interfaces, so that `localhost` reaches it whichever loopback address the browser tries.
  await new Promise<void>((ok) => attacker.listen(0, ok));
  const address = attacker.address();
  attackerOrigin = `http://localhost:${typeof address === 'object' && address ? address.port : 0}`;
});

test.afterAll(async () => {
  attacker.closeAllConnections();
  await new Promise((ok) => attacker.close(ok));
});

/** Stored responses in the app's IndexedDB (opened only if it exists, so that this never creates it). */
async function storedCount(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const databases = await indexedDB.databases();
    if (!databases.some((d) => d.name === 'webgpu-responses')) return 0;
    return new Promise<number>((resolve, reject) => {
      const open = indexedDB.open('webgpu-responses');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const db = open.result;
        if (!db.objectStoreNames.contains('responses')) {
          db.close();
          return resolve(0);
        }
        const count = db.transaction('responses').objectStore('responses').count();
        count.onsuccess = () => {
          db.close();
          resolve(count.result);
        };
        count.onerror = () => reject(count.error);
      };
    });
  });
}

/** Opens the attacker's page in a new tab of the same browser; returns the status and body its form navigation got. */
async function submitFrom(page: Page, attackPath: string, target: string): Promise<{ status: number; body: string }> {
  const tab = await page.context().newPage();
  const navigated = tab.waitForResponse((r) => r.url() === target, { timeout: 60_000 });
  await tab.goto(`${attackerOrigin}${attackPath}`);
  const response = await navigated;
  await tab.waitForURL(target);
  const body = (await tab.locator('body').textContent()) ?? '';
  await tab.close();
  return { status: response.status(), body };
}

test('a cross-site form post is refused by the service worker: nothing generated, stored or downloaded', async ({ page }) => {
  await openDemo(page);
  // The counter works: a same-origin request is stored and counted.
  const before = await storedCount(page);
  const own = await callApi(page, 'POST', '/v1/responses', { input: 'hi', max_output_tokens: 2 });
  expect(own.status).toBe(200);
  expect(await storedCount(page)).toBe(before + 1);

  const posted = await submitFrom(page, '/responses.html', `${victimOrigin}/v1/responses`);
  expect(posted.status).toBe(403);
  expect(JSON.parse(posted.body)).toMatchObject({ error: { type: 'invalid_request_error', code: 'cross_site_request', param: null } });
  // Give a generation that had started time to be stored: there must be none.
  await page.waitForTimeout(1_000);
  expect(await storedCount(page)).toBe(before + 1);

  const download = await submitFrom(page, '/download.html', `${victimOrigin}/v1/models/evil-model/download`);
  expect(download.status).toBe(403);
  expect(JSON.parse(download.body).error.code).toBe('cross_site_request');
  await page.waitForTimeout(1_000);
  expect(attackerHits).not.toContain('/evil.gguf');
  const catalog = await callApi(page, 'GET', '/v1/models/catalog');
  expect((catalog.json.data as { id: string }[]).map((m) => m.id)).not.toContain('evil-model');
});

test('same-origin: a text/plain POST is a 415, a malformed escape in an id a 400', async ({ page }) => {
  await openDemo(page);
  const plain = await page.evaluate(async () => {
    // A string body is sent as text/plain.
    const response = await fetch('/v1/responses', { method: 'POST', body: JSON.stringify({ input: 'hi', max_output_tokens: 2 }) });
    return { status: response.status, json: (await response.json()) as { error: { code: string } } };
  });
  expect(plain.status).toBe(415);
  expect(plain.json.error.code).toBe('unsupported_media_type');
  const response = await callApi(page, 'GET', '/v1/responses/resp_%ZZ');
  expect(response.status).toBe(400);
  expect(response.json.error.param).toBe('response_id');
  const model = await callApi(page, 'GET', '/v1/models/%ZZ');
  expect(model.status).toBe(400);
});
