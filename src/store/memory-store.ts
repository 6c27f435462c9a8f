// An in-memory ResponseStore for Node tests and for runtimes without IndexedDB.
// Records are deep-copied on the way in and out (structuredClone), so a caller can never
// change stored state by mutating an object it passed in or got back.

import { generateReasoningKey } from './reasoning-key.ts';
import { StoreError, type JsonValue, type ResponseStore, type StoredResponse } from './types.ts';

export function createMemoryStore(): ResponseStore {
  const records = new Map<string, StoredResponse>();
  // The promise, not the key, is kept so concurrent first calls share one generation.
  let reasoningKeyPromise: Promise<CryptoKey> | undefined;

  function copy<T>(value: T): T {
    try {
      return structuredClone(value);
    } catch (error) {
      throw new StoreError(`Record cannot be stored: ${describe(error)}`, 'failed');
    }
  }

  return {
    async put(record: StoredResponse): Promise<void> {
      records.set(record.id, copy(record));
    },

    async get(id: string): Promise<StoredResponse | undefined> {
      const record = records.get(id);
      return record === undefined ? undefined : copy(record);
    },

    async updateResponse(id: string, response: { [key: string]: JsonValue }): Promise<void> {
      const record = records.get(id);
      if (record === undefined) {
        throw new StoreError(`No stored response with id ${id}`, 'failed');
      }
      records.set(id, { ...record, response: copy(response) });
    },

    async delete(id: string): Promise<boolean> {
      return records.delete(id);
    },

    reasoningKey(): Promise<CryptoKey> {
      if (reasoningKeyPromise === undefined) {
        reasoningKeyPromise = generateReasoningKey();
        // A failed generation must not be cached forever.
        reasoningKeyPromise.catch(() => {
          reasoningKeyPromise = undefined;
        });
      }
      return reasoningKeyPromise;
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
