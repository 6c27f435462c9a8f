// A write cut off because its page goes away: the store runs inside a same-origin iframe, and the iframe is
// removed while the put's transaction is still open (right after its history write was issued, before commit).
// Chromium then force-closes the iframe's connection and aborts the transaction; reopening must show nothing of
// that write and everything written before it.
import { afterEach, expect, it } from 'vitest';
import { openIndexedDbStore, type IndexedDbResponseStore } from '../../src/store/indexeddb-store.ts';
import type { StoredResponse } from '../../src/store/types.ts';

type StoreModule = typeof import('../../src/store/indexeddb-store.ts');

interface FrameWindow extends Window {
  storeModule?: StoreModule;
  storeModuleError?: string;
  IDBObjectStore: typeof IDBObjectStore;
}

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function record(id: string, historyLength: number): StoredResponse {
  return {
    id,
    response: { id, object: 'response', status: 'completed' },
    history: Array.from({ length: historyLength }, (_, index) => ({
      type: 'message',
      role: 'user',
      content: `message ${index} `.repeat(20),
    })),
    inputItems: [{ type: 'message', role: 'user', content: 'hi' }],
    createdAt: 1,
  };
}

/** A same-origin iframe that has imported the store module (served and transformed by the test server). */
async function frameWithStoreModule(): Promise<{ frame: HTMLIFrameElement; frameWindow: FrameWindow }> {
  const moduleUrl = new URL('../../src/store/indexeddb-store.ts', import.meta.url).href;
  const frame = document.createElement('iframe');
  frame.srcdoc = `<!doctype html><script type="module">
    import(${JSON.stringify(moduleUrl)}).then(
      (module) => { window.storeModule = module; },
      (error) => { window.storeModuleError = String(error); },
    );
  </script>`;
  const loaded = new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
  document.body.append(frame);
  cleanups.push(() => frame.remove());
  await loaded;
  const frameWindow = frame.contentWindow as FrameWindow;
  for (let attempt = 0; frameWindow.storeModule === undefined && frameWindow.storeModuleError === undefined; attempt++) {
    if (attempt > 600) throw new Error('the iframe never loaded the store module');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (frameWindow.storeModuleError !== undefined) throw new Error(frameWindow.storeModuleError);
  return { frame, frameWindow };
}

/** The keys of one object store, read with raw IndexedDB, independent of the store under test. */
function rawKeys(name: string, storeName: string): Promise<IDBValidKey[]> {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(name);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction(storeName, 'readonly');
      const request = tx.objectStore(storeName).getAllKeys();
      tx.oncomplete = () => {
        db.close();
        resolve(request.result);
      };
      tx.onerror = () => {
        db.close();
        reject(tx.error);
      };
    };
  });
}

function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(request.error);
  });
}

it('a put whose page is removed before commit leaves nothing of it, and keeps earlier writes', async () => {
  const name = `store-interrupted-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  cleanups.push(() => deleteDatabase(name));
  const { frame, frameWindow } = await frameWithStoreModule();
  const frameStore = await frameWindow.storeModule!.openIndexedDbStore({ name });
  await frameStore.put(record('resp_before', 3));

  // Remove the iframe from inside its own IDBObjectStore.put, right after the history write is queued:
  // the transaction cannot have committed yet, because the put call has not even returned.
  const frameObjectStore = frameWindow.IDBObjectStore.prototype;
  const originalPut = frameObjectStore.put;
  let interrupted = false;
  frameObjectStore.put = function putThenRemovePage(this: IDBObjectStore, value: unknown, key?: IDBValidKey) {
    const request = originalPut.call(this, value, key);
    if (this.name === 'histories' && !interrupted) {
      interrupted = true;
      frame.remove();
    }
    return request;
  };
  let acknowledged = false;
  void frameStore.put(record('resp_cut', 5000)).then(
    () => {
      acknowledged = true;
    },
    () => undefined,
  );
  // The put issues its writes a few microtasks later; wait for the page to be gone.
  for (let attempt = 0; !interrupted; attempt++) {
    if (attempt > 600) throw new Error('the put never reached the history write');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }

  const store: IndexedDbResponseStore = await openIndexedDbStore({ name });
  cleanups.push(() => store.close());
  expect(acknowledged).toBe(false);
  expect(await store.get('resp_cut')).toBeUndefined();
  expect(await store.get('resp_before')).toEqual(record('resp_before', 3));
  // No orphan half: each object store holds only the earlier record.
  expect(await rawKeys(name, 'responses')).toEqual(['resp_before']);
  expect(await rawKeys(name, 'histories')).toEqual(['resp_before']);
  expect(await store.delete('resp_cut')).toBe(false);
  await store.put(record('resp_cut', 2));
  expect(await store.get('resp_cut')).toEqual(record('resp_cut', 2));
});
