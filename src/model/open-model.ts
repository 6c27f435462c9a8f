// Opening a model's files: where they are (a GGUF file, or a Hugging Face directory of config.json + tokenizer
// files + safetensors) and reading the headers, the config and the tokenizer (no weights yet; those stream to the
// GPU in upload-weights.ts). Opening is bounded (the readers' limits, and JSON files read only up to a size), and a
// model whose files failed to open is remembered as failed until they change (their size and a hash of their first
// and last bytes), so a hostile file costs one open, not one per request. The engine's registry of the models it
// serves (src/engine/model-registry.ts) names them by ModelSource.
import type { ChatFormatMarkers } from '../common/chat.ts';
import { DomainError } from '../common/engine-error.ts';
import { toByteSource, type ByteSource } from './byte-source.ts';
import { readGguf } from './gguf.ts';
import { modelConfigFromGguf, modelConfigFromHf, type ModelConfig } from './model-config.ts';
import { readSafetensorsCheckpoint } from './safetensors.ts';
import { ModelTokenizer } from './tokenizer.ts';
import { ggufTensorSources, safetensorsTensorSources, type TensorSource } from './weight-loader.ts';

/** One file: a URL (fetched with Range requests), a Blob/File, bytes in memory, or any ByteSource. */
export type ModelFileInput = string | URL | Blob | ArrayBuffer | Uint8Array | ByteSource;

export interface ModelSource {
  /** The id requests name (`model`). */
  id: string;
  aliases?: string[];
  /** A GGUF file (weights, config, tokenizer and chat template in one). */
  gguf?: ModelFileInput;
  /**
   * A Hugging Face directory: a base URL (files are fetched as `<base>/<name>`) or a map from file name
   * (config.json, tokenizer.json, tokenizer_config.json, model.safetensors or shards + index, ...) to file.
   */
  hfDir?: string | Record<string, ModelFileInput>;
  /** The context length to serve (KV cache size); default min(the model's, 4096). */
  contextLength?: number;
  ownedBy?: string;
  /** Unix seconds (for /v1/models). */
  created?: number;
  /** Template markers for the output parser (defaults: <think>, </think>, <tool_call>, </tool_call>). */
  markers?: Partial<ChatFormatMarkers>;
}

export const DEFAULT_CONTEXT_LENGTH = 4096;

/** A model's files opened: everything but the weights' bytes. */
export interface OpenedModel {
  config: ModelConfig;
  tokenizer: ModelTokenizer;
  tensors: TensorSource[];
  /** Bytes of weights in the files. */
  weightBytes: number;
}

function hfOpener(dir: NonNullable<ModelSource['hfDir']>): (name: string) => Promise<ByteSource | null> {
  if (typeof dir === 'string') {
    const base = dir.endsWith('/') ? dir : `${dir}/`;
    return async (name) => {
      const url = `${base}${name}`;
      // Probe existence first: optional files (index, generation_config) are often absent. Dev servers
      // with an SPA fallback answer a missing file with index.html: an HTML answer counts as absent too.
      const response = await fetch(url, { method: 'HEAD' });
      if (response.status === 404 || (response.headers.get('content-type') ?? '').includes('text/html')) return null;
      return toByteSource(url, name);
    };
  }
  return async (name) => (!Object.hasOwn(dir, name) || dir[name] === undefined ? null : toByteSource(dir[name], name));
}

/** Largest JSON (or template) file of a Hugging Face directory read (tokenizer.json of a 262k vocabulary is ~35 MB). */
const MAX_JSON_BYTES: Record<string, number> = {
  'config.json': 4 << 20,
  'generation_config.json': 1 << 20,
  'tokenizer_config.json': 32 << 20,
  'tokenizer.json': 128 << 20,
  // Newer Hugging Face repos (gpt-oss) ship the chat template as its own file; gpt-oss's is ~16 KiB.
  'chat_template.jinja': 4 << 20,
};

/** A text file of a Hugging Face directory, no longer than its limit; null when absent. */
async function readText(source: ByteSource | null, name: string): Promise<string | null> {
  if (!source) return null;
  const size = await source.size();
  const most = MAX_JSON_BYTES[name] ?? 4 << 20;
  if (size > most) throw new Error(`${name}: ${size} bytes, above the ${most}-byte limit for this file`);
  return new TextDecoder().decode(await source.read(0, size));
}

async function readJson(source: ByteSource | null, name: string): Promise<Record<string, unknown> | null> {
  const text = await readText(source, name);
  if (text === null) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`${name}: not valid JSON (${(e as Error).message})`);
  }
}

/** A remembered failure to open: the files' fingerprint then (null: they cannot tell), the error, when. */
interface OpenFailure {
  fingerprint: string | null;
  error: unknown;
  at: number;
}

/** Failures remembered, by model id and where its files are. */
const openFailures = new Map<string, OpenFailure>();
const MAX_REMEMBERED_FAILURES = 64;
/** Files that cannot be fingerprinted (a directory on a server) are retried after this long. */
const UNFINGERPRINTED_FAILURE_MS = 60_000;
const FINGERPRINT_HEAD_BYTES = 64 << 10;
const FINGERPRINT_TAIL_BYTES = 4 << 10;

function failureKey(source: ModelSource): string {
  const where = source.gguf !== undefined ? `gguf:${typeof source.gguf === 'string' || source.gguf instanceof URL ? String(source.gguf) : toByteSource(source.gguf).name}` : `hf:${typeof source.hfDir === 'string' ? source.hfDir : Object.keys(source.hfDir ?? {}).sort().join(',')}`;
  return `${source.id}\u0000${where}`;
}

/** FNV-1a over bytes, as 8 hex digits. */
function fnv1a(bytes: Uint8Array, hash = 0x811c9dc5): number {
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i], 0x01000193) >>> 0;
  return hash;
}

/** A file's size and a hash of its first 64 KiB and last 4 KiB: changes when the file is replaced or rewritten. */
async function fileFingerprint(file: ByteSource): Promise<string> {
  const size = await file.size();
  const head = await file.read(0, Math.min(size, FINGERPRINT_HEAD_BYTES));
  const tailStart = Math.max(head.byteLength, size - FINGERPRINT_TAIL_BYTES);
  const tail = await file.read(tailStart, size - tailStart);
  return `${size}:${fnv1a(tail, fnv1a(head)).toString(16)}`;
}

/** The fingerprint of a model's files; null when they cannot give one (a server directory, or unreadable now). */
async function modelFingerprint(source: ModelSource): Promise<string | null> {
  try {
    if (source.gguf !== undefined) return await fileFingerprint(toByteSource(source.gguf));
    if (source.hfDir !== undefined && typeof source.hfDir === 'object') {
      const parts: string[] = [];
      for (const name of Object.keys(source.hfDir).sort()) parts.push(`${name}=${await fileFingerprint(toByteSource(source.hfDir[name], name))}`);
      return parts.join(';');
    }
  } catch {
    // Unreadable now: not remembered, opening reports why.
  }
  return null;
}

/** Whether an open failure says something about the files (a bad header), not about reaching them. */
function isFileFault(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'AbortError' || error.name === 'TypeError' || error.name === 'NetworkError') return false;
  // A model file that is missing, could not be reached (an HTTP error, no size, a cut connection: `upstream`
  // from the byte sources) or did not fit is a DomainError of its kind: it says nothing about the file's contents.
  if (error instanceof DomainError) return error.kind === 'invalid_request';
  return true;
}

/** Forgets remembered open failures (tests; a host after replacing files by other means). */
export function forgetOpenFailures(): void {
  openFailures.clear();
}

/**
 * Reads a model's headers, config and tokenizer. A model whose files failed to open (a corrupt or hostile
 * file) fails again at once, with the same error, until its files change.
 */
export async function openModel(source: ModelSource): Promise<OpenedModel> {
  const key = failureKey(source);
  const fingerprint = await modelFingerprint(source);
  const failure = openFailures.get(key);
  if (failure) {
    const same = failure.fingerprint !== null ? failure.fingerprint === fingerprint : Date.now() - failure.at < UNFINGERPRINTED_FAILURE_MS;
    if (same) throw failure.error;
    openFailures.delete(key);
  }
  try {
    return await openModelFiles(source);
  } catch (error) {
    if (isFileFault(error)) {
      if (openFailures.size >= MAX_REMEMBERED_FAILURES) openFailures.delete(openFailures.keys().next().value!);
      openFailures.set(key, { fingerprint, error, at: Date.now() });
    }
    throw error;
  }
}

async function openModelFiles(source: ModelSource): Promise<OpenedModel> {
  if (source.gguf !== undefined) {
    const file = await readGguf(source.gguf);
    const config = modelConfigFromGguf(file);
    const tokenizer = ModelTokenizer.fromGguf(file.metadata);
    const tensors = ggufTensorSources(file);
    return { config, tokenizer, tensors, weightBytes: tensors.reduce((s, t) => s + t.byteLength, 0) };
  }
  const open = hfOpener(source.hfDir!);
  const configJson = await readJson(await open('config.json'), 'config.json');
  if (!configJson) throw new Error(`Model "${source.id}": the Hugging Face directory has no config.json`);
  const tokenizerJson = await readJson(await open('tokenizer.json'), 'tokenizer.json');
  if (!tokenizerJson) throw new Error(`Model "${source.id}": the Hugging Face directory has no tokenizer.json`);
  let tokenizerConfig = (await readJson(await open('tokenizer_config.json'), 'tokenizer_config.json')) ?? {};
  // A separate chat_template.jinja (gpt-oss, repos saved by newer transformers) takes priority over a
  // chat_template in tokenizer_config.json, as transformers reads it.
  const chatTemplateFile = await readText(await open('chat_template.jinja'), 'chat_template.jinja');
  if (chatTemplateFile !== null) tokenizerConfig = { ...tokenizerConfig, chat_template: chatTemplateFile };
  const generationConfig = (await readJson(await open('generation_config.json').catch(() => null), 'generation_config.json')) ?? undefined;
  const checkpoint = await readSafetensorsCheckpoint(open);
  const config = modelConfigFromHf(configJson, { tensorNames: checkpoint.tensors.map((t) => t.name), generationConfig });
  const tokenizer = ModelTokenizer.fromJson(tokenizerJson, tokenizerConfig);
  const tensors = safetensorsTensorSources(checkpoint, config.arch);
  return { config, tokenizer, tensors, weightBytes: checkpoint.totalBytes };
}
