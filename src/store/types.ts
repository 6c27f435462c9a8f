// The ResponseStore interface: where the Responses core keeps response history.
// src/store/indexeddb-store.ts implements it in the browser, src/store/memory-store.ts in Node tests.
// Records are plain JSON values; their shapes are owned by src/responses (schemas there), so here they are opaque.
import { DomainError } from '../common/engine-error.ts';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface StoredResponse {
  /** `resp_…` */
  id: string;
  /** The Response object as the API returns it. */
  response: { [key: string]: JsonValue };
  /** Normalised input items of the request (and of the chain it continued) followed by its output items. */
  history: JsonValue[];
  /** The input items of this request alone, as `input_items` lists them. */
  inputItems: JsonValue[];
  createdAt: number;
}

export interface ResponseStore {
  /** Write a response and its history in one transaction; never half. Throws StoreError on failure. */
  put(record: StoredResponse): Promise<void>;
  get(id: string): Promise<StoredResponse | undefined>;
  /** Replace only the response object (background status updates); history is written with `put`. */
  updateResponse(id: string, response: { [key: string]: JsonValue }): Promise<void>;
  /** Remove the response and its history; false when it did not exist. */
  delete(id: string): Promise<boolean>;
  /** The AES-GCM key that seals reasoning (`encrypted_content`), made non-extractable on first use and kept. */
  reasoningKey(): Promise<CryptoKey>;
}

/** A storage failure: kind `store_full` (quota) or `store_failed` (unavailable, failed), param `store`. */
export class StoreError extends DomainError {
  constructor(
    message: string,
    readonly reason: 'unavailable' | 'quota' | 'failed',
  ) {
    super(reason === 'quota' ? 'store_full' : 'store_failed', message, { param: 'store', code: `store_${reason}` });
    this.name = 'StoreError';
  }
}
