// The ResponseStore contract, run against both implementations in the same browser, so that the memory store the
// Responses core is unit-tested with behaves like the IndexedDB store it runs on.
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import { openIndexedDbStore, type IndexedDbResponseStore } from '../../src/store/indexeddb-store.ts';
import { StoreError, type ResponseStore, type StoredResponse } from '../../src/store/types.ts';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function indexedDbStore(): Promise<ResponseStore> {
  const name = `store-contract-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const store: IndexedDbResponseStore = await openIndexedDbStore({ name });
  cleanups.push(
    () =>
      new Promise<void>((resolve, reject) => {
        store.close();
        const request = indexedDB.deleteDatabase(name);
        request.onsuccess = () => resolve();
        request.onerror = () => reject(request.error);
      }),
  );
  return store;
}

const implementations: Array<[string, () => Promise<ResponseStore>]> = [
  ['memory store', async () => createMemoryStore()],
  ['IndexedDB store', indexedDbStore],
];

function sampleRecord(id = 'resp_1'): StoredResponse {
  return {
    id,
    response: { id, object: 'response', status: 'completed', output: [{ type: 'reasoning', summary: [] }] },
    history: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }, null, 1.5, true],
    inputItems: [{ type: 'message', role: 'user', content: 'hi' }],
    createdAt: 1_700_000_000,
  };
}

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

describe.each(implementations)('%s', (_label, makeStore) => {
  it('returns an equal record, unaffected by later changes to what was put or got', async () => {
    const store = await makeStore();
    const record = sampleRecord();
    await store.put(record);
    record.history.length = 0;
    const got = await store.get('resp_1');
    expect(got).toEqual(sampleRecord());
    got!.response.status = 'changed';
    expect(await store.get('resp_1')).toEqual(sampleRecord());
    expect(await store.get('resp_other')).toBeUndefined();
  });

  it('updates only the response, and rejects an unknown id with reason "failed"', async () => {
    const store = await makeStore();
    await store.put(sampleRecord());
    await store.updateResponse('resp_1', { id: 'resp_1', status: 'in_progress' });
    expect(await store.get('resp_1')).toEqual({ ...sampleRecord(), response: { id: 'resp_1', status: 'in_progress' } });
    expect((await rejection(store.updateResponse('resp_nope', {}))).reason).toBe('failed');
    expect(await store.get('resp_nope')).toBeUndefined();
  });

  it('deletes the whole record and says whether it existed', async () => {
    const store = await makeStore();
    await store.put(sampleRecord());
    expect(await store.delete('resp_1')).toBe(true);
    expect(await store.delete('resp_1')).toBe(false);
    expect(await store.get('resp_1')).toBeUndefined();
  });

  it('rejects a record that cannot be cloned with reason "failed" and keeps nothing of it', async () => {
    const store = await makeStore();
    const record = sampleRecord();
    (record.inputItems as unknown[]).push(Symbol('not cloneable'));
    expect((await rejection(store.put(record))).reason).toBe('failed');
    expect(await store.get('resp_1')).toBeUndefined();
  });

  it('hands out one non-extractable AES-GCM key, the same for concurrent callers', async () => {
    const store = await makeStore();
    const [a, b] = await Promise.all([store.reasoningKey(), store.reasoningKey()]);
    expect(a).toBe(b);
    expect(a.extractable).toBe(false);
    expect(a.algorithm).toMatchObject({ name: 'AES-GCM', length: 256 });
    await expect(crypto.subtle.exportKey('raw', a)).rejects.toThrow();
  });
});
