// Real published models the model manager offers for download, by URL, with their size and license. Nothing
// fetches them unless a user asks (POST /v1/models/{id}/download); tests never do. Sizes are rounded figures
// (bytesApproximate): they drive the quota check and the UI, and the file's own length is checked on download.
// `architecture` and `expectedFormat` say what the file should be (its general.architecture, the chat format its
// template writes); the download's header check (gguf-header-check.ts) verifies the file and the rows show both.
//
// Checksums: the entry format has `sha256`, and the download path (model-files.ts `complete`) verifies it when
// set, discarding a copy that does not match (502 model_checksum_mismatch). These entries leave it unset: the
// real values need the real files (the Hub shows each file's SHA-256 as its LFS object id), and none was
// fetched to compute them. Set `sha256: '<64 hex digits>'` on an entry once its file's hash is known.
//
// The Content-Security-Policy of the app's pages (index.html, examples/web-ide/) is built here too, since its
// connect-src names the hosts this catalog downloads from.
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
    architecture: 'qwen2',
    expectedFormat: 'hermes',
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
    architecture: 'qwen2',
    expectedFormat: 'hermes',
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
    architecture: 'llama',
    expectedFormat: 'hermes',
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
    architecture: 'qwen3',
    expectedFormat: 'hermes',
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
    architecture: 'llama',
    expectedFormat: 'llama3',
  },
  {
    // bartowski's llama.cpp quantization (the file name and its ~722 MB as that repository's listing and a
    // perplexity comparison of it give them). Gemma 3's 1152-wide rows are not multiples of 256, so a K-quant file
    // mixes fallback types; Q4_0 (with Q4_1 rows) is the common small file.
    id: 'gemma-3-1b-it-q4_0',
    aliases: [],
    file: hf('bartowski/google_gemma-3-1b-it-GGUF', 'google_gemma-3-1b-it-Q4_0.gguf'),
    format: 'gguf',
    bytes: 722_000_000,
    bytesApproximate: true,
    license: 'Gemma Terms of Use',
    bundled: false,
    description: 'Gemma 3 1B Instruct, GGUF Q4_0',
    architecture: 'gemma3',
    expectedFormat: 'gemma3',
  },
  {
    // Phi-4-mini is converted as llama.cpp's phi3 architecture; its template's <|tool|> block makes it the phi4
    // chat format. The file name follows bartowski's naming (microsoft_<model>-<quant>.gguf, as on his
    // Phi-4-mini-reasoning files); the size is the rounded Q4_K_M figure for a 3.8B model.
    id: 'phi-4-mini-instruct-q4_k_m',
    aliases: [],
    file: hf('bartowski/microsoft_Phi-4-mini-instruct-GGUF', 'microsoft_Phi-4-mini-instruct-Q4_K_M.gguf'),
    format: 'gguf',
    bytes: 2_490_000_000,
    bytesApproximate: true,
    license: 'MIT',
    bundled: false,
    description: 'Phi-4-mini Instruct, GGUF Q4_K_M',
    architecture: 'phi3',
    expectedFormat: 'phi4',
  },
  {
    // The file name and 1.92 GB as bartowski's SmolLM3-3B listing gives them. ChatML with <tool_call>: hermes.
    id: 'smollm3-3b-q4_k_m',
    aliases: [],
    file: hf('bartowski/HuggingFaceTB_SmolLM3-3B-GGUF', 'SmolLM3-3B-Q4_K_M.gguf'),
    format: 'gguf',
    bytes: 1_920_000_000,
    bytesApproximate: true,
    license: 'Apache-2.0',
    bundled: false,
    description: 'SmolLM3 3B (thinking), GGUF Q4_K_M',
    architecture: 'smollm3',
    expectedFormat: 'hermes',
  },
  {
    // ggml-org's MXFP4 conversion (experts MXFP4, as released). The size is the rounded figure public listings give
    // for the MXFP4 GGUF of gpt-oss-20b (12.1 GB); the download checks the server's length.
    id: 'gpt-oss-20b-mxfp4',
    aliases: ['gpt-oss-20b'],
    file: hf('ggml-org/gpt-oss-20b-GGUF', 'gpt-oss-20b-mxfp4.gguf'),
    format: 'gguf',
    bytes: 12_100_000_000,
    bytesApproximate: true,
    license: 'Apache-2.0',
    bundled: false,
    description: 'gpt-oss-20b (mixture of experts, Harmony format), GGUF MXFP4',
    architecture: 'gpt-oss',
    expectedFormat: 'harmony',
    minGpuMemoryBytes: 16 * 2 ** 30,
  },
];

/** The origins the catalog's files are on (what a page's connect-src must allow besides 'self'). */
export function catalogOrigins(catalog: readonly CatalogEntry[] = remoteCatalog): string[] {
  const origins = new Set<string>();
  for (const entry of catalog) {
    if (/^https?:\/\//.test(entry.file)) origins.add(new URL(entry.file).origin);
  }
  return [...origins].sort();
}

/**
 * The app pages' Content-Security-Policy: scripts, styles, workers and fetches from the app's own origin only (no
 * inline script or style, no eval), connect-src 'self' plus the catalog's hosts, no plugins, no <base> or form
 * posts elsewhere. `header: true` adds `frame-ancestors 'self'`, which only a response header can set (a
 * `<meta>` policy ignores it): tools/serve-app.mjs, vite.config.ts and the service worker's app shell send it.
 */
export function appContentSecurityPolicy({ header = false }: { header?: boolean } = {}): string {
  const directives = [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self' ${catalogOrigins().join(' ')}`.trim(),
    "worker-src 'self'",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ];
  if (header) directives.push("frame-ancestors 'self'");
  return directives.join('; ');
}
