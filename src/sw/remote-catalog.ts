// Real published models the model manager offers for download, by URL, with their size and license. Nothing
// fetches them unless a user asks (POST /v1/models/{id}/download); tests never do. Sizes are rounded figures
// (bytesApproximate): they drive the quota check and the UI, and the file's own length is checked on download.
import type { CatalogEntry } from './model-catalog';

const hf = (repo: string, file: string): string => `https://huggingface.co/${repo}/resolve/main/${file}`;

export const remoteCatalog: CatalogEntry[] = [
  {
    id: 'qwen2.5-0.5b-instruct-q4_0',
    aliases: [],
    file: hf('Qwen/Qwen2.5-0.5B-Instruct-GGUF', 'qwen2.5-0.5b-instruct-q4_0.gguf'),
    format: 'gguf',
    bytes: 429_000_000,
    bytesApproximate: true,
    license: 'Apache-2.0',
    bundled: false,
    description: 'Qwen2.5 0.5B Instruct, GGUF Q4_0',
  },
  {
    id: 'qwen2.5-0.5b-instruct-q8_0',
    aliases: [],
    file: hf('Qwen/Qwen2.5-0.5B-Instruct-GGUF', 'qwen2.5-0.5b-instruct-q8_0.gguf'),
    format: 'gguf',
    bytes: 676_000_000,
    bytesApproximate: true,
    license: 'Apache-2.0',
    bundled: false,
    description: 'Qwen2.5 0.5B Instruct, GGUF Q8_0',
  },
  {
    id: 'smollm2-360m-instruct-q8_0',
    aliases: [],
    file: hf('HuggingFaceTB/SmolLM2-360M-Instruct-GGUF', 'smollm2-360m-instruct-q8_0.gguf'),
    format: 'gguf',
    bytes: 386_000_000,
    bytesApproximate: true,
    license: 'Apache-2.0',
    bundled: false,
    description: 'SmolLM2 360M Instruct, GGUF Q8_0',
  },
  {
    id: 'qwen3-0.6b-q8_0',
    aliases: [],
    file: hf('Qwen/Qwen3-0.6B-GGUF', 'Qwen3-0.6B-Q8_0.gguf'),
    format: 'gguf',
    bytes: 639_000_000,
    bytesApproximate: true,
    license: 'Apache-2.0',
    bundled: false,
    description: 'Qwen3 0.6B (thinking), GGUF Q8_0',
  },
  {
    id: 'llama-3.2-1b-instruct-q4_k_m',
    aliases: [],
    file: hf('bartowski/Llama-3.2-1B-Instruct-GGUF', 'Llama-3.2-1B-Instruct-Q4_K_M.gguf'),
    format: 'gguf',
    bytes: 808_000_000,
    bytesApproximate: true,
    license: 'Llama 3.2 Community License',
    bundled: false,
    description: 'Llama 3.2 1B Instruct, GGUF Q4_K_M',
  },
];
