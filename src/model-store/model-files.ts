// Model files in Cache Storage, stored as parts: a file is written as a run of parts (each a cache entry keyed by
// its byte offset, at most `partBytes` long) and a completion record once it is whole and checked. A download cut
// mid-file keeps every byte that arrived (the part being filled is flushed on the error), so the next attempt asks
// for `Range: bytes=<stored>-` and continues. A complete file is read back as one Blob made of its parts' Blobs,
// which the browser keeps on disk: no copy, and never whole in the JS heap.
// Used the same way for catalog downloads, the bundled model (downloaded on first use) and imported local files.

/** Cache Storage cache holding every model file part and completion record. */
export const modelFilesCacheName = 'webgpu-responses-model-files-v1';

import { sha256OfBlob } from './sha256';
import { checkStoredHeader, probeGgufHeader, type VerifiedHeader } from './gguf-header-check';
import { DomainError, type ErrorKind } from '../common/engine-error';

const DEFAULT_PART_BYTES = 4 << 20;
const GGUF_MAGIC = [0x47, 0x47, 0x55, 0x46];

/** Why a file could not be stored; `status` is the HTTP status the /v1 routes answer with. */
/** A model file that is missing, bad, too large for the quota or failed to download; `code` says which. */
export class ModelFileError extends DomainError {
  constructor(message: string, kind: ErrorKind, code: string) {
    super(kind, message, { code });
    this.name = 'ModelFileError';
  }
}

export interface CompleteRecord {
  bytes: number;
  sha256?: string;
  /** Where the bytes came from (URL, or `import:<file name>`). */
  origin: string;
  completedAt: number;
  /** What the header check found: before the download (`checkHeader`), or from the stored bytes on first open. */
  verified?: VerifiedHeader;
}

export interface FileWriteProgress {
  /** Bytes stored so far (including those from earlier attempts). */
  loaded: number;
  total: number;
  /** Where this attempt started (bytes already stored before it). */
  resumedFrom: number;
}

export interface DownloadOptions {
  /** The size the file must have (the catalog's); the server's length is used when absent. */
  expectedBytes?: number;
  sha256?: string;
  signal?: AbortSignal;
  onProgress?: (p: FileWriteProgress) => void;
  /** Attempts after a cut connection (each resuming where the last one stopped); default 3. */
  retries?: number;
  /** Refuses (507) when the bytes still to fetch exceed what the storage estimate says is free. */
  checkQuota?: boolean;
  /**
   * Fetches the GGUF header by Range first and refuses (400 unsupported_model_file) a file the runtime cannot serve
   * before its body is fetched (src/model-store/gguf-header-check.ts); what it verified goes on the completion record.
   */
  checkHeader?: boolean;
}

interface PartEntry {
  offset: number;
  bytes: number;
  request: Request;
}

export class ModelFileStore {
  private readonly base: string;
  private readonly downloads = new Map<string, Promise<Blob>>();

  constructor(
    scope: string,
    private readonly partBytes = DEFAULT_PART_BYTES,
  ) {
    this.base = new URL('__model-files__/', scope).href;
  }

  private prefix(key: string): string {
    return `${this.base}${encodeURIComponent(key)}/`;
  }

  private cache(): Promise<Cache> {
    return caches.open(modelFilesCacheName);
  }

  /** The contiguous parts from offset 0 (a gap, which a crash between puts could leave, ends the run). */
  private async parts(key: string): Promise<PartEntry[]> {
    const cache = await this.cache();
    const prefix = `${this.prefix(key)}part/`;
    const found: PartEntry[] = [];
    for (const request of await cache.keys()) {
      if (!request.url.startsWith(prefix)) continue;
      const [offset, bytes] = request.url.slice(prefix.length).split('-').map(Number);
      if (Number.isSafeInteger(offset) && Number.isSafeInteger(bytes)) found.push({ offset: offset!, bytes: bytes!, request });
    }
    found.sort((a, b) => a.offset - b.offset);
    const run: PartEntry[] = [];
    let next = 0;
    for (const part of found) {
      if (part.offset !== next) break;
      run.push(part);
      next += part.bytes;
    }
    return run;
  }

  /** Bytes stored so far (contiguous from the start). */
  async storedBytes(key: string): Promise<number> {
    return (await this.parts(key)).reduce((sum, p) => sum + p.bytes, 0);
  }

  async completeRecord(key: string): Promise<CompleteRecord | null> {
    const hit = await (await this.cache()).match(`${this.prefix(key)}complete`);
    return hit ? ((await hit.json()) as CompleteRecord) : null;
  }

  /** Keys (starting with `keyPrefix`) of the files that have a description (see writeDescription). */
  async describedKeys(keyPrefix: string): Promise<string[]> {
    const start = `${this.base}${encodeURIComponent(keyPrefix)}`;
    const keys: string[] = [];
    for (const request of await (await this.cache()).keys()) {
      if (request.url.startsWith(start) && request.url.endsWith('/description')) {
        keys.push(decodeURIComponent(request.url.slice(this.base.length, -'/description'.length)));
      }
    }
    return keys;
  }

  /**
   * Writes a small marker that a download of `key` started: a write that fails when the storage is full, so a
   * download that cannot be stored is refused before any byte is fetched (storage.estimate() may not know).
   */
  async markStarted(key: string, origin: string): Promise<void> {
    try {
      await (await this.cache()).put(`${this.prefix(key)}started`, Response.json({ origin, at: Date.now() }));
    } catch (error) {
      throw quotaOr(error);
    }
  }

  /** Keeps a small JSON description with a file (what the file is, for files the app does not list itself). */
  async writeDescription(key: string, description: unknown): Promise<void> {
    try {
      await (await this.cache()).put(`${this.prefix(key)}description`, Response.json(description));
    } catch (error) {
      throw quotaOr(error);
    }
  }

  async readDescription(key: string): Promise<unknown> {
    const hit = await (await this.cache()).match(`${this.prefix(key)}description`);
    return hit ? hit.json() : null;
  }

  /**
   * The whole file as one Blob over its parts, or null while it is not complete. A file stored without a header
   * check (before there was one, or imported) is checked from its stored bytes on its first open: one the runtime
   * cannot serve is refused (400 unsupported_model_file, kept as it is); what a served one verified goes on its record.
   */
  async open(key: string): Promise<Blob | null> {
    const record = await this.completeRecord(key);
    if (!record) return null;
    const blob = await this.partsBlob(key);
    if (!record.verified) {
      const verified = await checkStoredHeader(blob, record.origin);
      // Kept for the model rows; a failed write (storage full) only means the check runs again on the next open.
      await (await this.cache()).put(`${this.prefix(key)}complete`, Response.json({ ...record, verified } satisfies CompleteRecord)).catch(() => {});
    }
    return blob;
  }

  private async partsBlob(key: string): Promise<Blob> {
    const cache = await this.cache();
    const blobs: Blob[] = [];
    for (const part of await this.parts(key)) {
      const hit = await cache.match(part.request);
      if (!hit) throw new ModelFileError(`A stored part of ${key} went missing (storage cleared?)`, 'internal', 'model_file_missing');
      blobs.push(await hit.blob());
    }
    return new Blob(blobs, { type: 'application/octet-stream' });
  }

  /** Deletes every part and the completion record; true when something was there. */
  async delete(key: string): Promise<boolean> {
    const cache = await this.cache();
    const prefix = this.prefix(key);
    let deleted = false;
    for (const request of await cache.keys()) {
      if (request.url.startsWith(prefix)) deleted = (await cache.delete(request)) || deleted;
    }
    return deleted;
  }

  /** Deletes the stored bytes of a file (keeping its description). */
  async deleteParts(key: string): Promise<void> {
    const cache = await this.cache();
    const prefix = `${this.prefix(key)}part/`;
    for (const request of await cache.keys()) {
      if (request.url.startsWith(prefix)) await cache.delete(request);
    }
  }

  /**
   * Appends `body` after the `startOffset` bytes already stored, one part per `partBytes`. On an error the bytes
   * received so far are stored first, then the error is rethrown.
   */
  async append(key: string, body: ReadableStream<Uint8Array>, startOffset: number, onBytes?: (stored: number) => void): Promise<number> {
    const cache = await this.cache();
    let offset = startOffset;
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    const flush = async (): Promise<void> => {
      if (pendingBytes === 0) return;
      const blob = new Blob(pending as BlobPart[]);
      try {
        await cache.put(`${this.prefix(key)}part/${String(offset).padStart(15, '0')}-${pendingBytes}`, new Response(blob));
      } catch (error) {
        throw quotaOr(error);
      }
      offset += pendingBytes;
      pending = [];
      pendingBytes = 0;
      onBytes?.(offset);
    };
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        pending.push(value);
        pendingBytes += value.byteLength;
        if (pendingBytes >= this.partBytes) await flush();
      }
    } catch (error) {
      await flush().catch(() => {});
      throw error;
    } finally {
      reader.releaseLock();
    }
    await flush();
    return offset;
  }

  /** Checks the stored bytes (size, GGUF magic, optional sha256) and writes the completion record. */
  async complete(key: string, check: { expectedBytes: number; sha256?: string; origin: string; verified?: VerifiedHeader }): Promise<Blob> {
    const blob = await this.partsBlob(key);
    if (blob.size !== check.expectedBytes) {
      await this.delete(key);
      throw new ModelFileError(`${check.origin}: expected ${check.expectedBytes} bytes but got ${blob.size}; the stored copy was discarded`, 'upstream', 'model_size_mismatch');
    }
    const magic = new Uint8Array(await blob.slice(0, 4).arrayBuffer());
    if (!GGUF_MAGIC.every((b, i) => magic[i] === b)) {
      await this.delete(key);
      throw new ModelFileError(`${check.origin}: not a GGUF file (it does not start with "GGUF")`, 'invalid_request', 'unsupported_model_file');
    }
    let sha256: string | undefined;
    if (check.sha256) {
      sha256 = await sha256OfBlob(blob);
      if (sha256 !== check.sha256.toLowerCase()) {
        await this.delete(key);
        throw new ModelFileError(`${check.origin}: sha256 is ${sha256}, expected ${check.sha256}; the stored copy was discarded`, 'upstream', 'model_checksum_mismatch');
      }
    }
    const record: CompleteRecord = { bytes: blob.size, sha256, origin: check.origin, completedAt: Math.floor(Date.now() / 1000), ...(check.verified ? { verified: check.verified } : {}) };
    await (await this.cache()).put(`${this.prefix(key)}complete`, Response.json(record));
    return blob;
  }

  /**
   * Downloads `url` into the file `key` (resuming from the bytes already stored, retrying a cut connection) and
   * returns the complete, checked file. A complete file is returned at once; a second call while a download of the
   * same file runs joins it (one writer per file).
   */
  download(key: string, url: string, options: DownloadOptions = {}): Promise<Blob> {
    let running = this.downloads.get(key);
    if (!running) {
      running = this.downloadOnce(key, url, options);
      this.downloads.set(key, running);
      const forget = (): void => void this.downloads.delete(key);
      running.then(forget, forget);
    }
    return running;
  }

  private async downloadOnce(key: string, url: string, options: DownloadOptions): Promise<Blob> {
    const done = await this.open(key);
    if (done) return done;
    const retries = options.retries ?? 3;
    let total = options.expectedBytes;
    let verified: VerifiedHeader | undefined;
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
      let stored = await this.storedBytes(key);
      if (total !== undefined && stored >= total) break;
      if (options.checkQuota && total !== undefined && attempt === 0) await checkQuota(total - stored, url);
      let resumedFrom = stored;
      let body: ReadableStream<Uint8Array> | undefined;
      if (options.checkHeader && attempt === 0) {
        // The probe's bytes are the file's first bytes: stored, and the download goes on from where the probe ended
        // (from a server that ignored Range, on the probe's own body), so no byte is fetched twice.
        const probe = await probeGgufHeader(url, { signal: options.signal, keepBytes: true });
        verified = probe.verified;
        try {
          if (options.checkQuota && total === undefined) await checkQuota(probe.fileBytes - stored, url);
          total ??= probe.fileBytes;
          if (probe.rest && stored > 0) {
            // The server ignores Range: its body starts at byte 0.
            await this.deleteParts(key);
            stored = resumedFrom = 0;
          }
          const head = probe.head!;
          if (head.byteLength > stored) stored = await this.append(key, new Blob([head.subarray(stored) as BlobPart]).stream(), stored);
        } catch (error) {
          void probe.rest?.cancel().catch(() => {});
          throw error;
        }
        body = probe.rest;
        if (!body && stored >= total) break;
      }
      if (!body) {
        let response: Response;
        try {
          response = await fetch(url, { headers: stored > 0 ? { range: `bytes=${stored}-` } : {}, cache: 'no-store', signal: options.signal });
        } catch (error) {
          if (options.signal?.aborted || attempt >= retries) throw downloadFailed(url, error);
          continue;
        }
        if (stored > 0 && response.status === 416) break;
        if (!response.ok || !response.body) {
          void response.body?.cancel().catch(() => {});
          throw new ModelFileError(`Could not download ${url}: HTTP ${response.status}`, 'upstream', 'model_download_failed');
        }
        if (stored > 0 && response.status !== 206) {
          // The server ignored the range: start over.
          await this.deleteParts(key);
          stored = resumedFrom = 0;
        }
        total ??= serverLength(response, stored);
        if (total === undefined) throw new ModelFileError(`Could not download ${url}: the server did not say how long the file is`, 'upstream', 'model_download_failed');
        if (options.checkQuota && options.expectedBytes === undefined && attempt === 0 && !options.checkHeader) {
          await checkQuota(total - stored, url).catch((error: unknown) => {
            void response.body?.cancel().catch(() => {});
            throw error;
          });
        }
        body = response.body;
      }
      const known = total!;
      options.onProgress?.({ loaded: stored, total: known, resumedFrom });
      const counted = body.pipeThrough(progressCounter(stored, (loaded) => options.onProgress?.({ loaded, total: known, resumedFrom })));
      try {
        await this.append(key, counted, stored);
        break;
      } catch (error) {
        if (error instanceof ModelFileError || options.signal?.aborted || attempt >= retries) throw downloadFailed(url, error);
      }
    }
    const size = await this.storedBytes(key);
    return this.complete(key, { expectedBytes: total ?? size, sha256: options.sha256, origin: url, verified });
  }
}

function progressCounter(start: number, report: (loaded: number) => void): TransformStream<Uint8Array, Uint8Array> {
  let loaded = start;
  return new TransformStream({
    transform(chunk, controller) {
      loaded += chunk.byteLength;
      report(loaded);
      controller.enqueue(chunk);
    },
  });
}

function serverLength(response: Response, stored: number): number | undefined {
  const range = /\/(\d+)\s*$/.exec(response.headers.get('content-range') ?? '');
  if (range) return Number(range[1]);
  const length = response.headers.get('content-length');
  return length === null ? undefined : stored + Number(length);
}

function downloadFailed(url: string, error: unknown): Error {
  if (error instanceof ModelFileError) return error;
  if (error instanceof DOMException && error.name === 'AbortError') return error;
  return new ModelFileError(`The download of ${url} failed: ${(error as Error).message ?? String(error)}`, 'upstream', 'model_download_failed');
}

function quotaOr(error: unknown): unknown {
  if (error instanceof DOMException && error.name === 'QuotaExceededError') {
    return new ModelFileError('The browser refused to store more model data for this site (storage quota exceeded).', 'insufficient_storage', 'insufficient_storage');
  }
  return error;
}

/**
 * Refuses cleanly (507) when `bytes` more would not fit in this origin's storage quota. Asks for persistent storage
 * first (navigator.storage.persist(): a multi-gigabyte model must not be evicted under pressure, and some browsers
 * grant a persisted origin a larger quota), then compares what storage.estimate() says is free with `bytes`; the
 * refusal names the bytes needed and available, exact and rounded, and whether persistence was granted.
 */
export async function checkQuota(bytes: number, what: string): Promise<void> {
  const storage = globalThis.navigator?.storage;
  const persisted = await requestPersistence(storage);
  const estimate = await storage?.estimate?.().catch(() => null);
  if (!estimate || estimate.quota === undefined) return;
  const free = Math.max(0, estimate.quota - (estimate.usage ?? 0));
  if (bytes > free) {
    throw new ModelFileError(
      `Not enough storage for ${what}: it needs ${formatBytes(bytes)} more but only ${formatBytes(free)} is free for this site ` +
        `(quota ${formatBytes(estimate.quota)}). Delete other models or free disk space.` +
        (bytes >= 1 << 30 ? ` (Needed: ${bytes} bytes; available: ${free} bytes.)` : '') +
        (persisted === false ? ' Persistent storage was not granted for this site, so the browser may also evict stored models.' : ''),
      'insufficient_storage',
      'insufficient_storage',
    );
  }
}

/**
 * Asks for persistent storage when it is not granted yet; whether it is (null: the browser cannot say). persist() is
 * a page's (a service worker has only persisted()): there the answer is whether a page asked and got it.
 */
async function requestPersistence(storage: StorageManager | undefined): Promise<boolean | null> {
  try {
    const persisted = (await storage?.persisted?.()) ?? null;
    if (persisted || !storage?.persist) return persisted;
    return await storage.persist();
  } catch {
    return null;
  }
}

export function formatBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} bytes`;
}
