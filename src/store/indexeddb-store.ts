// The browser ResponseStore: response history and the reasoning key in IndexedDB, through `idb`.
//
// Object stores (schema version RESPONSE_DB_VERSION, built step by step in `schemaSteps`):
//   responses  keyPath id  { id, response, createdAt, owner }   the Response object as the API returns it;
//              index `by-status` on response.status (version 2)
//   histories  keyPath id  { id, history, inputItems }   what `previous_response_id` replays
//   keys       keyPath id  { id: 'reasoning', key }      the non-extractable AES-GCM CryptoKey itself
// A response and its history are always written and deleted in one transaction, so a reader never sees
// one without the other, and a write resolves only after its transaction committed with strict durability. Every failure surfaces as a StoreError: 'unavailable' (no IndexedDB, open
// blocked or refused), 'quota' (QuotaExceededError) or 'failed' (anything else).
//
// Runs left by a worker that died. Each store instance (one per worker life: the service worker's, or a page's
// engine worker's) has a random `owner` id, holds the Web Lock `ownerLockName(name, owner)` from its first open
// until it is closed or its worker dies, and stamps its id on every response row it writes. A background response
// is finished by the instance that started it, so a row still `queued`/`in_progress` whose owner no longer holds
// its lock (or that has no owner: written before version 2) will never finish: every open of the database marks
// such rows `failed` (error `server_error`, ABANDONED_RUN_MESSAGE) in one transaction. Rows of owners that live
// (another tab's engine worker, this instance) are left alone. Reading an unfinished row of another owner checks
// again (that owner may have died since this store opened). Without Web Locks nothing is swept (liveness cannot
// be told).

import {
  openDB,
  type DBSchema,
  type IDBPDatabase,
  type IDBPIndex,
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
  /** The store instance that last wrote the row (absent on rows written before schema version 2). */
  owner?: string;
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
  responses: { key: string; value: ResponseRow; indexes: { 'by-status': string } };
  histories: { key: string; value: HistoryRow };
  keys: { key: string; value: KeyRow };
}

type ResponseDb = IDBPDatabase<ResponseDbSchema>;
type ResponseStoreName = StoreNames<ResponseDbSchema>;
type UpgradeTransaction = IDBPTransaction<ResponseDbSchema, ResponseStoreName[], 'versionchange'>;

/** The object stores (all keyed by `id`) and the indexes each needs at RESPONSE_DB_VERSION. */
const REQUIRED_SCHEMA: Readonly<Record<ResponseStoreName, Readonly<Record<string, string>>>> = {
  responses: { 'by-status': 'response.status' },
  histories: {},
  keys: {},
};

/** Creates the object store `store` when the database lacks it (an upgrade step builds from what exists). */
function ensureStore(db: ResponseDb, store: ResponseStoreName): void {
  if (!db.objectStoreNames.contains(store)) db.createObjectStore(store, { keyPath: 'id' });
}

/**
 * Schema steps: `schemaSteps[n]` takes a database from version n to n + 1. To add a version, append a step
 * (it may read and rewrite rows through `transaction`); RESPONSE_DB_VERSION follows the list's length. Each step
 * checks for the stores and indexes it needs and creates missing ones, so a database at version n that is not
 * what this app made at n (an empty version-1 database from `indexedDB.open(name)` without a version, or a
 * partial schema) is repaired by the upgrade instead of aborting it.
 */
const schemaSteps: ReadonlyArray<(db: ResponseDb, transaction: UpgradeTransaction) => void> = [
  // 0 -> 1: the three object stores.
  (db) => {
    ensureStore(db, 'responses');
    ensureStore(db, 'histories');
    ensureStore(db, 'keys');
  },
  // 1 -> 2: responses by status, to find unfinished background runs without reading every response
  // (rows keep their data; rows without an `owner` count as left by a worker that is gone).
  (db, transaction) => {
    ensureStore(db, 'responses');
    const responses = transaction.objectStore('responses');
    if (!responses.indexNames.contains('by-status')) responses.createIndex('by-status', 'response.status');
  },
];

/** Creates every store and index of REQUIRED_SCHEMA the database lacks (the end of every upgrade). */
function ensureRequiredSchema(db: ResponseDb, transaction: UpgradeTransaction): void {
  for (const [store, indexes] of Object.entries(REQUIRED_SCHEMA) as [ResponseStoreName, Record<string, string>][]) {
    ensureStore(db, store);
    const objectStore = transaction.objectStore(store);
    for (const [index, keyPath] of Object.entries(indexes)) {
      if (!objectStore.indexNames.contains(index as never)) objectStore.createIndex(index as never, keyPath);
    }
  }
}

/**
 * What the open database lacks of REQUIRED_SCHEMA (missing stores or indexes, or a store keyed otherwise), e.g.
 * `responses.by-status`; empty when it is usable. Only a database at this version made by other code can lack any.
 */
function missingSchema(db: ResponseDb): string[] {
  const missing: string[] = [];
  const present = (Object.keys(REQUIRED_SCHEMA) as ResponseStoreName[]).filter((store) => {
    if (db.objectStoreNames.contains(store)) return true;
    missing.push(store);
    return false;
  });
  if (present.length === 0) return missing;
  const tx = db.transaction(present, 'readonly');
  for (const store of present) {
    const objectStore = tx.objectStore(store);
    if (objectStore.keyPath !== 'id') missing.push(`${store} (keyed by ${JSON.stringify(objectStore.keyPath)}, not "id")`);
    for (const [index, keyPath] of Object.entries(REQUIRED_SCHEMA[store])) {
      if (!objectStore.indexNames.contains(index as never)) missing.push(`${store}.${index}`);
      else if ((objectStore.index(index as never) as { keyPath: unknown }).keyPath !== keyPath) missing.push(`${store}.${index} (on another key path)`);
    }
  }
  return missing;
}

export const RESPONSE_DB_VERSION = schemaSteps.length;

const REASONING_KEY_ID = 'reasoning';

/** Statuses of a background response that its owner has yet to finish. */
const UNFINISHED_STATUSES = ['queued', 'in_progress'] as const;

/** The `error.message` of a background response whose worker stopped before it finished. */
export const ABANDONED_RUN_MESSAGE =
  'The worker running this background response stopped (the browser, the tab or the service worker was closed) before it finished; it will not complete. Create the response again.';

function isUnfinished(response: { [key: string]: JsonValue }): boolean {
  return (UNFINISHED_STATUSES as readonly JsonValue[]).includes(response.status ?? null);
}

/** The Web Lock a store instance holds while it lives (a response row names its owner; see the top of this file). */
export function ownerLockName(databaseName: string, owner: string): string {
  return `webgpu-responses.response-store-owner:${databaseName}:${owner}`;
}

export interface IndexedDbResponseStore extends ResponseStore {
  /** This instance's id, stamped on the response rows it writes; its Web Lock is held from the first open. */
  readonly owner: string;
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
  const db = new ResponseDatabase(options.name ?? DEFAULT_RESPONSE_DB_NAME, randomOwnerId());
  let reasoningKey: Promise<CryptoKey> | undefined;
  const store: IndexedDbResponseStore = {
    owner: db.owner,
    put: (record) => putRecord(db, record),
    get: (id) => getRecord(db, id),
    updateResponse: (id, response) => updateRecord(db, id, response),
    delete: (id) => deleteRecord(db, id),
    reasoningKey(): Promise<CryptoKey> {
      if (reasoningKey === undefined) {
        const loading = loadOrCreateReasoningKey(db);
        reasoningKey = loading;
        loading.catch(() => {
          if (reasoningKey === loading) reasoningKey = undefined;
        });
      }
      return reasoningKey;
    },
    close: () => db.close(),
  };
  return { store, connect: () => db.database() };
}

/** One store instance's connection to the database: opened on first use, reopened when lost, its owner lock held. */
class ResponseDatabase {
  private connection: Promise<ResponseDb> | undefined;
  private closedByCaller = false;
  /** Held from the first open until close() (or the worker's death); resolves to its release, null without Web Locks. */
  private ownerLock: Promise<(() => void) | null> | undefined;

  constructor(
    readonly name: string,
    /** This instance's id, stamped on the response rows it writes. */
    readonly owner: string,
  ) {}

  private readonly forgetConnection = (db: ResponseDb): void => {
    db.close();
    if (this.connection !== undefined) {
      void this.connection.then(
        (current) => {
          if (current === db) this.connection = undefined;
        },
        () => undefined,
      );
    }
  };

  database(): Promise<ResponseDb> {
    if (this.closedByCaller) {
      return Promise.reject(new StoreError(`The response store "${this.name}" was closed.`, 'unavailable'));
    }
    if (this.connection === undefined) {
      const ownerLock = (this.ownerLock ??= holdLock(ownerLockName(this.name, this.owner)));
      // Every write stamps `owner`, so the lock is held before the first one; then runs left by dead owners end.
      const opening = openConnection(this.name, this.forgetConnection).then(async (db) => {
        await ownerLock;
        await failAbandonedRuns(db, this.name, this.owner).catch((error: unknown) =>
          console.warn(`webgpu-responses: could not end the background responses of stopped workers: ${errorMessage(error)}`),
        );
        return db;
      });
      this.connection = opening;
      // A failed open is not cached: the next call tries again.
      opening.catch(() => {
        if (this.connection === opening) this.connection = undefined;
      });
    }
    return this.connection;
  }

  /**
   * Run `body` in one transaction and resolve only once it has committed. Anything that goes wrong,
   * a synchronous throw included, aborts the whole transaction so nothing of it is kept.
   */
  async transact<Names extends ResponseStoreName[], Mode extends IDBTransactionMode, Result>(
    storeNames: Names,
    mode: Mode,
    action: string,
    body: (tx: IDBPTransaction<ResponseDbSchema, Names, Mode>) => Promise<Result>,
  ): Promise<Result> {
    const tx = await this.beginTransaction(storeNames, mode, action);
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

  private async beginTransaction<Names extends ResponseStoreName[], Mode extends IDBTransactionMode>(
    storeNames: Names,
    mode: Mode,
    action: string,
  ): Promise<IDBPTransaction<ResponseDbSchema, Names, Mode>> {
    // Writes are 'strict': the store acknowledges a record only once it is flushed to disk, so an OS crash
    // right after a response was reported as stored cannot lose it.
    const options: IDBTransactionOptions = { durability: mode === 'readwrite' ? 'strict' : 'default' };
    const db = await this.database();
    try {
      return db.transaction(storeNames, mode, options);
    } catch (error) {
      // The browser or a newer version of the app closed the connection under us: reopen once.
      if (errorName(error) === 'InvalidStateError' && !this.closedByCaller) {
        if (this.connection !== undefined && (await this.connection.catch(() => undefined)) === db) this.connection = undefined;
        const reopened = await this.database();
        try {
          return reopened.transaction(storeNames, mode, options);
        } catch (retryError) {
          throw toStoreError(retryError, action);
        }
      }
      throw toStoreError(error, action);
    }
  }

  close(): void {
    this.closedByCaller = true;
    void this.ownerLock?.then((release) => release?.());
    const closing = this.connection;
    this.connection = undefined;
    void closing?.then(
      (db) => db.close(),
      () => undefined,
    );
  }
}

async function putRecord(db: ResponseDatabase, record: StoredResponse): Promise<void> {
  await db.transact(['responses', 'histories'], 'readwrite', `store response ${record.id}`, (tx) => {
    const responseWrite = tx
      .objectStore('responses')
      .put({ id: record.id, response: record.response, createdAt: record.createdAt, owner: db.owner });
    responseWrite.catch(() => undefined);
    const historyWrite = tx
      .objectStore('histories')
      .put({ id: record.id, history: record.history, inputItems: record.inputItems });
    return Promise.all([responseWrite, historyWrite]);
  });
}

async function getRecord(db: ResponseDatabase, id: string): Promise<StoredResponse | undefined> {
  const found = await readRecord(db, id);
  // An unfinished run of another owner may have been abandoned since this store opened: check, then reread.
  if (found !== undefined && isUnfinished(found.record.response) && found.owner !== db.owner) {
    const ended = await failAbandonedRuns(await db.database(), db.name, db.owner);
    if (ended > 0) return (await readRecord(db, id))?.record;
  }
  return found?.record;
}

async function updateRecord(db: ResponseDatabase, id: string, response: { [key: string]: JsonValue }): Promise<void> {
  await db.transact(['responses'], 'readwrite', `update response ${id}`, async (tx) => {
    const responses = tx.objectStore('responses');
    const current = await responses.get(id);
    if (current === undefined) throw new StoreError(`No stored response with id ${id}.`, 'failed');
    await responses.put({ ...current, response, owner: db.owner });
  });
}

function deleteRecord(db: ResponseDatabase, id: string): Promise<boolean> {
  return db.transact(['responses', 'histories'], 'readwrite', `delete response ${id}`, async (tx) => {
    const responses = tx.objectStore('responses');
    const existed = (await responses.getKey(id)) !== undefined;
    await Promise.all([responses.delete(id), tx.objectStore('histories').delete(id)]);
    return existed;
  });
}

/** A stored response with the owner of its row. */
function readRecord(db: ResponseDatabase, id: string): Promise<{ record: StoredResponse; owner: string | undefined } | undefined> {
  return db.transact(['responses', 'histories'], 'readonly', `read response ${id}`, async (tx) => {
    const [response, history] = await Promise.all([tx.objectStore('responses').get(id), tx.objectStore('histories').get(id)]);
    if (response === undefined) return undefined;
    if (history === undefined) {
      throw new StoreError(`Stored response ${id} has no history; the database is inconsistent.`, 'failed');
    }
    const record: StoredResponse = {
      id: response.id,
      response: response.response,
      history: history.history,
      inputItems: history.inputItems,
      createdAt: response.createdAt,
    };
    return { record, owner: response.owner };
  });
}

async function loadOrCreateReasoningKey(db: ResponseDatabase): Promise<CryptoKey> {
  const existing = await db.transact(['keys'], 'readonly', 'read the reasoning key', (tx) => tx.objectStore('keys').get(REASONING_KEY_ID));
  if (existing !== undefined) return checkedKey(existing);
  // WebCrypto is asynchronous and would let a transaction auto-commit, so the key is made outside it;
  // the readwrite transaction below then keeps whichever key got there first (another tab's, or ours).
  const candidate = await generateReasoningKey();
  return db.transact(['keys'], 'readwrite', 'store the reasoning key', async (tx) => {
    const keys = tx.objectStore('keys');
    const winner = await keys.get(REASONING_KEY_ID);
    if (winner !== undefined) return checkedKey(winner);
    await keys.put({ id: REASONING_KEY_ID, key: candidate, createdAt: Date.now() });
    return candidate;
  });
}

/** 128 random bits in hex (crypto.randomUUID() exists only in secure contexts). */
function randomOwnerId(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Requests the exclusive Web Lock `lockName` and holds it until the returned function is called (or this global
 * dies); resolves once granted, with null where there are no Web Locks or they refuse (never rejects: the store
 * works without, only its unfinished runs may then be taken for abandoned ones by another instance).
 */
async function holdLock(lockName: string): Promise<(() => void) | null> {
  const locks = typeof navigator === 'undefined' ? undefined : navigator.locks;
  if (locks === undefined) return null;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  try {
    await new Promise<void>((granted, refused) => {
      locks
        .request(lockName, { mode: 'exclusive' }, () => {
          granted();
          return released;
        })
        .catch(refused);
    });
  } catch (error) {
    console.warn(`webgpu-responses: no Web Lock for this response store (${errorMessage(error)})`);
    return null;
  }
  return release;
}

/**
 * Marks `failed` the unfinished background responses whose owner is gone (see the top of this file); returns how
 * many. The owners are read first and their locks checked after: an owner that wrote a row before it was read held
 * its lock by then, so a lock that is free now means that owner died.
 */
async function failAbandonedRuns(db: ResponseDb, databaseName: string, thisOwner: string): Promise<number> {
  const locks = typeof navigator === 'undefined' ? undefined : navigator.locks;
  if (locks === undefined) return 0;
  const unfinished = async (index: IDBPIndex<ResponseDbSchema, ['responses'], 'responses', 'by-status', IDBTransactionMode>) =>
    (await Promise.all(UNFINISHED_STATUSES.map((status) => index.getAll(status)))).flat();
  const reading = db.transaction('responses', 'readonly');
  const candidates = await unfinished(reading.store.index('by-status'));
  await reading.done;
  const owners = new Set(candidates.flatMap((row) => (row.owner === undefined || row.owner === thisOwner ? [] : [row.owner])));
  const hasOwnerless = candidates.some((row) => row.owner === undefined);
  if (owners.size === 0 && !hasOwnerless) return 0;
  const held = new Set(((await locks.query()).held ?? []).map((lock) => lock.name));
  const dead = new Set([...owners].filter((owner) => !held.has(ownerLockName(databaseName, owner))));
  if (dead.size === 0 && !hasOwnerless) return 0;

  const writing = db.transaction('responses', 'readwrite', { durability: 'strict' });
  const abandoned = (await unfinished(writing.store.index('by-status'))).filter((row) => row.owner === undefined || dead.has(row.owner));
  await Promise.all(abandoned.map((row) => writing.store.put({ ...row, response: abandonedResponse(row.response) })));
  await writing.done;
  return abandoned.length;
}

/** The Response object of a background response whose worker died: `failed`, with items cut short `incomplete`. */
function abandonedResponse(response: { [key: string]: JsonValue }): { [key: string]: JsonValue } {
  const output = Array.isArray(response.output)
    ? response.output.map((item) =>
        typeof item === 'object' && item !== null && !Array.isArray(item) && item.status === 'in_progress'
          ? { ...item, status: 'incomplete' }
          : item,
      )
    : [];
  return {
    ...response,
    status: 'failed',
    output,
    completed_at: null,
    error: { code: 'server_error', message: ABANDONED_RUN_MESSAGE },
  };
}

/**
 * Open the database, running the schema steps from the version found. A blocked or refused open rejects
 * at once with StoreError('unavailable'); `onDisconnect` gets the connection when it must be let go
 * (a newer version of the app wants to upgrade, or the browser dropped it).
 */
async function openConnection(name: string, onDisconnect: (db: ResponseDb) => void): Promise<ResponseDb> {
  if (typeof indexedDB === 'undefined') {
    throw new StoreError('IndexedDB is not available here, so responses cannot be stored.', 'unavailable');
  }
  for (let attempt = 0; ; attempt++) {
    const db = await openConnectionOnce(name, onDisconnect);
    let missing: string[];
    try {
      missing = missingSchema(db);
    } catch (error) {
      db.close();
      throw openFailure(name, error);
    }
    if (missing.length === 0) return db;
    const version = db.version;
    const empty = db.objectStoreNames.length === 0;
    db.close();
    // At this version already, yet not this app's schema: a database with no stores at all holds nothing to
    // lose and is made again; one with other data is reported (never written over).
    if (empty && attempt === 0) {
      await deleteDatabase(name);
      continue;
    }
    throw new StoreError(
      `IndexedDB "${name}" (version ${version}) was made by other code on this origin and lacks ${missing.join(', ')}; ` +
        "clear this site's data to let the app recreate it.",
      'unavailable',
    );
  }
}

/** Deletes the database (after this connection closed); rejects with StoreError when blocked by another tab. */
function deleteDatabase(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.deleteDatabase(name);
    request.onsuccess = () => resolve();
    request.onerror = () => reject(openFailure(name, request.error));
    request.onblocked = () =>
      reject(new StoreError(`IndexedDB "${name}" has an unusable schema and is held open by another tab; close it and retry.`, 'unavailable'));
  });
}

function openConnectionOnce(name: string, onDisconnect: (db: ResponseDb) => void): Promise<ResponseDb> {
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
        // Whatever the steps from oldVersion assumed was there (an empty or partial database at oldVersion).
        ensureRequiredSchema(db, transaction);
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
