// The browser ResponseStore: response history and the reasoning key in IndexedDB, through `idb`.
//
// Object stores (schema version RESPONSE_DB_VERSION, built step by step in `schemaSteps`):
//   responses  keyPath id  { id, response, createdAt }   the Response object as the API returns it
//   histories  keyPath id  { id, history, inputItems }   what `previous_response_id` replays
//   keys       keyPath id  { id: 'reasoning', key }      the non-extractable AES-GCM CryptoKey itself
// A response and its history are always written and deleted in one transaction, so a reader never sees
// one without the other, and a write resolves only after its transaction committed with strict durability. Every failure surfaces as a StoreError: 'unavailable' (no IndexedDB, open
// blocked or refused), 'quota' (QuotaExceededError) or 'failed' (anything else).

import {
  openDB,
  type DBSchema,
  type IDBPDatabase,
  type IDBPTransaction,
  type StoreNames,
} from 'idb';
import { generateReasoningKey } from './reasoning-key.ts';
import { StoreError, type JsonValue, type ResponseStore, type StoredResponse } from './types.ts';

export const DEFAULT_RESPONSE_DB_NAME = 'webgpu-responses';

interface ResponseRow {
  id: string;
  response: { [key: string]: JsonValue };
  createdAt: number;
}

interface HistoryRow {
  id: string;
  history: JsonValue[];
  inputItems: JsonValue[];
}

interface KeyRow {
  id: string;
  key: CryptoKey;
  createdAt: number;
}

export interface ResponseDbSchema extends DBSchema {
  responses: { key: string; value: ResponseRow };
  histories: { key: string; value: HistoryRow };
  keys: { key: string; value: KeyRow };
}

type ResponseDb = IDBPDatabase<ResponseDbSchema>;
type ResponseStoreName = StoreNames<ResponseDbSchema>;
type UpgradeTransaction = IDBPTransaction<ResponseDbSchema, ResponseStoreName[], 'versionchange'>;

/**
 * Schema steps: `schemaSteps[n]` takes a database from version n to n + 1. To add version 2, append a step
 * (it may read and rewrite rows through `transaction`); RESPONSE_DB_VERSION follows the list's length.
 */
const schemaSteps: ReadonlyArray<(db: ResponseDb, transaction: UpgradeTransaction) => void> = [
  // 0 -> 1: the three object stores.
  (db) => {
    db.createObjectStore('responses', { keyPath: 'id' });
    db.createObjectStore('histories', { keyPath: 'id' });
    db.createObjectStore('keys', { keyPath: 'id' });
  },
];

export const RESPONSE_DB_VERSION = schemaSteps.length;

const REASONING_KEY_ID = 'reasoning';

export interface IndexedDbResponseStore extends ResponseStore {
  /** Close the connection (after running transactions finish); later calls reject with StoreError('unavailable'). */
  close(): void;
}

export interface IndexedDbStoreOptions {
  /** Database name; tests use a unique one each. */
  name?: string;
}

/**
 * Open (creating or upgrading) the response database now. Rejects with StoreError('unavailable') when it cannot
 * be used, so a caller learns at start-up; use createIndexedDbStore to start anyway and fail per call.
 */
export async function openIndexedDbStore(options: IndexedDbStoreOptions = {}): Promise<IndexedDbResponseStore> {
  const { store, connect } = buildIndexedDbStore(options);
  await connect();
  return store;
}

/**
 * The same store, opened on first use: creating it never fails, and while IndexedDB cannot be used each call
 * rejects with that StoreError (and the next call tries again). For hosts that must keep answering
 * `store:false` requests when storage is unavailable.
 */
export function createIndexedDbStore(options: IndexedDbStoreOptions = {}): IndexedDbResponseStore {
  return buildIndexedDbStore(options).store;
}

function buildIndexedDbStore(options: IndexedDbStoreOptions): {
  store: IndexedDbResponseStore;
  connect: () => Promise<unknown>;
} {
  const name = options.name ?? DEFAULT_RESPONSE_DB_NAME;
  let connection: Promise<ResponseDb> | undefined;
  let closedByCaller = false;
  let reasoningKey: Promise<CryptoKey> | undefined;

  function forgetConnection(db: ResponseDb): void {
    db.close();
    if (connection !== undefined) {
      void connection.then(
        (current) => {
          if (current === db) connection = undefined;
        },
        () => undefined,
      );
    }
  }

  function database(): Promise<ResponseDb> {
    if (closedByCaller) {
      return Promise.reject(new StoreError(`The response store "${name}" was closed.`, 'unavailable'));
    }
    if (connection === undefined) {
      const opening = openConnection(name, forgetConnection);
      connection = opening;
      // A failed open is not cached: the next call tries again.
      opening.catch(() => {
        if (connection === opening) connection = undefined;
      });
    }
    return connection;
  }

  /**
   * Run `body` in one transaction and resolve only once it has committed. Anything that goes wrong,
   * a synchronous throw included, aborts the whole transaction so nothing of it is kept.
   */
  async function transact<Names extends ResponseStoreName[], Mode extends IDBTransactionMode, Result>(
    storeNames: Names,
    mode: Mode,
    action: string,
    body: (tx: IDBPTransaction<ResponseDbSchema, Names, Mode>) => Promise<Result>,
  ): Promise<Result> {
    const tx = await beginTransaction(storeNames, mode, action);
    const committed = tx.done;
    committed.catch(() => undefined);
    try {
      const result = await body(tx);
      await committed;
      return result;
    } catch (error) {
      try {
        tx.abort();
      } catch {
        // Already aborted or finished.
      }
      throw toStoreError(error, action, tx.error);
    }
  }

  async function beginTransaction<Names extends ResponseStoreName[], Mode extends IDBTransactionMode>(
    storeNames: Names,
    mode: Mode,
    action: string,
  ): Promise<IDBPTransaction<ResponseDbSchema, Names, Mode>> {
    // Writes are 'strict': the store acknowledges a record only once it is flushed to disk, so an OS crash
    // right after a response was reported as stored cannot lose it.
    const options: IDBTransactionOptions = { durability: mode === 'readwrite' ? 'strict' : 'default' };
    const db = await database();
    try {
      return db.transaction(storeNames, mode, options);
    } catch (error) {
      // The browser or a newer version of the app closed the connection under us: reopen once.
      if (errorName(error) === 'InvalidStateError' && !closedByCaller) {
        if (connection !== undefined && (await connection.catch(() => undefined)) === db) connection = undefined;
        const reopened = await database();
        try {
          return reopened.transaction(storeNames, mode, options);
        } catch (retryError) {
          throw toStoreError(retryError, action);
        }
      }
      throw toStoreError(error, action);
    }
  }

  async function loadOrCreateReasoningKey(): Promise<CryptoKey> {
    const existing = await transact(['keys'], 'readonly', 'read the reasoning key', (tx) =>
      tx.objectStore('keys').get(REASONING_KEY_ID),
    );
    if (existing !== undefined) return checkedKey(existing);
    // WebCrypto is asynchronous and would let a transaction auto-commit, so the key is made outside it;
    // the readwrite transaction below then keeps whichever key got there first (another tab's, or ours).
    const candidate = await generateReasoningKey();
    return transact(['keys'], 'readwrite', 'store the reasoning key', async (tx) => {
      const keys = tx.objectStore('keys');
      const winner = await keys.get(REASONING_KEY_ID);
      if (winner !== undefined) return checkedKey(winner);
      await keys.put({ id: REASONING_KEY_ID, key: candidate, createdAt: Date.now() });
      return candidate;
    });
  }

  const store: IndexedDbResponseStore = {
    async put(record: StoredResponse): Promise<void> {
      await transact(['responses', 'histories'], 'readwrite', `store response ${record.id}`, (tx) => {
        const responseWrite = tx
          .objectStore('responses')
          .put({ id: record.id, response: record.response, createdAt: record.createdAt });
        responseWrite.catch(() => undefined);
        const historyWrite = tx
          .objectStore('histories')
          .put({ id: record.id, history: record.history, inputItems: record.inputItems });
        return Promise.all([responseWrite, historyWrite]);
      });
    },

    get(id: string): Promise<StoredResponse | undefined> {
      return transact(['responses', 'histories'], 'readonly', `read response ${id}`, async (tx) => {
        const [response, history] = await Promise.all([
          tx.objectStore('responses').get(id),
          tx.objectStore('histories').get(id),
        ]);
        if (response === undefined) return undefined;
        if (history === undefined) {
          throw new StoreError(`Stored response ${id} has no history; the database is inconsistent.`, 'failed');
        }
        return {
          id: response.id,
          response: response.response,
          history: history.history,
          inputItems: history.inputItems,
          createdAt: response.createdAt,
        };
      });
    },

    async updateResponse(id: string, response: { [key: string]: JsonValue }): Promise<void> {
      await transact(['responses'], 'readwrite', `update response ${id}`, async (tx) => {
        const responses = tx.objectStore('responses');
        const current = await responses.get(id);
        if (current === undefined) throw new StoreError(`No stored response with id ${id}.`, 'failed');
        await responses.put({ ...current, response });
      });
    },

    delete(id: string): Promise<boolean> {
      return transact(['responses', 'histories'], 'readwrite', `delete response ${id}`, async (tx) => {
        const responses = tx.objectStore('responses');
        const existed = (await responses.getKey(id)) !== undefined;
        await Promise.all([responses.delete(id), tx.objectStore('histories').delete(id)]);
        return existed;
      });
    },

    reasoningKey(): Promise<CryptoKey> {
      if (reasoningKey === undefined) {
        const loading = loadOrCreateReasoningKey();
        reasoningKey = loading;
        loading.catch(() => {
          if (reasoningKey === loading) reasoningKey = undefined;
        });
      }
      return reasoningKey;
    },

    close(): void {
      closedByCaller = true;
      const closing = connection;
      connection = undefined;
      void closing?.then(
        (db) => db.close(),
        () => undefined,
      );
    },
  };
  return { store, connect: database };
}

/**
 * Open the database, running the schema steps from the version found. A blocked or refused open rejects
 * at once with StoreError('unavailable'); `onDisconnect` gets the connection when it must be let go
 * (a newer version of the app wants to upgrade, or the browser dropped it).
 */
function openConnection(name: string, onDisconnect: (db: ResponseDb) => void): Promise<ResponseDb> {
  if (typeof indexedDB === 'undefined') {
    return Promise.reject(
      new StoreError('IndexedDB is not available here, so responses cannot be stored.', 'unavailable'),
    );
  }
  return new Promise<ResponseDb>((resolve, reject) => {
    let settled = false;
    let opened: ResponseDb | undefined;
    const opening = openDB<ResponseDbSchema>(name, RESPONSE_DB_VERSION, {
      upgrade(db, oldVersion, _newVersion, transaction) {
        for (let version = oldVersion; version < RESPONSE_DB_VERSION; version += 1) {
          const step = schemaSteps[version];
          if (step === undefined) throw new Error(`No schema step from version ${version}`);
          step(db, transaction);
        }
      },
      blocked(currentVersion) {
        if (settled) return;
        settled = true;
        reject(
          new StoreError(
            `IndexedDB "${name}" is held open at version ${currentVersion} by another tab; close it and retry.`,
            'unavailable',
          ),
        );
      },
      blocking() {
        if (opened !== undefined) onDisconnect(opened);
      },
      terminated() {
        if (opened !== undefined) onDisconnect(opened);
      },
    });
    opening.then(
      (db) => {
        opened = db;
        if (settled) {
          db.close();
          return;
        }
        settled = true;
        resolve(db);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        reject(openFailure(name, error));
      },
    );
  });
}

function openFailure(name: string, error: unknown): StoreError {
  const detail = errorMessage(error);
  if (errorName(error) === 'VersionError') {
    return new StoreError(
      `IndexedDB "${name}" was upgraded by a newer version of this app (${detail}); reload the page.`,
      'unavailable',
    );
  }
  if (errorName(error) === 'QuotaExceededError') {
    return new StoreError(`Browser storage is full; IndexedDB "${name}" cannot be opened (${detail}).`, 'quota');
  }
  return new StoreError(
    `IndexedDB "${name}" cannot be opened (private browsing or storage disabled?): ${detail}`,
    'unavailable',
  );
}

function checkedKey(row: KeyRow): CryptoKey {
  if (!(row.key instanceof CryptoKey)) {
    throw new StoreError('The stored reasoning key is not a CryptoKey.', 'failed');
  }
  return row.key;
}

/** Map an IndexedDB failure to a StoreError; `transactionError` is the transaction's own error, when it has one. */
function toStoreError(error: unknown, action: string, transactionError?: DOMException | null): StoreError {
  if (error instanceof StoreError) return error;
  const cause = transactionError ?? error;
  if (errorName(cause) === 'QuotaExceededError' || errorName(error) === 'QuotaExceededError') {
    return new StoreError(`Browser storage is full: could not ${action}.`, 'quota');
  }
  return new StoreError(`Could not ${action}: ${errorMessage(cause)}`, 'failed');
}

function errorName(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'name' in error && typeof error.name === 'string'
    ? error.name
    : undefined;
}

function errorMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string') {
    const name = errorName(error);
    return name !== undefined && name !== 'Error' ? `${name}: ${error.message}` : error.message;
  }
  return String(error);
}
