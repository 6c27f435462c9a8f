// A ResponseStore in a directory, for the Node host (`webgpu-responses serve --store DIR`): it survives restarts.
//
//   DIR/responses/<name>.json   one file per response: { id, response, history, inputItems, createdAt }
//   DIR/reasoning-key.bin       the raw 32-byte AES-GCM key that seals reasoning (mode 0600)
//
// Every write goes to a temporary file in the same directory, is fsynced, then renamed over the record (and the
// directory fsynced): a reader sees the old record or the new one, never half of one, and a crash mid-write leaves
// only a `*.tmp` file, which get() never reads and the next instance removes. Operations on one id run one after
// another (updateResponse is read-modify-write), within this process; one directory is meant for one process.
// The key file is created once (linked into place, so two processes starting at once agree on one key) and
// imported non-extractable: encrypted reasoning sealed before a restart opens after it.
// Files rather than SQLite: Node 20 has no node:sqlite, and SQLite packages are native addons whose install
// scripts this project's npm does not run.
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { REASONING_KEY_ALGORITHM } from './reasoning-key.ts';
import { StoreError, type JsonValue, type ResponseStore, type StoredResponse } from './types.ts';

export interface FileStoreOptions {
  /** The store's directory; made (mode 0700) when missing. */
  dir: string;
}

export interface FileStore extends ResponseStore {
  readonly dir: string;
  /** Waits for writes under way; later calls fail. */
  close(): Promise<void>;
}

const KEY_FILE = 'reasoning-key.bin';
const KEY_BYTES = 32;
const TMP_SUFFIX = '.tmp';

export function createFileStore(options: FileStoreOptions): FileStore {
  return new DirectoryStore(options.dir);
}

class DirectoryStore implements FileStore {
  private readonly recordsDir: string;
  private closed = false;
  private ready: Promise<void> | undefined;
  private reasoningKeyPromise: Promise<CryptoKey> | undefined;
  /** The tail of each id's chain of operations. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(readonly dir: string) {
    this.recordsDir = join(dir, 'responses');
  }

  put(record: StoredResponse): Promise<void> {
    return this.serial(record.id, () => this.write(record));
  }

  get(id: string): Promise<StoredResponse | undefined> {
    return this.serial(id, () => this.read(id));
  }

  updateResponse(id: string, response: { [key: string]: JsonValue }): Promise<void> {
    return this.serial(id, async () => {
      const record = await this.read(id);
      if (record === undefined) throw new StoreError(`No stored response with id ${id}`, 'failed');
      await this.write({ ...record, response });
    });
  }

  delete(id: string): Promise<boolean> {
    return this.serial(id, async () => {
      if ((await this.read(id)) === undefined) return false;
      try {
        await fs.rm(this.pathOf(id));
        await syncDir(this.recordsDir);
      } catch (error) {
        if (codeOf(error) === 'ENOENT') return false;
        throw storeError(`Response ${id} cannot be deleted`, error);
      }
      return true;
    });
  }

  reasoningKey(): Promise<CryptoKey> {
    if (this.closed) return Promise.reject(new StoreError('The response store is closed', 'unavailable'));
    if (this.reasoningKeyPromise === undefined) {
      const loading = (async () => {
        await this.prepare();
        return loadOrCreateKey(join(this.dir, KEY_FILE));
      })();
      this.reasoningKeyPromise = loading;
      // A failed load must not be cached forever.
      loading.catch(() => {
        this.reasoningKeyPromise = undefined;
      });
    }
    return this.reasoningKeyPromise;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.queues.values()]);
  }

  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      await fs.mkdir(this.recordsDir, { recursive: true, mode: 0o700 });
      // Temporary files are what a crash mid-write leaves: never a record, removed here.
      for (const name of await fs.readdir(this.recordsDir)) {
        if (name.endsWith(TMP_SUFFIX)) await fs.rm(join(this.recordsDir, name), { force: true });
      }
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw storeError(`The response store at ${this.dir} cannot be opened`, error);
    });
    return this.ready;
  }

  /** Runs `op` after every earlier operation on `id` has settled. */
  private serial<T>(id: string, op: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new StoreError('The response store is closed', 'unavailable'));
    const before = this.queues.get(id) ?? Promise.resolve();
    const run = async () => {
      await this.prepare();
      return op();
    };
    const result = before.then(run, run);
    const tail = result.catch(() => undefined);
    this.queues.set(id, tail);
    void tail.then(() => {
      if (this.queues.get(id) === tail) this.queues.delete(id);
    });
    return result;
  }

  private pathOf(id: string): string {
    return join(this.recordsDir, `${fileNameOf(id)}.json`);
  }

  private async read(id: string): Promise<StoredResponse | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.pathOf(id), 'utf8');
    } catch (error) {
      if (codeOf(error) === 'ENOENT') return undefined;
      throw storeError(`Response ${id} cannot be read`, error);
    }
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch (error) {
      throw new StoreError(`The stored record of ${id} is not valid JSON: ${describe(error)}`, 'failed');
    }
    if (!isRecord(record) || record.id !== id) return undefined; // another id's file name (hash collision): not this one
    return record;
  }

  private async write(record: StoredResponse): Promise<void> {
    let text: string;
    try {
      text = JSON.stringify({ id: record.id, response: record.response, history: record.history, inputItems: record.inputItems, createdAt: record.createdAt });
    } catch (error) {
      throw new StoreError(`Record cannot be stored: ${describe(error)}`, 'failed');
    }
    try {
      await writeAtomically(this.pathOf(record.id), text, 0o600);
    } catch (error) {
      throw storeError(`Response ${record.id} cannot be written`, error);
    }
  }
}

/** A file name for an id: the id itself when it is plain (`resp_…`), else a hash of it. */
function fileNameOf(id: string): string {
  if (/^[A-Za-z0-9_-]{1,200}$/.test(id)) return id;
  return `h_${createHash('sha256').update(id).digest('hex')}`;
}

async function writeAtomically(path: string, text: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}${TMP_SUFFIX}`;
  const handle = await fs.open(tmp, 'wx', mode);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, path);
  } catch (error) {
    await fs.rm(tmp, { force: true });
    throw error;
  }
  await syncDir(join(path, '..'));
}

/** fsync a directory so a rename in it is durable (not possible on every platform: then skipped). */
async function syncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Windows cannot open a directory; its rename is what there is.
  } finally {
    await handle?.close();
  }
}

/** The key in `path`, made (random, mode 0600) when there is none; imported non-extractable. */
async function loadOrCreateKey(path: string): Promise<CryptoKey> {
  let raw: Uint8Array<ArrayBuffer>;
  try {
    raw = new Uint8Array(await fs.readFile(path));
  } catch (error) {
    if (codeOf(error) !== 'ENOENT') throw storeError('The reasoning key cannot be read', error);
    const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}${TMP_SUFFIX}`;
    try {
      const handle = await fs.open(tmp, 'wx', 0o600);
      try {
        await handle.writeFile(randomBytes(KEY_BYTES));
        await handle.sync();
      } finally {
        await handle.close();
      }
      // link, not rename: it never replaces a key another process wrote meanwhile (EEXIST: use that one).
      await fs.link(tmp, path).catch((e: unknown) => {
        if (codeOf(e) !== 'EEXIST') throw e;
      });
      await syncDir(join(path, '..'));
    } catch (e) {
      throw storeError('The reasoning key cannot be written', e);
    } finally {
      await fs.rm(tmp, { force: true });
    }
    raw = new Uint8Array(await fs.readFile(path));
  }
  if (raw.byteLength !== KEY_BYTES) {
    throw new StoreError(`The reasoning key ${path} has ${raw.byteLength} bytes, not ${KEY_BYTES}: remove it to make a new one (reasoning sealed with the old key will not open)`, 'failed');
  }
  try {
    return await crypto.subtle.importKey('raw', raw, REASONING_KEY_ALGORITHM, false, ['encrypt', 'decrypt']);
  } finally {
    raw.fill(0);
  }
}

function isRecord(value: unknown): value is StoredResponse {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return typeof r.id === 'string' && typeof r.response === 'object' && r.response !== null && Array.isArray(r.history) && Array.isArray(r.inputItems) && typeof r.createdAt === 'number';
}

function codeOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}

function storeError(what: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const code = codeOf(error);
  const reason = code === 'ENOSPC' || code === 'EDQUOT' ? 'quota' : code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? 'unavailable' : 'failed';
  return new StoreError(`${what}: ${describe(error)}`, reason);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
