// Random-access byte sources for model files: a URL read with HTTP Range requests, a Blob/File, or an ArrayBuffer
// in memory (a file on a Node host's disk: src/node-host/file-source.ts, not `fs.openAsBlob`, whose size is wrong
// past 4 GiB on Node 20). Readers ask for byte ranges; nothing here reads a whole
// file into the JS heap unless the source already is one. A file's host failing (an HTTP error, no size, a
// connection cut short) is a DomainError of kind `upstream`: it says nothing about the file's contents.

import { DomainError } from '../common/engine-error.ts';

/** The file's host failed or could not be reached (502 `model_download_failed`): not a fault of the file. */
function unreachable(message: string): DomainError {
  return new DomainError('upstream', message, { code: 'model_download_failed' });
}

export interface ByteSource {
  /** What to call the file in messages (URL, file name). */
  readonly name: string;
  /** Total size in bytes. */
  size(): Promise<number>;
  /** Exactly `length` bytes from `offset`; throws naming the file when the range runs past its end. */
  read(offset: number, length: number): Promise<Uint8Array>;
  /** The bytes of [offset, offset + length) as a sequence of chunks (any sizes), in order. */
  stream(offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array>;
}

/** Default chunk size when a source streams by repeated reads. */
const STREAM_READ_BYTES = 8 << 20;

function checkRange(name: string, size: number, offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new RangeError(`${name}: bad byte range offset ${offset} length ${length}`);
  }
  if (offset + length > size) {
    throw new Error(`${name}: truncated file: needs bytes up to ${offset + length} but the file has ${size}`);
  }
}

async function* streamByReads(source: ByteSource, offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array> {
  for (let at = offset; at < offset + length; at += STREAM_READ_BYTES) {
    signal?.throwIfAborted();
    yield await source.read(at, Math.min(STREAM_READ_BYTES, offset + length - at));
  }
}

/** A source over bytes already in memory. */
export class ArrayBufferSource implements ByteSource {
  private readonly bytes: Uint8Array;
  constructor(
    data: ArrayBuffer | Uint8Array,
    readonly name = 'buffer',
  ) {
    this.bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  }
  async size(): Promise<number> {
    return this.bytes.byteLength;
  }
  async read(offset: number, length: number): Promise<Uint8Array> {
    checkRange(this.name, this.bytes.byteLength, offset, length);
    return this.bytes.subarray(offset, offset + length);
  }
  stream(offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    return streamByReads(this, offset, length, signal);
  }
}

/** A source over a Blob or File (slices are read on demand). */
export class BlobSource implements ByteSource {
  readonly name: string;
  constructor(
    private readonly blob: Blob,
    name?: string,
  ) {
    this.name = name ?? ('name' in blob && typeof blob.name === 'string' ? blob.name : 'blob');
  }
  async size(): Promise<number> {
    return this.blob.size;
  }
  async read(offset: number, length: number): Promise<Uint8Array> {
    checkRange(this.name, this.blob.size, offset, length);
    return new Uint8Array(await this.blob.slice(offset, offset + length).arrayBuffer());
  }
  stream(offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    return streamByReads(this, offset, length, signal);
  }
}

/** A source over a URL: HEAD (or a 1-byte Range request) for the size, Range requests for the bytes. */
export class UrlSource implements ByteSource {
  private knownSize: number | null = null;
  constructor(
    readonly url: string,
    private readonly fetchImpl: typeof fetch = (input, init) => fetch(input, init),
    readonly name = url,
  ) {}

  async size(): Promise<number> {
    if (this.knownSize !== null) return this.knownSize;
    const response = await this.fetchRange(0, 1);
    const total = /\/(\d+)\s*$/.exec(response.headers.get('content-range') ?? '')?.[1];
    await response.body?.cancel();
    if (total !== undefined) this.knownSize = Number(total);
    else {
      const length = response.headers.get('content-length');
      if (response.status !== 200 || length === null) throw unreachable(`${this.name}: the server gives no file size (no Content-Range or Content-Length)`);
      this.knownSize = Number(length);
    }
    return this.knownSize;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    checkRange(this.name, await this.size(), offset, length);
    if (length === 0) return new Uint8Array(0);
    const response = await this.fetchRange(offset, length);
    const body = new Uint8Array(await response.arrayBuffer());
    if (response.status === 206) {
      if (body.byteLength !== length) throw unreachable(`${this.name}: asked bytes ${offset}+${length}, got ${body.byteLength}`);
      return body;
    }
    // A server without Range support sends the whole file: take the slice (small files only).
    return body.subarray(offset, offset + length);
  }

  async *stream(offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    checkRange(this.name, await this.size(), offset, length);
    if (length === 0) return;
    const response = await this.fetchRange(offset, length, signal);
    if (response.status !== 206 || !response.body) {
      await response.body?.cancel();
      yield* streamByReads(this, offset, length, signal);
      return;
    }
    const reader = response.body.getReader();
    let received = 0;
    let finished = false;
    try {
      // Read to the end of the body (a server sends exactly the range) so the connection stays reusable.
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          finished = true;
          break;
        }
        const take = value.subarray(0, Math.max(0, Math.min(value.byteLength, length - received)));
        received += take.byteLength;
        if (take.byteLength > 0) yield take;
        else if (received >= length) break;
      }
    } finally {
      if (!finished) await reader.cancel().catch(() => undefined);
      reader.releaseLock();
    }
    if (received < length) throw unreachable(`${this.name}: connection ended after ${received} of ${length} bytes from offset ${offset}`);
  }

  private async fetchRange(offset: number, length: number, signal?: AbortSignal): Promise<Response> {
    const response = await this.fetchImpl(this.url, {
      headers: { Range: `bytes=${offset}-${offset + length - 1}` },
      signal,
    });
    if (response.status === 416) throw new Error(`${this.name}: truncated file: range ${offset}+${length} not satisfiable`);
    if (!response.ok) throw unreachable(`${this.name}: HTTP ${response.status} ${response.statusText}`);
    return response;
  }
}

/** A ByteSource for a URL string, Blob/File, or bytes. */
export function toByteSource(input: string | URL | Blob | ArrayBuffer | Uint8Array | ByteSource, name?: string): ByteSource {
  if (typeof input === 'string' || input instanceof URL) return new UrlSource(String(input), undefined, name);
  if (input instanceof Blob) return new BlobSource(input, name);
  if (input instanceof ArrayBuffer || input instanceof Uint8Array) return new ArrayBufferSource(input, name);
  return input;
}
