// Without IndexedDB (Node here; some private modes and embedded webviews in practice) the IndexedDB store
// refuses to open with StoreError('unavailable') and a message that says why.
import { expect, it } from 'vitest';
import { openIndexedDbStore } from '../../../src/store/indexeddb-store.ts';
import { StoreError } from '../../../src/store/types.ts';

it('rejects with StoreError("unavailable") when there is no indexedDB', async () => {
  expect(typeof indexedDB).toBe('undefined');
  const error = await openIndexedDbStore({ name: 'never-created' }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(StoreError);
  expect((error as StoreError).reason).toBe('unavailable');
  expect((error as StoreError).message).toMatch(/IndexedDB is not available/);
});
