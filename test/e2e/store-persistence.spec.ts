// The IndexedDB store across a real browser restart and a page closed in the middle of a write.
// Self-contained: it serves test/e2e/fixtures/store-page.html with its own Vite dev server on 127.0.0.1 and
// launches the system Chromium itself with a persistent profile (a temporary user-data directory), so it needs
// neither the built app nor the config's shared browser.
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { chromium } from 'playwright-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type ViteDevServer } from 'vite';
import { chromiumArgs, chromiumPath } from '../chromium.ts';
import type { StoredResponse } from '../../src/store/types.ts';

type StoreModule = typeof import('../../src/store/indexeddb-store.ts');
/** The fixture page's window: the store module it loaded, and the flag the interrupted write raises. */
type FixtureWindow = Window & { storeModule?: StoreModule; historyWriteIssued?: boolean };

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));
const databaseName = 'store-persistence-e2e';

let server: ViteDevServer;
let pageUrl: string;
let userDataDir: string;

test.beforeAll(async () => {
  server = await createServer({
    root: repositoryRoot,
    configFile: false,
    logLevel: 'error',
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null },
    optimizeDeps: { noDiscovery: true, include: ['idb'] },
  });
  await server.listen();
  const address = server.httpServer?.address();
  if (address === null || address === undefined || typeof address === 'string') throw new Error('no server address');
  pageUrl = `http://127.0.0.1:${address.port}/test/e2e/fixtures/store-page.html`;
  userDataDir = await mkdtemp(join(tmpdir(), 'store-persistence-'));
});

test.afterAll(async () => {
  await server?.close();
  if (userDataDir !== undefined) await rm(userDataDir, { recursive: true, force: true });
});

function launchBrowser(): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath(),
    args: chromiumArgs(),
    headless: true,
  });
}

async function openStorePage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(pageUrl);
  await page.waitForFunction(() => (window as FixtureWindow).storeModule !== undefined);
  return page;
}

function record(id: string, historyLength: number): StoredResponse {
  return {
    id,
    response: { id, object: 'response', status: 'completed', output: [] },
    history: Array.from({ length: historyLength }, (_, index) => ({
      type: 'message',
      role: 'user',
      content: `message ${index}`,
    })),
    inputItems: [{ type: 'message', role: 'user', content: 'hello' }],
    createdAt: 1_700_000_000,
  };
}

test('stored responses and the reasoning key survive a browser restart; a write cut off by closing its page leaves nothing', async () => {
  const kept = record('resp_kept', 3);
  const plaintext = 'reasoning that must reopen after a restart';

  // First browser: store a record, seal a text with the reasoning key, then cut a write off by closing its page.
  const firstBrowser = await launchBrowser();
  const writer = await openStorePage(firstBrowser);
  const sealed = await writer.evaluate(
    async ({ name, storedJson, text }) => {
      const store = await (window as FixtureWindow).storeModule!.openIndexedDbStore({ name });
      await store.put(JSON.parse(storedJson) as StoredResponse);
      const key = await store.reasoningKey();
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const ciphertext = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, new TextEncoder().encode(text));
      store.close();
      return { iv: Array.from(iv), ciphertext: Array.from(new Uint8Array(ciphertext)) };
    },
    { name: databaseName, storedJson: JSON.stringify(kept), text: plaintext },
  );

  const doomed = await openStorePage(firstBrowser);
  await doomed.evaluate(
    ({ name, storedJson }) => {
      // Once the history write is queued, keep the transaction busy with reads so it can never commit,
      // and say so; the test then closes the page under it.
      const originalPut = IDBObjectStore.prototype.put;
      IDBObjectStore.prototype.put = function putAndHoldOpen(this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
        const request = originalPut.call(this, value, key);
        if (this.name === 'histories') {
          const objectStore = this;
          const keepBusy = (): void => {
            objectStore.get('resp_kept').onsuccess = keepBusy;
          };
          keepBusy();
          (window as FixtureWindow).historyWriteIssued = true;
        }
        return request;
      };
      void (window as FixtureWindow).storeModule!.openIndexedDbStore({ name }).then((store) => store.put(JSON.parse(storedJson) as StoredResponse));
    },
    { name: databaseName, storedJson: JSON.stringify(record('resp_cut', 500)) },
  );
  await doomed.waitForFunction(() => (window as FixtureWindow).historyWriteIssued === true);
  await doomed.close({ runBeforeUnload: false });
  await firstBrowser.close();

  // Second browser, same profile: the kept record and the key are there, the cut write is not.
  const secondBrowser = await launchBrowser();
  try {
    const reader = await openStorePage(secondBrowser);
    const found = await reader.evaluate(
      async ({ name, iv, ciphertext }) => {
        const store = await (window as FixtureWindow).storeModule!.openIndexedDbStore({ name });
        const key = await store.reasoningKey();
        const opened = await crypto.subtle.decrypt(
          { name: 'AES-GCM', iv: new Uint8Array(iv) },
          key,
          new Uint8Array(ciphertext),
        );
        const exportable = await crypto.subtle.exportKey('raw', key).then(
          () => true,
          () => false,
        );
        const counts = await new Promise<{ responses: number; histories: number }>((resolve, reject) => {
          const open = indexedDB.open(name);
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const db = open.result;
            const tx = db.transaction(['responses', 'histories'], 'readonly');
            const responses = tx.objectStore('responses').count();
            const histories = tx.objectStore('histories').count();
            tx.oncomplete = () => {
              db.close();
              resolve({ responses: responses.result, histories: histories.result });
            };
          };
        });
        return {
          // JSON strings keep Playwright's argument and result types shallow.
          keptJson: JSON.stringify(await store.get('resp_kept')),
          cut: (await store.get('resp_cut')) !== undefined,
          decrypted: new TextDecoder().decode(opened),
          exportable,
          counts,
        };
      },
      { name: databaseName, ...sealed },
    );
    expect(JSON.parse(found.keptJson)).toEqual(kept);
    expect(found.cut).toBe(false);
    expect(found.counts).toEqual({ responses: 1, histories: 1 });
    expect(found.decrypted).toBe(plaintext);
    expect(found.exportable).toBe(false);
  } finally {
    await secondBrowser.close();
  }
});
