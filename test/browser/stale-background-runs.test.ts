// Background responses left unfinished by a worker that died (src/store/indexeddb-store.ts): on open, the real
// IndexedDB store marks `failed` the `queued`/`in_progress` rows whose owner no longer holds its Web Lock, leaves
// those of living owners (another worker, itself) alone, and does the same for rows of a version-1 database it
// upgrades; a store already open checks again when it reads an unfinished row of another owner. GET then shows the terminal record and cancel refuses it, through the real Responses handler.
import { afterEach, describe, expect, it } from 'vitest';
import {
  ABANDONED_RUN_MESSAGE,
  RESPONSE_DB_VERSION,
  openIndexedDbStore,
  ownerLockName,
  type IndexedDbResponseStore,
} from '../../src/store/indexeddb-store.ts';
import type { JsonValue, StoredResponse } from '../../src/store/types.ts';
import { createResponsesHandler } from '../../src/responses/handler.ts';
import type { Engine } from '../../src/engine/types.ts';
import type { WriteRunMessage, WroteRunMessage } from './stale-background-runs.worker.ts';

const opened: IndexedDbResponseStore[] = [];
const names: string[] = [];
const workers: Worker[] = [];

function uniqueName(): string {
  const name = `stale-runs-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  names.push(name);
  return name;
}

async function openStore(name: string): Promise<IndexedDbResponseStore> {
  const store = await openIndexedDbStore({ name });
  opened.push(store);
  return store;
}

function backgroundRecord(id: string, status: string, output: JsonValue[] = []): StoredResponse {
  return {
    id,
    response: { id, object: 'response', background: true, status, output, error: null, completed_at: null, created_at: 1_700_000_000 },
    history: [{ type: 'message', role: 'user', content: 'hi' }],
    inputItems: [{ type: 'message', role: 'user', content: 'hi' }],
    createdAt: 1_700_000_000,
  };
}

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** A database as version 1 of the store made it (no status index, rows without an owner). */
async function makeVersion1Database(name: string, records: StoredResponse[]): Promise<void> {
  const open = indexedDB.open(name, 1);
  open.onupgradeneeded = () => {
    const db = open.result;
    db.createObjectStore('responses', { keyPath: 'id' });
    db.createObjectStore('histories', { keyPath: 'id' });
    db.createObjectStore('keys', { keyPath: 'id' });
  };
  const db = await request(open);
  const tx = db.transaction(['responses', 'histories'], 'readwrite');
  for (const r of records) {
    tx.objectStore('responses').put({ id: r.id, response: r.response, createdAt: r.createdAt });
    tx.objectStore('histories').put({ id: r.id, history: r.history, inputItems: r.inputItems });
  }
  await new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
}

/** Starts a worker that opens its own store on `name`, writes `record` and stays alive; resolves with its owner id. */
async function recordFromAnotherWorker(name: string, record: StoredResponse): Promise<{ worker: Worker; owner: string }> {
  const worker = new Worker(new URL('./stale-background-runs.worker.ts', import.meta.url), { type: 'module' });
  workers.push(worker);
  const wrote = new Promise<WroteRunMessage>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<WroteRunMessage>) => resolve(event.data);
    worker.onerror = (event) => reject(new Error(`worker failed: ${event.message}`));
  });
  worker.postMessage({ name, record } satisfies WriteRunMessage);
  return { worker, owner: (await wrote).owner };
}

/** Resolves once the terminated worker's store lock is free (the browser releases it as it tears the worker down). */
async function deathOf(name: string, owner: string): Promise<void> {
  await navigator.locks.request(ownerLockName(name, owner), () => undefined);
}

/** The Responses handler over `store`; GET and cancel of stored responses never reach the engine. */
function handlerOver(store: IndexedDbResponseStore) {
  const engine = new Proxy({} as Engine, {
    get(_target, property) {
      throw new Error(`the engine was used (${String(property)}) to read a stored response`);
    },
  });
  return createResponsesHandler({ engine, store });
}

afterEach(async () => {
  for (const worker of workers.splice(0)) worker.terminate();
  for (const store of opened.splice(0)) store.close();
  for (const name of names.splice(0)) await request(indexedDB.deleteDatabase(name)).catch(() => undefined);
});

describe('background responses of stopped workers', () => {
  it('are failed when a version-1 database is upgraded; finished ones and histories are kept as they were', async () => {
    const name = uniqueName();
    const cutShort = { id: 'msg_1', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
    const running = backgroundRecord('resp_running', 'in_progress', [cutShort]);
    const queued = backgroundRecord('resp_queued', 'queued');
    const done = backgroundRecord('resp_done', 'completed');
    await makeVersion1Database(name, [running, queued, done]);

    const store = await openStore(name);
    const failed = await store.get('resp_running');
    expect(failed?.response).toEqual({
      ...running.response,
      status: 'failed',
      output: [{ ...cutShort, status: 'incomplete' }],
      completed_at: null,
      error: { code: 'server_error', message: ABANDONED_RUN_MESSAGE },
    });
    expect(failed?.history).toEqual(running.history);
    expect((await store.get('resp_queued'))?.response.status).toBe('failed');
    expect(await store.get('resp_done')).toEqual(done);

    store.close();
    const db = await request(indexedDB.open(name));
    try {
      expect(db.version).toBe(RESPONSE_DB_VERSION);
      expect(RESPONSE_DB_VERSION).toBe(2);
      const responses = db.transaction('responses', 'readonly').objectStore('responses');
      expect([...responses.indexNames]).toEqual(['by-status']);
      expect(await request(responses.index('by-status').getAllKeys('failed'))).toEqual(['resp_queued', 'resp_running']);
    } finally {
      db.close();
    }
  });

  it('are left alone while their worker lives; once it died, a store that was already open fails one it reads', async () => {
    const name = uniqueName();
    const { worker, owner } = await recordFromAnotherWorker(name, backgroundRecord('resp_other', 'in_progress'));
    const mine = await openStore(name);
    expect(mine.owner).not.toBe(owner);
    await mine.put(backgroundRecord('resp_mine', 'queued'));

    // Another open and reads while both owners live: nothing changes.
    expect((await (await openStore(name)).get('resp_other'))?.response.status).toBe('in_progress');
    expect((await mine.get('resp_other'))?.response.status).toBe('in_progress');

    worker.terminate();
    await deathOf(name, owner);

    const other = await mine.get('resp_other');
    expect(other?.response.status).toBe('failed');
    expect(other?.response.error).toEqual({ code: 'server_error', message: ABANDONED_RUN_MESSAGE });
    // This page's store still lives: its own run is not touched, by itself or by a store opened now.
    expect((await (await openStore(name)).get('resp_mine'))?.response.status).toBe('queued');
  });

  it('are failed in the database by the next open, before anything is read', async () => {
    const name = uniqueName();
    const { worker, owner } = await recordFromAnotherWorker(name, backgroundRecord('resp_gone', 'queued'));
    worker.terminate();
    await deathOf(name, owner);

    (await openStore(name)).close();
    const db = await request(indexedDB.open(name));
    try {
      const row = await request(db.transaction('responses', 'readonly').objectStore('responses').get('resp_gone'));
      expect(row.response).toMatchObject({ status: 'failed', error: { code: 'server_error', message: ABANDONED_RUN_MESSAGE } });
    } finally {
      db.close();
    }
  });

  it('GET returns the failed record and cancel refuses it as the spec says for a terminal response', async () => {
    const name = uniqueName();
    const { worker, owner } = await recordFromAnotherWorker(name, backgroundRecord('resp_gone', 'in_progress'));
    worker.terminate();
    await deathOf(name, owner);

    const handle = handlerOver(await openStore(name));
    const got = await handle(new Request('http://127.0.0.1/v1/responses/resp_gone'));
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({ id: 'resp_gone', status: 'failed', error: { code: 'server_error' } });
    const cancel = await handle(new Request('http://127.0.0.1/v1/responses/resp_gone/cancel', { method: 'POST' }));
    expect(cancel.status).toBe(400);
    expect(await cancel.json()).toMatchObject({
      error: { type: 'invalid_request_error', param: 'response_id', message: "Cannot cancel a response with status 'failed'." },
    });
  });
});
