// The IndexedDB ResponseStore against Chromium's real IndexedDB: round trips, all-or-nothing writes,
// error mapping, the schema upgrade path, and the persistent non-extractable reasoning key.
import { afterEach, describe, expect, it } from 'vitest';
import {
  RESPONSE_DB_VERSION,
  createIndexedDbStore,
  openIndexedDbStore,
  type IndexedDbResponseStore,
} from '../../src/store/indexeddb-store.ts';
import { StoreError, type StoredResponse } from '../../src/store/types.ts';

let databaseCounter = 0;
const openedStores: IndexedDbResponseStore[] = [];
const usedNames: string[] = [];
const restorers: Array<() => void> = [];

function uniqueName(): string {
  databaseCounter += 1;
  const name = `store-test-${Date.now()}-${Math.random().toString(36).slice(2)}-${databaseCounter}`;
  usedNames.push(name);
  return name;
}

async function openStore(name: string): Promise<IndexedDbResponseStore> {
  const store = await openIndexedDbStore({ name });
  openedStores.push(store);
  return store;
}

function sampleRecord(id = 'resp_1'): StoredResponse {
  return {
    id,
    response: { id, object: 'response', status: 'completed', output: [{ type: 'message', content: [] }] },
    history: [
      { type: 'message', role: 'user', content: 'hi' },
      { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
      { type: 'reasoning', encrypted_content: 'blob', summary: [] },
    ],
    inputItems: [{ type: 'message', role: 'user', content: 'hi' }],
    createdAt: 1_700_000_000,
  };
}

/** Raw IndexedDB view of a database, independent of the store under test. */
function rawOpen(name: string, version?: number): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = version === undefined ? indexedDB.open(name) : indexedDB.open(name, version);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error('raw open blocked'));
  });
}

async function rawCount(name: string, storeName: string): Promise<number> {
  const db = await rawOpen(name);
  try {
    // Resolve on the transaction's completion, so that close() below closes at once.
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(storeName, 'readonly');
      const request = tx.objectStore(storeName).count();
      tx.oncomplete = () => resolve(request.result);
      tx.onerror = () => reject(tx.error);
    });
  } finally {
    db.close();
  }
}

function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
    request.onblocked = () => reject(new Error(`deleting ${name} is blocked by an open connection`));
  });
}

/** Replace a method on IDBObjectStore.prototype for one test; undone in afterEach. */
function patchObjectStorePut(
  replacement: (original: IDBObjectStore['put'], store: IDBObjectStore, args: [unknown, IDBValidKey?]) => IDBRequest,
): void {
  const original = IDBObjectStore.prototype.put;
  IDBObjectStore.prototype.put = function patchedPut(this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
    return replacement(original, this, [value, key]);
  };
  restorers.push(() => {
    IDBObjectStore.prototype.put = original;
  });
}

async function expectStoreError(promise: Promise<unknown>, reason: StoreError['reason']): Promise<StoreError> {
  const outcome = await promise.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a StoreError(${reason}), got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(StoreError);
  const storeError = outcome.error as StoreError;
  expect(storeError.reason).toBe(reason);
  return storeError;
}

async function sealAndOpen(sealKey: CryptoKey, openKey: CryptoKey, text: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, sealKey, new TextEncoder().encode(text));
  const opened = await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, openKey, sealed);
  return new TextDecoder().decode(opened);
}

afterEach(async () => {
  for (const restore of restorers.splice(0)) restore();
  for (const store of openedStores.splice(0)) store.close();
  for (const name of usedNames.splice(0)) await deleteDatabase(name);
});

describe('openIndexedDbStore', () => {
  it('creates every object store at the current schema version on an empty database', async () => {
    const name = uniqueName();
    const store = await openStore(name);
    store.close();
    const db = await rawOpen(name);
    try {
      expect(db.version).toBe(RESPONSE_DB_VERSION);
      expect([...db.objectStoreNames].sort()).toEqual(['histories', 'keys', 'responses']);
      const tx = db.transaction(['responses', 'histories', 'keys'], 'readonly');
      expect(tx.objectStore('responses').keyPath).toBe('id');
      expect(tx.objectStore('histories').keyPath).toBe('id');
      expect(tx.objectStore('keys').keyPath).toBe('id');
      await new Promise((resolve) => {
        tx.oncomplete = resolve;
      });
    } finally {
      db.close();
    }
  });

  it('keeps stored data when an existing database is opened again', async () => {
    const name = uniqueName();
    const first = await openStore(name);
    await first.put(sampleRecord());
    first.close();
    const second = await openStore(name);
    expect(await second.get('resp_1')).toEqual(sampleRecord());
  });

  it('reports a database made by a newer schema version as unavailable', async () => {
    const name = uniqueName();
    const newer = await rawOpen(name, RESPONSE_DB_VERSION + 5);
    newer.close();
    const error = await expectStoreError(openIndexedDbStore({ name }), 'unavailable');
    expect(error.message).toMatch(/newer version/);
  });

  it('createIndexedDbStore opens on first use, reports an unusable database per call, and retries', async () => {
    const name = uniqueName();
    const newer = await rawOpen(name, RESPONSE_DB_VERSION + 1);
    newer.close();
    const store = createIndexedDbStore({ name });
    openedStores.push(store);
    await expectStoreError(store.put(sampleRecord()), 'unavailable');
    await deleteDatabase(name);
    await store.put(sampleRecord());
    expect(await store.get('resp_1')).toEqual(sampleRecord());
  });

  it('round-trips put, get and delete', async () => {
    const store = await openStore(uniqueName());
    await store.put(sampleRecord('resp_a'));
    await store.put(sampleRecord('resp_b'));
    expect(await store.get('resp_a')).toEqual(sampleRecord('resp_a'));
    expect(await store.get('resp_b')).toEqual(sampleRecord('resp_b'));
    expect(await store.get('resp_missing')).toBeUndefined();

    expect(await store.delete('resp_a')).toBe(true);
    expect(await store.get('resp_a')).toBeUndefined();
    expect(await store.delete('resp_a')).toBe(false);
    expect(await store.get('resp_b')).toEqual(sampleRecord('resp_b'));
  });

  it('put overwrites a record with the same id', async () => {
    const store = await openStore(uniqueName());
    await store.put(sampleRecord());
    const replacement = { ...sampleRecord(), history: [{ type: 'message', role: 'user', content: 'again' }] };
    await store.put(replacement);
    expect(await store.get('resp_1')).toEqual(replacement);
  });

  it('delete removes the history as well as the response', async () => {
    const name = uniqueName();
    const store = await openStore(name);
    await store.put(sampleRecord('resp_a'));
    await store.put(sampleRecord('resp_b'));
    expect(await rawCount(name, 'histories')).toBe(2);
    await store.delete('resp_a');
    expect(await rawCount(name, 'responses')).toBe(1);
    expect(await rawCount(name, 'histories')).toBe(1);
  });

  it('updateResponse replaces only the response, and rejects an unknown id without creating it', async () => {
    const name = uniqueName();
    const store = await openStore(name);
    await store.put(sampleRecord());
    await store.updateResponse('resp_1', { id: 'resp_1', object: 'response', status: 'cancelled' });
    expect(await store.get('resp_1')).toEqual({
      ...sampleRecord(),
      response: { id: 'resp_1', object: 'response', status: 'cancelled' },
    });

    await expectStoreError(store.updateResponse('resp_missing', { status: 'completed' }), 'failed');
    expect(await store.get('resp_missing')).toBeUndefined();
    expect(await rawCount(name, 'responses')).toBe(1);
  });

  it('a history that cannot be stored leaves neither half', async () => {
    const name = uniqueName();
    const store = await openStore(name);
    const record = sampleRecord();
    // The response half is fine; the history holds a function, which IndexedDB cannot clone.
    (record.history as unknown[]).push(() => 'not cloneable');
    const error = await expectStoreError(store.put(record), 'failed');
    expect(error.message).toMatch(/resp_1/);
    expect(await store.get('resp_1')).toBeUndefined();
    expect(await rawCount(name, 'responses')).toBe(0);
    expect(await rawCount(name, 'histories')).toBe(0);
    // The store still works afterwards.
    await store.put(sampleRecord());
    expect(await store.get('resp_1')).toEqual(sampleRecord());
  });

  it('a transaction aborted after both writes were issued leaves neither half', async () => {
    const name = uniqueName();
    const store = await openStore(name);
    await store.put(sampleRecord('resp_old'));
    patchObjectStorePut((original, objectStore, args) => {
      const request = original.apply(objectStore, args);
      // Abort before commit, once the second (history) write is queued.
      if (objectStore.name === 'histories') objectStore.transaction.abort();
      return request;
    });
    await expectStoreError(store.put(sampleRecord('resp_new')), 'failed');
    for (const restore of restorers.splice(0)) restore();

    expect(await store.get('resp_new')).toBeUndefined();
    expect(await rawCount(name, 'responses')).toBe(1);
    expect(await rawCount(name, 'histories')).toBe(1);
    expect(await store.get('resp_old')).toEqual(sampleRecord('resp_old'));
  });

  it('maps QuotaExceededError to StoreError("quota") and keeps nothing', async () => {
    const name = uniqueName();
    const store = await openStore(name);
    patchObjectStorePut((original, objectStore, args) => {
      if (objectStore.name === 'histories') throw new DOMException('simulated full disk', 'QuotaExceededError');
      return original.apply(objectStore, args);
    });
    const error = await expectStoreError(store.put(sampleRecord()), 'quota');
    expect(error.message).toMatch(/storage is full/);
    for (const restore of restorers.splice(0)) restore();
    expect(await rawCount(name, 'responses')).toBe(0);
    expect(await rawCount(name, 'histories')).toBe(0);
  });

  it('closing the connection while a put is in flight neither loses nor halves the record', async () => {
    const name = uniqueName();
    const store = await openStore(name);
    const big = sampleRecord('resp_big');
    big.history = Array.from({ length: 2000 }, (_, index) => ({ type: 'message', role: 'user', content: `m${index}` }));
    // Close the connection right after the history write is queued, before the transaction commits.
    patchObjectStorePut((original, objectStore, args) => {
      const request = original.apply(objectStore, args);
      if (objectStore.name === 'histories') store.close();
      return request;
    });
    const outcome = await store.put(big).then(
      () => 'acknowledged',
      (error: unknown) => error,
    );
    for (const restore of restorers.splice(0)) restore();

    // A closing connection lets its running transactions finish, so the write is whole and acknowledged.
    expect(outcome).toBe('acknowledged');
    const reopened = await openStore(name);
    expect(await reopened.get('resp_big')).toEqual(big);
    expect(await rawCount(name, 'responses')).toBe(1);
    expect(await rawCount(name, 'histories')).toBe(1);
    // The closed handle refuses further work rather than writing through a dead connection.
    await expectStoreError(store.put(sampleRecord()), 'unavailable');
  });

  it('a store closed by its owner rejects further calls as unavailable', async () => {
    const store = await openStore(uniqueName());
    store.close();
    await expectStoreError(store.get('resp_1'), 'unavailable');
  });

  it('lets go of its connection when the database is deleted elsewhere, and reopens on the next call', async () => {
    const name = uniqueName();
    const store = await openStore(name);
    await store.put(sampleRecord());
    // Would be blocked (and reject) if the store kept its connection open.
    await deleteDatabase(name);
    expect(await store.get('resp_1')).toBeUndefined();
    await store.put(sampleRecord('resp_2'));
    expect(await store.get('resp_2')).toEqual(sampleRecord('resp_2'));
  });
});

describe('reasoningKey', () => {
  it('is a non-extractable AES-GCM 256 key that survives closing and reopening the store', async () => {
    const name = uniqueName();
    const first = await openStore(name);
    const key = await first.reasoningKey();
    expect(key.extractable).toBe(false);
    expect(key.algorithm).toMatchObject({ name: 'AES-GCM', length: 256 });
    expect([...key.usages].sort()).toEqual(['decrypt', 'encrypt']);
    await expect(crypto.subtle.exportKey('raw', key)).rejects.toThrow();
    expect(await first.reasoningKey()).toBe(key);
    first.close();

    const second = await openStore(name);
    const reloaded = await second.reasoningKey();
    expect(reloaded).not.toBe(key);
    expect(reloaded.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('jwk', reloaded)).rejects.toThrow();
    expect(await sealAndOpen(key, reloaded, 'a private thought')).toBe('a private thought');
    expect(await sealAndOpen(reloaded, key, 'and back')).toBe('and back');
  });

  it('two stores asking at once on a fresh database end up with the same single key', async () => {
    const name = uniqueName();
    const [a, b] = await Promise.all([openStore(name), openStore(name)]);
    const [keyA, keyB, keyA2] = await Promise.all([a.reasoningKey(), b.reasoningKey(), a.reasoningKey()]);
    expect(keyA2).toBe(keyA);
    expect(await sealAndOpen(keyA, keyB, 'same key')).toBe('same key');
    expect(await rawCount(name, 'keys')).toBe(1);
    // A third connection reads the winner too.
    const c = await openStore(name);
    expect(await sealAndOpen(keyB, await c.reasoningKey(), 'winner')).toBe('winner');
  });

  it('different databases have different keys', async () => {
    const keyA = await (await openStore(uniqueName())).reasoningKey();
    const keyB = await (await openStore(uniqueName())).reasoningKey();
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, keyA, new TextEncoder().encode('x'));
    await expect(crypto.subtle.decrypt({ name: 'AES-GCM', iv }, keyB, sealed)).rejects.toThrow();
  });
});
