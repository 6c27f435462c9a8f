// Without IndexedDB (Node here; some private modes and embedded webviews in practice) the IndexedDB store
// refuses to open with StoreError('unavailable') and a message that says why; the lazily opened variant can be
// created anyway and rejects each call the same way.
import { expect, it } from 'vitest';
import { createIndexedDbStore, openIndexedDbStore } from '../../../src/store/indexeddb-store.ts';
import { StoreError } from '../../../src/store/types.ts';

async function expectUnavailable(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => new Error('expected a rejection'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(StoreError);
  expect((error as StoreError).reason).toBe('unavailable');
  expect((error as StoreError).message).toMatch(/IndexedDB is not available/);
}

it('openIndexedDbStore rejects with StoreError("unavailable") when there is no indexedDB', async () => {
  expect(typeof indexedDB).toBe('undefined');
  await expectUnavailable(openIndexedDbStore({ name: 'never-created' }));
});

it('createIndexedDbStore succeeds, and every call then rejects with StoreError("unavailable")', async () => {
  const store = createIndexedDbStore({ name: 'never-created' });
  const record = { id: 'resp_1', response: {}, history: [], inputItems: [], createdAt: 0 };
  await expectUnavailable(store.put(record));
  await expectUnavailable(store.get('resp_1'));
  await expectUnavailable(store.updateResponse('resp_1', {}));
  await expectUnavailable(store.delete('resp_1'));
  await expectUnavailable(store.reasoningKey());
  // Tried again, not a cached failure.
  await expectUnavailable(store.get('resp_1'));
});
