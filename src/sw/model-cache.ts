// Model files in Cache Storage: the first read of a model file downloads it (reporting progress) into a cache of
// its own, every later read — also offline, also after a browser restart — comes from there. The engine reads the
// result as a Blob, which the browser keeps on disk, so a model is never held whole in the JS heap.
import { BlobSource, type ByteSource } from '../model/byte-source';

export const modelCacheName = 'webgpu-responses-models-v1';

export interface FileProgress {
  file: string;
  loaded: number;
  total: number;
}

export async function cachedModelFile(url: string, onProgress?: (p: FileProgress) => void): Promise<Blob> {
  const cache = await caches.open(modelCacheName);
  const hit = await cache.match(url);
  if (hit) return hit.blob();
  const response = await fetch(url);
  if (!response.ok || !response.body) throw new Error(`Could not download model file ${url}: HTTP ${response.status}`);
  const total = Number(response.headers.get('content-length') ?? 0);
  let loaded = 0;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        loaded += chunk.byteLength;
        onProgress?.({ file: url, loaded, total });
        controller.enqueue(chunk);
      },
    }),
  );
  await cache.put(url, new Response(counted, { headers: { 'content-type': 'application/octet-stream', 'content-length': String(total) } }));
  const stored = await cache.match(url);
  if (!stored) throw new Error(`Model file ${url} could not be stored in Cache Storage (quota?)`);
  return stored.blob();
}

export async function deleteCachedModelFile(url: string): Promise<boolean> {
  return (await caches.open(modelCacheName)).delete(url);
}

/**
 * A model file as a random-access byte source that goes through the model cache: the first read downloads (or
 * finds) the file in Cache Storage, and every read is then served from the cached Blob.
 */
export class CachedModelFileSource implements ByteSource {
  private blob: Promise<BlobSource> | null = null;

  constructor(
    readonly name: string,
    private readonly onProgress?: (p: FileProgress) => void,
  ) {}

  private open(): Promise<BlobSource> {
    this.blob ??= cachedModelFile(this.name, this.onProgress).then((b) => new BlobSource(b, this.name));
    this.blob.catch(() => (this.blob = null));
    return this.blob;
  }

  async size(): Promise<number> {
    return (await this.open()).size();
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    return (await this.open()).read(offset, length);
  }

  async *stream(offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    yield* (await this.open()).stream(offset, length, signal);
  }
}
