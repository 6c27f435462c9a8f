// The header check before a download: a GGUF's header (metadata and tensor infos) is fetched by HTTP Range, growing
// the range as the parser asks (readGguf's own steps and GGUF_LIMITS), and parsed; a file this runtime cannot serve
// (an architecture the loader lacks, a tensor type without a decoder, a corrupt header) is refused before its body
// is fetched. A server that ignores Range (200 with the whole body) is read only as far as the header and the rest
// of its body cancelled. A download asks the probe to keep what it read (`keepBytes`): the bytes from 0 and, from a
// server that ignored Range, the rest of that body, so the download continues where the probe ended and no byte is
// fetched twice. Files stored before this check existed (and imported files) are checked from their stored bytes on
// first open (checkStoredHeader). What was verified (architecture, the tensor types present, the chat format the template
// writes) is kept with the stored file and shown on the model rows.
import { readGguf, GGUF_LIMITS, type GgufLimits } from '../model/gguf';
import { BlobSource, type ByteSource } from '../model/byte-source';
import { SUPPORTED_ARCHITECTURES } from '../model/model-config';
import { WEIGHT_FORMATS } from '../common/weight-formats';
import { detectChatFormat, type ChatFormatName, type ChatTemplateField } from '../common/chat-format';
import { DomainError } from '../common/engine-error';

/** What the header check found (kept on the file's completion record; GET /v1/models rows show it as `verified`). */
export interface VerifiedHeader {
  architecture: string;
  /** The tensor types present, in the weight-format table's order. */
  tensor_types: string[];
  /** The chat format the file's template writes (`hermes` when it has none). */
  chat_format: ChatFormatName;
  /** Whether the file carries a chat template (tokenizer.chat_template). */
  chat_template: boolean;
  /** Bytes of the header (metadata and tensor infos). */
  header_bytes: number;
}

export interface HeaderProbe {
  verified: VerifiedHeader;
  /** Bytes the server sent for the check (what was read of its bodies). */
  bytesRead: number;
  /** The file's length as the server gave it. */
  fileBytes: number;
  /** With `keepBytes`: the bytes read from offset 0 (the header and what came with it). */
  head?: Uint8Array;
  /**
   * With `keepBytes`, from a server that ignored Range (200): the rest of its body, from byte `head.byteLength`;
   * the caller reads it to the end or cancels it.
   */
  rest?: ReadableStream<Uint8Array>;
}

const NOT_DOWNLOADED = 'Nothing past its header was downloaded.';

/** A file this runtime cannot serve (400 `unsupported_model_file`); `after` says what became of it. */
function unsupported(url: string, why: string, after = NOT_DOWNLOADED): DomainError {
  return new DomainError('invalid_request', `${url} cannot be served by this runtime: ${why}. ${after}`, { code: 'unsupported_model_file' });
}

function upstream(url: string, why: string): DomainError {
  return new DomainError('upstream', `Could not read the header of ${url}: ${why}`, { code: 'model_download_failed' });
}

const FIRST_RANGE_BYTES = 1 << 20;

/**
 * A ByteSource over the start of a remote file: reads by Range requests, or, when the server answered the first
 * one with the whole body, by reading that body only as far as asked. `close()` cancels what is left of a body.
 */
class RemoteHeaderSource implements ByteSource {
  private chunks: Uint8Array[] = [];
  private have = 0;
  private total = -1;
  private reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  private body: ReadableStream<Uint8Array> | null = null;
  bytesRead = 0;

  constructor(
    readonly name: string,
    private readonly signal: AbortSignal | undefined,
  ) {}

  private async get(range: string): Promise<Response> {
    try {
      return await fetch(this.name, { headers: { range }, cache: 'no-store', signal: this.signal });
    } catch (error) {
      if (error instanceof DOMException && error.name === 'AbortError') throw error;
      throw upstream(this.name, (error as Error).message ?? String(error));
    }
  }

  private async readAll(body: ReadableStream<Uint8Array>, most: number): Promise<void> {
    const reader = body.getReader();
    try {
      while (this.have < most) {
        const { done, value } = await reader.read();
        if (done) break;
        this.push(value);
      }
    } finally {
      void reader.cancel().catch(() => {});
    }
  }

  private push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.have += chunk.byteLength;
    this.bytesRead += chunk.byteLength;
  }

  async size(): Promise<number> {
    if (this.total >= 0) return this.total;
    const response = await this.get(`bytes=0-${FIRST_RANGE_BYTES - 1}`);
    if (!response.body || (response.status !== 206 && response.status !== 200)) {
      void response.body?.cancel().catch(() => {});
      throw upstream(this.name, `HTTP ${response.status}`);
    }
    if (response.status === 206) {
      const total = /\/(\d+)\s*$/.exec(response.headers.get('content-range') ?? '');
      if (!total) {
        void response.body.cancel().catch(() => {});
        throw upstream(this.name, 'the server did not say how long the file is (no Content-Range total)');
      }
      this.total = Number(total[1]);
      await this.readAll(response.body, FIRST_RANGE_BYTES);
    } else {
      // Range ignored: the whole body is coming; keep the stream and read it only as far as the parser asks.
      const length = response.headers.get('content-length');
      if (length === null) {
        void response.body.cancel().catch(() => {});
        throw upstream(this.name, 'the server did not say how long the file is (no Content-Length)');
      }
      this.total = Number(length);
      this.body = response.body;
      this.reader = response.body.getReader();
    }
    return this.total;
  }

  async read(offset: number, length: number): Promise<Uint8Array> {
    const end = offset + length;
    if (end > this.total) throw new Error(`${this.name}: truncated file: needs bytes up to ${end} but the file has ${this.total}`);
    while (this.have < end) {
      if (this.reader) {
        const { done, value } = await this.reader.read();
        if (done) throw upstream(this.name, `the body ended at byte ${this.have} of ${this.total}`);
        this.push(value);
      } else {
        const response = await this.get(`bytes=${this.have}-${end - 1}`);
        if (response.status !== 206 || !response.body) {
          void response.body?.cancel().catch(() => {});
          throw upstream(this.name, `HTTP ${response.status} for a range of the header`);
        }
        const before = this.have;
        await this.readAll(response.body, end);
        if (this.have === before) throw upstream(this.name, 'an empty range answer');
      }
    }
    return this.head().subarray(offset, end);
  }

  /** Every byte read so far, from offset 0. */
  head(): Uint8Array {
    if (this.chunks.length !== 1) {
      const joined = new Uint8Array(this.have);
      let at = 0;
      for (const c of this.chunks) {
        joined.set(c, at);
        at += c.byteLength;
      }
      this.chunks = [joined];
    }
    return this.chunks[0]!;
  }

  /** The rest of a body that ignored Range (from byte `head().byteLength`), handed over instead of cancelled. */
  takeRest(): ReadableStream<Uint8Array> | undefined {
    const { reader, body } = this;
    this.reader = null;
    this.body = null;
    reader?.releaseLock();
    return body ?? undefined;
  }

  async *stream(offset: number, length: number): AsyncIterable<Uint8Array> {
    yield await this.read(offset, length);
  }

  close(): void {
    const reader = this.reader;
    this.reader = null;
    void reader?.cancel().catch(() => {});
  }
}

/** What the runtime can serve of a parsed header; throws `unsupported_model_file` naming what it cannot. */
export function verifyHeader(
  url: string,
  file: { metadata: Record<string, unknown>; tensors: { type: string }[]; dataOffset: number },
  after = NOT_DOWNLOADED,
): VerifiedHeader {
  const architecture = file.metadata['general.architecture'];
  if (typeof architecture !== 'string') throw unsupported(url, 'its header has no general.architecture', after);
  if (!(SUPPORTED_ARCHITECTURES as readonly string[]).includes(architecture)) {
    throw unsupported(url, `architecture "${architecture}" is not supported (supported: ${SUPPORTED_ARCHITECTURES.join(', ')})`, after);
  }
  const present = new Set(file.tensors.map((t) => t.type));
  const template = file.metadata['tokenizer.chat_template'] as ChatTemplateField;
  return {
    architecture,
    tensor_types: WEIGHT_FORMATS.map((f) => f.name as string).filter((n) => present.has(n)),
    chat_format: detectChatFormat(typeof template === 'string' ? template : null).name,
    chat_template: typeof template === 'string' && template.length > 0,
    header_bytes: file.dataOffset,
  };
}

/**
 * Fetches and checks the header of the GGUF at `url` (see the top of this file). Throws a DomainError:
 * `unsupported_model_file` (400) for a file this runtime cannot serve, `model_download_failed` (502) when the
 * header could not be read.
 */
export async function probeGgufHeader(url: string, options: { signal?: AbortSignal; limits?: Readonly<GgufLimits>; keepBytes?: boolean } = {}): Promise<HeaderProbe> {
  const source = new RemoteHeaderSource(url, options.signal);
  try {
    let file;
    try {
      file = await readGguf(source, options.limits ?? GGUF_LIMITS);
    } catch (error) {
      if (error instanceof DomainError || (error instanceof DOMException && error.name === 'AbortError')) throw error;
      // The parser's own refusals: a tensor type without a decoder, a header past the limits, a corrupt header.
      throw unsupported(url, (error as Error).message ?? String(error));
    }
    const verified = verifyHeader(url, file);
    const probe: HeaderProbe = { verified, bytesRead: source.bytesRead, fileBytes: file.fileSize };
    if (options.keepBytes) {
      probe.head = source.head();
      probe.rest = source.takeRest();
    }
    return probe;
  } finally {
    source.close();
  }
}

/**
 * Checks the header of a file already stored (one stored before the header check existed, or imported): the same
 * verdict as before a download, read from the stored bytes. Throws `unsupported_model_file` (400) for a file the
 * runtime cannot serve, saying that it is stored and what to do.
 */
export async function checkStoredHeader(blob: Blob, name: string, limits: Readonly<GgufLimits> = GGUF_LIMITS): Promise<VerifiedHeader> {
  const stored = 'It was stored without a header check (before the runtime had one, or imported) and is kept as it is: delete it (DELETE /v1/models/{id}) and download or import a file this runtime supports.';
  let file;
  try {
    file = await readGguf(new BlobSource(blob, name), limits);
  } catch (error) {
    throw unsupported(name, (error as Error).message ?? String(error), stored);
  }
  return verifyHeader(name, file, stored);
}
