// The models an engine can serve: where each one's files are (a GGUF file, or a Hugging Face directory of
// config.json + tokenizer files + safetensors), its id and aliases, and opening one: reading the headers,
// the config and the tokenizer (no weights yet; those stream to the GPU in upload-weights.ts).
import { EngineError } from './types.ts';
import { type ChatFormatMarkers, DEFAULT_MARKERS } from '../common/chat.ts';
import { toByteSource, type ByteSource } from '../model/byte-source.ts';
import { readGguf } from '../model/gguf.ts';
import { modelConfigFromGguf, modelConfigFromHf, type ModelConfig } from '../model/model-config.ts';
import { readSafetensorsCheckpoint } from '../model/safetensors.ts';
import { ModelTokenizer } from '../model/tokenizer.ts';
import { ggufTensorSources, safetensorsTensorSources, type TensorSource } from '../model/weight-loader.ts';

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

export class ModelRegistry {
  private readonly sources: ModelSource[];

  constructor(sources: readonly ModelSource[]) {
    const seen = new Set<string>();
    for (const s of sources) {
      if (!s.gguf === !s.hfDir) throw new Error(`Model "${s.id}": give exactly one of gguf or hfDir`);
      for (const name of [s.id, ...(s.aliases ?? [])]) {
        if (seen.has(name)) throw new Error(`Model id or alias "${name}" is used twice`);
        seen.add(name);
      }
    }
    this.sources = [...sources];
  }

  list(): readonly ModelSource[] {
    return this.sources;
  }

  /** The source a request's `model` names (id or alias); EngineError 404 when none. */
  resolve(name: string): ModelSource {
    const found = this.sources.find((s) => s.id === name || (s.aliases ?? []).includes(name));
    if (!found) {
      throw new EngineError(`The model \`${name}\` does not exist (available: ${this.sources.map((s) => s.id).join(', ') || 'none'})`, 404, 'model_not_found', 'model');
    }
    return found;
  }
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
  return async (name) => (dir[name] === undefined ? null : toByteSource(dir[name], name));
}

async function readJson(source: ByteSource | null, name: string): Promise<Record<string, unknown> | null> {
  if (!source) return null;
  const bytes = await source.read(0, await source.size());
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`${name}: not valid JSON (${(e as Error).message})`);
  }
}

/** Reads a model's headers, config and tokenizer. */
export async function openModel(source: ModelSource): Promise<OpenedModel> {
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
  const tokenizerConfig = (await readJson(await open('tokenizer_config.json'), 'tokenizer_config.json')) ?? {};
  const generationConfig = (await readJson(await open('generation_config.json').catch(() => null), 'generation_config.json')) ?? undefined;
  const checkpoint = await readSafetensorsCheckpoint(open);
  const config = modelConfigFromHf(configJson, { tensorNames: checkpoint.tensors.map((t) => t.name), generationConfig });
  const tokenizer = ModelTokenizer.fromJson(tokenizerJson, tokenizerConfig);
  const tensors = safetensorsTensorSources(checkpoint);
  return { config, tokenizer, tensors, weightBytes: checkpoint.totalBytes };
}
