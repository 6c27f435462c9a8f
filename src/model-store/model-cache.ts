// A stored model file as a random-access ByteSource for the engine: the first read opens the file from the model
// file store (src/model-store/model-files.ts), downloading it first when it has a URL and is not stored yet (the bundled
// model on first use); every later read — also offline, also after a browser restart — is served from the stored
// parts as one Blob, which the browser keeps on disk, so a model is never held whole in the JS heap.
import { BlobSource, type ByteSource } from '../model/byte-source';
import { ModelFileError, type FileWriteProgress, type ModelFileStore } from './model-files';

export interface StoredModelFile {
  /** The store key of the file. */
  key: string;
  /** Where to download it from when it is not stored (absent for imported files). */
  url?: string;
  expectedBytes?: number;
  sha256?: string;
}

export class StoredModelFileSource implements ByteSource {
  private blob: Promise<BlobSource> | null = null;

  constructor(
    private readonly store: ModelFileStore,
    private readonly file: StoredModelFile,
    readonly name: string,
    private readonly onProgress?: (p: FileWriteProgress) => void,
  ) {}

  private open(): Promise<BlobSource> {
    this.blob ??= (async () => {
      const { key, url } = this.file;
      // With the quota and header checks, as the model manager's downloads: a file that would not fit is refused
      // (507 insufficient_storage) before any byte is fetched, one the runtime cannot serve (400
      // unsupported_model_file, src/model-store/gguf-header-check.ts) before its body is.
      const blob = url
        ? await this.store.download(key, url, { expectedBytes: this.file.expectedBytes, sha256: this.file.sha256, checkQuota: true, checkHeader: true, onProgress: this.onProgress })
        : await this.store.open(key);
      if (!blob) throw new ModelFileError(`The model file ${this.name} is no longer stored (deleted?)`, 'not_found', 'model_file_missing');
      return new BlobSource(blob, this.name);
    })();
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
