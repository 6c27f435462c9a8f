// A dedicated worker for test/browser/stale-background-runs.test.ts: a second "worker instance" with its own
// IndexedDB store (its own owner and Web Lock), which writes one unfinished background response and then stays
// alive until the test terminates it, the way a service worker or an engine worker dies mid-run.
import { openIndexedDbStore } from '../../src/store/indexeddb-store.ts';
import type { StoredResponse } from '../../src/store/types.ts';

declare const self: DedicatedWorkerGlobalScope;

export interface WriteRunMessage {
  name: string;
  record: StoredResponse;
}

export interface WroteRunMessage {
  owner: string;
}

self.onmessage = async (event: MessageEvent<WriteRunMessage>) => {
  const store = await openIndexedDbStore({ name: event.data.name });
  await store.put(event.data.record);
  self.postMessage({ owner: store.owner } satisfies WroteRunMessage);
};
