// The WebGPU peer of `npm run bench`: the same model, exported to ONNX by tools/export-onnx.py, run by
// @huggingface/transformers (onnxruntime-web) in the same Chromium page as the engine and wllama. bench/run.mjs adds
// this module to bench/responses/index.html's page only when bench/transformers/node_modules has the package
// (installed apart: see bench/README.md), so the bench runs without it.
//
// `window.__transformersBench.run(cfg)`, per model and execution provider ('webgpu' or 'wasm'):
//   - the load (AutoModelForCausalLM.from_pretrained from /__bench_onnx/<id>/, dtype fp32),
//   - logits of the export's check tokens (one forward) against PyTorch's (ref.json) and the engine's
//     (engine.logits on the GGUF),
//   - prefill: a prompt of about N tokens, generate() with one new token, the time to the first token,
//   - decode: rounds alternating the engine and transformers.js on the same chat prompt (greedy, min = max new
//     tokens), each timed from its first to its last token (a streamer's put() per token): paired medians.
// Timings are the library's generate(), its sampler and KV handling included, as the engine's are its generate().
import { createWebGpuEngine, type WebGpuEngine } from '../../src/engine/webgpu-engine.ts';

const log = (message: string) => console.log(`[bench] ${message}`);
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : null;
};

const PKG = '/bench/transformers/node_modules/';

export interface TransformersBenchConfig {
  /** Folder under /__bench_onnx/ (tools/export-onnx.py's --out). */
  onnxId: string;
  device: 'webgpu' | 'wasm';
  /** The same model's GGUF for the engine's side (logits and the paired decode); none: the peer alone. */
  ggufUrl?: string;
  decodeTokens: number;
  prefillTokens: number[];
  rounds: number;
  contextLength: number;
  /** wasm threads (1: as wllama's default). */
  threads: number;
}

// Loosely typed: the package lives outside the root node_modules (and may be absent), so no types are imported.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
let lib: Any = null;

async function loadLibrary(threads: number): Promise<Any> {
  if (!lib) {
    const url = `${PKG}@huggingface/transformers/dist/transformers.web.js`;
    lib = await import(/* @vite-ignore */ url);
    const env = lib.env;
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = '/__bench_onnx/';
    env.useBrowserCache = false;
    env.backends.onnx.wasm.wasmPaths = `${PKG}onnxruntime-web/dist/`;
  }
  lib.env.backends.onnx.wasm.numThreads = threads;
  return lib;
}

function ids64(ids: readonly number[]): Any {
  return new lib.Tensor('int64', BigInt64Array.from(ids.map((x) => BigInt(x))), [1, ids.length]);
}

/** generate() on these ids with exactly `n` new tokens (greedy); ms of each token's arrival after the call. */
async function generateTimed(model: Any, ids: readonly number[], n: number): Promise<{ tokens: number[]; times: number[]; startMs: number }> {
  const times: number[] = [];
  let calls = 0;
  const streamer = {
    put() {
      // The first put() is the prompt itself.
      if (calls++ > 0) times.push(performance.now());
    },
    end() {},
  };
  const startMs = performance.now();
  const out = await model.generate({
    input_ids: ids64(ids),
    attention_mask: new lib.Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]),
    max_new_tokens: n,
    min_new_tokens: n,
    do_sample: false,
    streamer,
  });
  const all = (out.tolist()[0] as bigint[]).map(Number);
  return { tokens: all.slice(ids.length), times: times.map((t) => t - startMs), startMs };
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = d;
  }
  return m;
}
function argmax(v: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < v.length; i++) if (v[i] > v[best]) best = i;
  return best;
}

async function engineGenerate(engine: WebGpuEngine, model: string, prompt: string, maxTokens: number): Promise<{ tokens: number; decodeMs: number; promptTokens: number }> {
  const times: number[] = [];
  let promptTokens = 0;
  for await (const event of engine.generate({
    model, messages: [{ role: 'user', content: prompt }], tools: [], enableThinking: false, maxTokens, sampling: { temperature: 0, top_p: 1 }, constraint: { kind: 'none' },
  })) {
    if (event.type === 'token') times.push(performance.now());
    else if (event.type !== 'prefill') promptTokens = event.usage.promptTokens;
  }
  return { tokens: times.length, decodeMs: times.length > 1 ? times[times.length - 1] - times[0] : 0, promptTokens };
}

async function run(cfg: TransformersBenchConfig): Promise<Record<string, unknown>> {
  const t = await loadLibrary(cfg.threads);
  const out: Record<string, unknown> = {
    library: `@huggingface/transformers ${t.env.version} (onnxruntime-web ${t.env.backends.onnx.versions?.web ?? '?'}), device ${cfg.device}, dtype fp32${cfg.device === 'wasm' ? `, wasm threads ${cfg.threads}` : ''}`,
    device: cfg.device,
  };
  const ref = await (await fetch(`/__bench_onnx/${cfg.onnxId}/ref.json`)).json();
  const loadStart = performance.now();
  const model = await t.AutoModelForCausalLM.from_pretrained(cfg.onnxId, { device: cfg.device, dtype: 'fp32' });
  out.load_ms = round(performance.now() - loadStart, 1);
  const tokenizer = await t.AutoTokenizer.from_pretrained(cfg.onnxId);
  // The session transformers.js made (it asks ORT for exactly the one execution provider).
  const session = model.sessions?.model;
  out.session_inputs = session?.inputNames?.length ?? null;
  if (cfg.device === 'webgpu') {
    const device = await t.env.backends.onnx.webgpu?.device;
    const info = device?.adapterInfo;
    out.webgpu_adapter = info ? { vendor: info.vendor, architecture: info.architecture, description: info.description } : null;
  }
  let engine: WebGpuEngine | null = null;
  const engineId = `${cfg.onnxId}-engine`;
  try {
    // Logits: one forward of the check tokens (no cache).
    const V: number = ref.vocab;
    const f0 = performance.now();
    const fw = await model({ input_ids: ids64(ref.tokens), attention_mask: new t.Tensor('int64', new BigInt64Array(ref.tokens.length).fill(1n), [1, ref.tokens.length]) });
    const logits = (await fw.logits.to?.('float32') ?? fw.logits).data as Float32Array;
    const forwardMs = performance.now() - f0;
    const perPos: number[] = [];
    let agree = 0;
    for (let p = 0; p < ref.tokens.length; p++) {
      const row = logits.subarray(p * V, (p + 1) * V);
      perPos.push(round(maxAbsDiff(row, ref.logits[p]), 6));
      if (argmax(row) === argmax(ref.logits[p])) agree++;
    }
    const check: Record<string, unknown> = {
      positions: ref.tokens.length, onnx_vs_pytorch_max_abs_diff: Math.max(...perPos), per_position: perPos, argmax_equal: agree,
      tolerance: 1e-4, forward_ms: round(forwardMs, 1),
    };
    check.pass = (check.onnx_vs_pytorch_max_abs_diff as number) < 1e-4 && agree === ref.tokens.length;
    if (cfg.ggufUrl) {
      const cache = await caches.open('bench-models');
      if (!(await cache.match(cfg.ggufUrl))) await cache.add(cfg.ggufUrl);
      const blob = await (await cache.match(cfg.ggufUrl))!.blob();
      engine = createWebGpuEngine({ models: [{ id: engineId, gguf: blob, contextLength: cfg.contextLength }] });
      await engine.load(engineId);
      const { logits: mine } = await engine.logits(engineId, ref.tokens);
      let e = 0;
      let eo = 0;
      let eAgree = 0;
      for (let p = 0; p < ref.tokens.length; p++) {
        e = Math.max(e, maxAbsDiff(mine[p], ref.logits[p]));
        eo = Math.max(eo, maxAbsDiff(mine[p], logits.subarray(p * V, (p + 1) * V)));
        if (argmax(mine[p]) === argmax(logits.subarray(p * V, (p + 1) * V))) eAgree++;
      }
      Object.assign(check, { engine_vs_pytorch_max_abs_diff: round(e, 6), onnx_vs_engine_max_abs_diff: round(eo, 6), onnx_engine_argmax_equal: eAgree });
    }
    out.logits_check = check;
    log(`${cfg.onnxId} (${cfg.device}): logits vs PyTorch ${check.onnx_vs_pytorch_max_abs_diff}, vs engine ${check.onnx_vs_engine_max_abs_diff ?? '-'}`);

    // Prompts through the folder's own tokenizer.json and chat template.
    const chatIds = (text: string): number[] => {
      let ids: number[];
      try {
        ids = Array.from(tokenizer.apply_chat_template([{ role: 'user', content: text }], { add_generation_prompt: true, tokenize: true, return_tensor: false, return_dict: false, enable_thinking: false }) as number[]);
        out.prompt_format = 'chat template (tokenizer_config.json) through tokenizer.json';
      } catch (error) {
        ids = Array.from(tokenizer.encode(text) as number[]);
        out.prompt_format = `plain text through tokenizer.json (chat template failed: ${String(error).slice(0, 120)})`;
      }
      if (ids.length === 0) throw new Error(`the tokenizer gave no ids for ${JSON.stringify(text.slice(0, 40))}`);
      return ids;
    };
    await generateTimed(model, chatIds('Warm up.'), 4);

    // Prefill: ~N prompt tokens, one new token; the time to it.
    const unit = 'The quick brown fox jumps over the lazy dog while seven wizards quietly box. ';
    const prefill: Record<string, unknown>[] = [];
    for (const target of cfg.prefillTokens) {
      let ids = chatIds(`Prompt ${target}: ` + unit.repeat(Math.ceil(target / 4)));
      const body = ids.slice(0, Math.max(0, target - 8));
      ids = [...body, ...ids.slice(-8)].slice(0, target);
      const r = await generateTimed(model, ids, 1);
      const ms = r.times[0];
      prefill.push({ target, prompt_tokens: ids.length, prefill_ms: round(ms, 1), prefill_tok_s: round((ids.length * 1000) / ms) });
      log(`${cfg.onnxId} (${cfg.device}): prefill ${ids.length} tokens ${round((ids.length * 1000) / ms, 1)} tok/s`);
    }
    out.prefill = prefill;

    // Decode: rounds, the engine and transformers.js in alternation on the same user message.
    const peerTokS: number[] = [];
    const engineTokS: number[] = [];
    const ratios: number[] = [];
    let sampleTokens: number[] = [];
    const stepMs: number[] = [];
    if (engine) await engineGenerate(engine, engineId, 'Warm up.', 4);
    for (let r = 0; r < Math.max(1, cfg.rounds); r++) {
      const text = `Round ${r}: tell me a long story about a fox and a dog.`;
      let eTokS = 0;
      if (engine) {
        const e = await engineGenerate(engine, engineId, text, cfg.decodeTokens);
        eTokS = e.decodeMs > 0 ? ((e.tokens - 1) * 1000) / e.decodeMs : 0;
        engineTokS.push(round(eTokS));
        out.engine_prompt_tokens = e.promptTokens;
      }
      const ids = chatIds(text);
      out.prompt_tokens = ids.length;
      const g = await generateTimed(model, ids, cfg.decodeTokens);
      const span = g.times[g.times.length - 1] - g.times[0];
      const pTokS = g.times.length > 1 && span > 0 ? ((g.times.length - 1) * 1000) / span : 0;
      peerTokS.push(round(pTokS));
      for (let i = 1; i < g.times.length; i++) stepMs.push(g.times[i] - g.times[i - 1]);
      sampleTokens = g.tokens;
      if (engine) ratios.push(round(pTokS > 0 ? eTokS / pTokS : 0));
      log(`${cfg.onnxId}: paired round ${r}: engine ${engine ? round(eTokS, 2) : '-'} tok/s, transformers.js (${cfg.device}) ${round(pTokS, 2)} tok/s`);
    }
    out.decode_tokens = cfg.decodeTokens;
    out.decode_tok_s_rounds = peerTokS;
    out.decode_tok_s = round(median(peerTokS) ?? 0);
    // Steps of one round alike (no shader compiled per new KV length) or not: the spread of the steps.
    out.decode_step_ms = stepMs.length ? { min: round(Math.min(...stepMs), 1), median: round(median(stepMs)!, 1), max: round(Math.max(...stepMs), 1) } : null;
    out.greedy_tokens = sampleTokens.slice(0, 16);
    if (engine) out.paired_decode = { rounds: ratios.length, engine_tok_s: engineTokS, transformersjs_tok_s: peerTokS, engine_over_transformersjs: ratios, median_engine_over_transformersjs: round(median(ratios) ?? 0), median_engine_tok_s: round(median(engineTokS) ?? 0) };
  } finally {
    await model.dispose?.();
    await engine?.dispose();
  }
  return out;
}

declare global {
  interface Window {
    __transformersBench?: { run: (cfg: TransformersBenchConfig) => Promise<Record<string, unknown>> };
  }
}

window.__transformersBench = { run };
