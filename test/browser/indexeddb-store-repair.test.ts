// The response store's upgrade builds from what exists (issue 22 item 12): an origin that already has an empty
// version-1 `webgpu-responses` database (any `indexedDB.open(name)` without a version makes one) or a partial
// schema is repaired, and store:true keeps working; a foreign schema at the current version is reported, by name.
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_RESPONSE_DB_NAME,
  RESPONSE_DB_VERSION,
  createIndexedDbStore,
  openIndexedDbStore,
  type IndexedDbResponseStore,
} from '../../src/store/indexeddb-store.ts';
import { StoreError, type StoredResponse } from '../../src/store/types.ts';

const opened: IndexedDbResponseStore[] = [];
const names: string[] = [];

function uniqueName(): string {
  const name = `repair-test-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  names.push(name);
  return name;
}

/** Opens `name` raw (no version: the current one, or a new empty version-1 database), running `upgrade` if asked. */
function rawOpen(name: string, version?: number, upgrade?: (db: IDBDatabase, tx: IDBTransaction) => void): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = version === undefined ? indexedDB.open(name) : indexedDB.open(name, version);
    request.onupgradeneeded = () => upgrade?.(request.result, request.transaction!);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error('raw open blocked'));
  });
}

function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error(`deleting ${name} is blocked`));
  });
}

function record(id: string): StoredResponse {
  return {
    id,
    response: { id, object: 'response', status: 'completed', output: [] },
    history: [{ type: 'message', role: 'user', content: 'hi' }],
    inputItems: [{ type: 'message', role: 'user', content: 'hi' }],
    createdAt: 1_700_000_000,
  };
}

async function schemaOf(name: string): Promise<{ version: number; stores: string[]; responseIndexes: string[] }> {
  const db = await rawOpen(name);
  try {
    const stores = [...db.objectStoreNames].sort();
    let responseIndexes: string[] = [];
    if (stores.includes('responses')) {
      const tx = db.transaction('responses');
      responseIndexes = [...tx.objectStore('responses').indexNames];
      // Let the transaction finish, so close() below closes at once (a pending close blocks deletes).
      await new Promise((resolve) => (tx.oncomplete = resolve));
    }
    return { version: db.version, stores, responseIndexes };
  } finally {
    db.close();
  }
}

afterEach(async () => {
  for (const store of opened.splice(0)) store.close();
  for (const name of names.splice(0)) await deleteDatabase(name);
});

describe('response store schema repair', () => {
  it('an empty version-1 database (indexedDB.open without a version) is upgraded, and a response is stored and read', async () => {
    const name = uniqueName();
    const empty = await rawOpen(name);
    expect(empty.version).toBe(1);
    expect(empty.objectStoreNames.length).toBe(0);
    empty.close();

    const store = await openIndexedDbStore({ name });
    opened.push(store);
    await store.put(record('resp_repaired'));
    expect(await store.get('resp_repaired')).toEqual(record('resp_repaired'));
    store.close();
    expect(await schemaOf(name)).toEqual({ version: RESPONSE_DB_VERSION, stores: ['histories', 'keys', 'responses'], responseIndexes: ['by-status'] });
  });

  it('the service worker path (createIndexedDbStore, default name) works on an empty version-1 database', async () => {
    await deleteDatabase(DEFAULT_RESPONSE_DB_NAME);
    names.push(DEFAULT_RESPONSE_DB_NAME);
    (await rawOpen(DEFAULT_RESPONSE_DB_NAME)).close();
    const store = createIndexedDbStore();
    opened.push(store);
    await store.put(record('resp_sw'));
    expect(await store.get('resp_sw')).toEqual(record('resp_sw'));
    expect((await store.reasoningKey()).type).toBe('secret');
  });

  it('a partial version-1 schema (only responses, holding a row) gets the missing stores and keeps the row', async () => {
    const name = uniqueName();
    const partial = await rawOpen(name, 1, (db) => {
      db.createObjectStore('responses', { keyPath: 'id' }).put({ id: 'resp_old', response: { id: 'resp_old', status: 'completed' }, createdAt: 1 });
    });
    partial.close();
    const store = await openIndexedDbStore({ name });
    opened.push(store);
    await store.put(record('resp_new'));
    expect(await store.get('resp_new')).toEqual(record('resp_new'));
    store.close();
    expect(await schemaOf(name)).toEqual({ version: RESPONSE_DB_VERSION, stores: ['histories', 'keys', 'responses'], responseIndexes: ['by-status'] });
    const raw = await rawOpen(name);
    const count = await new Promise<number>((resolve) => {
      const tx = raw.transaction('responses');
      const request = tx.objectStore('responses').count();
      tx.oncomplete = () => resolve(request.result);
    });
    raw.close();
    expect(count).toBe(2);
  });

  it('an empty database already at the current version is made again', async () => {
    const name = uniqueName();
    (await rawOpen(name, RESPONSE_DB_VERSION)).close();
    const store = await openIndexedDbStore({ name });
    opened.push(store);
    await store.put(record('resp_x'));
    expect(await store.get('resp_x')).toEqual(record('resp_x'));
  });

  it("another program's data at the current version is reported by what it lacks, never written over", async () => {
    const name = uniqueName();
    const foreign = await rawOpen(name, RESPONSE_DB_VERSION, (db) => {
      db.createObjectStore('responses', { keyPath: 'key' }).put({ key: 'theirs' });
    });
    foreign.close();
    const error = await openIndexedDbStore({ name }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).reason).toBe('unavailable');
    expect((error as StoreError).message).toMatch(/lacks histories, keys, responses \(keyed by "key", not "id"\), responses\.by-status/);
    expect((await schemaOf(name)).stores).toEqual(['responses']);
  });
});
