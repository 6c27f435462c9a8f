// The llama.cpp side of `npm run bench`: the same GGUF decoded by @wllama/wllama (llama.cpp compiled to wasm) in
// the same browser page. CPU only (n_gpu_layers 0: wllama 3 would otherwise offload to WebGPU), single-threaded
// by default (n_threads 1; the page is served cross-origin isolated so a multi-threaded run is possible with
// `threads`). The wasm file is served by Vite from node_modules. Decode and prefill speeds are llama.cpp's own
// timings (`predicted_per_second`, `prompt_per_second`) of a greedy completion with ignore_eos, after a warm-up;
// the wall time of the decode is reported beside them.
import { Wllama } from '@wllama/wllama';
import { readGguf } from '../../src/model/gguf.ts';

/** GPT-2's byte -> printable character map, inverted: the byte each character of a byte-level BPE token stands for. */
function byteLevelDecoder(): Map<string, number> {
  const bytes: number[] = [];
  for (let b = 33; b <= 126; b++) bytes.push(b);
  for (let b = 161; b <= 172; b++) bytes.push(b);
  for (let b = 174; b <= 255; b++) bytes.push(b);
  const chars = bytes.map((b) => b);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(256 + n++);
    }
  }
  return new Map(bytes.map((b, i) => [String.fromCodePoint(chars[i]), b]));
}

/**
 * logit_bias that bans every token whose bytes are not plain ASCII: a random-weight model otherwise emits lone
 * UTF-8 continuation bytes, and llama.cpp's server (inside wllama) fails to serialise the completion as JSON.
 * Decode speed does not depend on which tokens come out.
 */
export async function asciiOnlyBias(blob: Blob): Promise<Record<string, number>> {
  const gguf = await readGguf(blob);
  const tokens = gguf.metadata['tokenizer.ggml.tokens'] as unknown as string[] | undefined;
  const model = String(gguf.metadata['tokenizer.ggml.model'] ?? '');
  const types = gguf.metadata['tokenizer.ggml.token_type'] as unknown as number[] | undefined;
  const bias: Record<string, number> = {};
  if (!Array.isArray(tokens)) return bias;
  const decoder = byteLevelDecoder();
  tokens.forEach((token, id) => {
    if (types && types[id] === 3) return; // control tokens
    let ascii = true;
    if (model === 'gpt2') {
      for (const ch of token) {
        const b = decoder.get(ch);
        if (b === undefined || b >= 0x80) ascii = false;
      }
    } else {
      const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(token);
      ascii = m ? parseInt(m[1], 16) < 0x80 : /^[\x00-\x7f\u2581]*$/.test(token);
    }
    if (!ascii) bias[String(id)] = -100;
  });
  return bias;
}

export interface WllamaBenchConfig {
  url: string;
  decodeTokens: number;
  prefillTokens: number[];
  threads: number;
  /** Layers llama.cpp offloads to its WebGPU backend (0: CPU only, the default). */
  gpuLayers?: number;
  contextLength: number;
  verbose?: boolean;
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** A loaded wllama on this GGUF Blob and a greedy completion with llama.cpp's timings (for paired runs). */
export async function openWllama(blob: Blob, options: { threads: number; contextLength: number; gpuLayers?: number }) {
  const wllama = new Wllama({ default: '/node_modules/@wllama/wllama/esm/wasm/wllama.wasm' }, { suppressNativeLog: true });
  await wllama.loadModel([blob], { n_ctx: options.contextLength, n_threads: options.threads, n_gpu_layers: options.gpuLayers ?? 0, n_batch: 512 });
  const logitBias = await asciiOnlyBias(blob);
  return {
    decodeTokS: async (prompt: string, maxTokens: number): Promise<number | null> => {
      const r = await wllama.createCompletion({ prompt, max_tokens: maxTokens, temperature: 0, ignore_eos: true, seed: 1, logit_bias: logitBias as never });
      return r.timings ? r.timings.predicted_per_second : null;
    },
    exit: () => wllama.exit(),
  };
}

async function wllamaBench(cfg: WllamaBenchConfig): Promise<Record<string, unknown>> {
  const cache = await caches.open('bench-models');
  if (!(await cache.match(cfg.url))) await cache.add(cfg.url);
  const blob = await (await cache.match(cfg.url))!.blob();
  const wllama = new Wllama({ default: '/node_modules/@wllama/wllama/esm/wasm/wllama.wasm' }, { suppressNativeLog: !cfg.verbose });
  const loadStart = performance.now();
  try {
    await wllama.loadModel([blob], { n_ctx: cfg.contextLength, n_threads: cfg.threads, n_gpu_layers: cfg.gpuLayers ?? 0, n_batch: 512 });
    const loadMs = performance.now() - loadStart;
    const logitBias = await asciiOnlyBias(blob);
    const complete = async (prompt: string, maxTokens: number) => {
      const t0 = performance.now();
      const r = await wllama.createCompletion({ prompt, max_tokens: maxTokens, temperature: 0, ignore_eos: true, seed: 1, logit_bias: logitBias as never }); // wllama's typings intersect two logit_bias shapes; the server takes the OpenAI map
      return { r, wallMs: performance.now() - t0 };
    };
    await complete('Warm up.', 4);
    const { r, wallMs } = await complete('Tell me a long story about a fox and a dog.', cfg.decodeTokens);
    const t = r.timings;
    const prefill: Record<string, unknown>[] = [];
    const unit = 'The quick brown fox jumps over the lazy dog while seven wizards quietly box. ';
    for (const target of cfg.prefillTokens) {
      // Prompt of about `target` tokens: ~2.5 characters per token to start, then the length scaled by what
      // llama.cpp reports (up to twice: a real vocabulary packs 4-5 characters in a token, a generated byte-level
      // one ~1); cut by characters, so short targets are reached too; a distinct first word each time so the prompt
      // cache does not apply.
      const textOf = (label: string, chars: number) => `${label} ${target}: ` + unit.repeat(Math.ceil(chars / unit.length) + 1).slice(0, Math.max(1, chars));
      let chars = Math.round(target * 2.5);
      let p = (await complete(textOf('Prompt', chars), 1)).r.timings;
      for (const label of ['Again', 'Once more']) {
        if (!p || Math.abs(p.prompt_n + p.cache_n - target) <= target * 0.15) break;
        chars = Math.round((chars * target) / (p.prompt_n + p.cache_n));
        p = (await complete(textOf(label, chars), 1)).r.timings;
      }
      prefill.push({ target, prompt_tokens: p ? p.prompt_n + p.cache_n : null, cached_tokens: p?.cache_n ?? null, prefill_ms: p ? round(p.prompt_ms, 2) : null, prefill_tok_s: p ? round(p.prompt_per_second) : null });
    }
    return {
      library: `@wllama/wllama (llama.cpp ${Wllama.getLibllamaVersion()}) wasm, ${cfg.gpuLayers ? `WebGPU backend (n_gpu_layers ${cfg.gpuLayers})` : 'CPU only (n_gpu_layers 0)'}, n_threads ${cfg.threads}, multi-thread build ${cfg.threads > 1 ? 'if isolated' : 'off'}`,
      load_ms: round(loadMs, 1),
      banned_non_ascii_tokens: Object.keys(logitBias).length,
      decode_tokens: t?.predicted_n ?? null,
      decode_tok_s: t ? round(t.predicted_per_second) : null,
      decode_wall_ms: round(wallMs, 1),
      decode_prompt_tok_s: t ? round(t.prompt_per_second) : null,
      prefill,
    };
  } finally {
    await wllama.exit();
  }
}

declare global {
  interface Window {
    __wllamaBench?: (cfg: WllamaBenchConfig) => Promise<Record<string, unknown>>;
  }
}

window.__wllamaBench = wllamaBench;
