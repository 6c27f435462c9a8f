// A model file on a Node host's disk as a ByteSource (src/model/byte-source.ts), read at offsets through a file
// handle. Not `fs.openAsBlob`: Node 20's Blob over a file of 4 GiB or more reports its size modulo 2^32 (a 12 GB
// gpt-oss-20b GGUF read as 3.5 GB, its header then refused as corrupt), so every file a Node host opens (the server,
// tools/cli.mjs, the benches) goes through here.
import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { ByteSource } from '../model/byte-source.ts';

/** Bytes a stream reads at a time. */
const STREAM_READ_BYTES = 8 << 20;

export class FileSource implements ByteSource {
  readonly name: string;
  private sizeRead: Promise<number> | null = null;

  constructor(
    readonly path: string,
    name?: string,
  ) {
    this.name = name ?? basename(path);
  }

  size(): Promise<number> {
    this.sizeRead ??= stat(this.path).then((s) => s.size);
    return this.sizeRead;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
      throw new RangeError(`${this.name}: bad byte range offset ${offset} length ${length}`);
    }
    const size = await this.size();
    if (offset + length > size) throw new Error(`${this.name}: truncated file: needs bytes up to ${offset + length} but the file has ${size}`);
    const handle = await open(this.path, 'r');
    try {
      const out = new Uint8Array(length);
      for (let done = 0; done < length; ) {
        const { bytesRead } = await handle.read(out, done, length - done, offset + done);
        if (bytesRead === 0) throw new Error(`${this.name}: the file ended at ${offset + done} while reading up to ${offset + length}`);
        done += bytesRead;
      }
      return out;
    } finally {
      await handle.close();
    }
  }

  async *stream(offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    for (let at = offset; at < offset + length; at += STREAM_READ_BYTES) {
      signal?.throwIfAborted();
      yield await this.read(at, Math.min(STREAM_READ_BYTES, offset + length - at));
    }
  }
}

/** The file at `path` as a ByteSource. */
export function fileSource(path: string, name?: string): FileSource {
  return new FileSource(path, name);
}
