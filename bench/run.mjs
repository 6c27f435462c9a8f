#!/usr/bin/env node
// `npm run bench`: the engine's speed in headless Chromium, side by side with llama.cpp (@wllama/wllama, wasm) on
// the same GGUF in the same browser. Prints one JSON document on stdout, writes it to .tmp/bench/latest.json and a
// chart a person can look at to .tmp/bench/latest.html. Progress goes to stderr.
//
// Models: the bundled one (public/models/catalog.json) and a generated qwen3 model in F16, Q8_0 and Q4_0
// (generated once into .tmp/bench-models/ and reused). `--size 20m` (the default: a ~19M-parameter model, 6 layers,
// hidden 512, FFN 1536, so that one run stays within ~5 minutes on SwiftShader on a loaded 2-core machine) or
// `--size 100m` (~100M parameters: 16 layers, hidden 768, FFN 2048; F16 decode on SwiftShader is then ~1 tok/s).
// Measures per model: load time from Cache Storage, GPU buffer bytes against weight bytes, decode tok/s after a
// warm-up, prefill tok/s at 128 and 512 prompt tokens, time to first token through /v1/responses (and what holding
// text back for the phase costs), per-kernel GPU time of decode steps; the read-every-byte roofline once per run.
// `roofline_fraction` = weight bytes read per token × decode tok/s / roofline bytes/s.
//
// `--catalog id,id` (or `all`; `npm run check:real-sizes`): for each model of src/model-store/remote-catalog.ts a random-weight
// model of exactly its shape and vocabulary, quantized by llama.cpp as the catalog's file is (bench/real-sizes/build.ts,
// cached in .tmp/real-sizes/), loaded in this Chromium: the engine's logits at a few positions against llama.cpp's
// (node-llama-cpp; within 0.25, argmax equal at >= 90% of the positions that are not near-ties of llama.cpp's own, top
// two within 0.02: a failure makes the exit status 1), the largest GPU buffer
// against the adapter's binding limit, load time, GPU bytes / file bytes, decode and prefill tok/s and wllama's.
// The 3-4B shapes run fewer positions and tokens; gpt-oss-20b (12 GB) gets only its header and limits check
// (bench/real-sizes/header-check.ts). No TTFT or per-kernel profile for these (minutes each on SwiftShader; the
// default run's 0.5B row below gets one decode step's per-kernel profile).
//
// Issue 19's targets in the default run (not with --catalog): the catalog's Qwen2.5-0.5B Q4_0 shape as one more
// `models[]` row through the catalog path above (`name`, `type`, `decode_tok_s`, `prefill_tok_s`, `roofline_fraction`,
// `wllama_decode_tok_s` first; `--catalog-row-decode-tokens` decode tokens, `--catalog-row-paired-rounds` paired
// rounds with wllama, GPU ms per kernel of one decode step; `--no-catalog-row` skips it); every other row's decode
// paired with wllama's (`--paired-models headline`: the headline model only, as before); `sampling_152k`: the GPU
// sampler in this page at 151936 logits (bench/sampling/steps.ts: greedy, temperature, top-k + top-p, top-p, min-p;
// median ms per step read back, GPU ms per kernel) and the slowest case's fraction of the 0.5B row's decode step;
// `prefill_8k_bundled`: an 8192-token prefill of the bundled model in this page (bench/prefill/long.ts: the decoder
// alone, its KV cache sized past the 2048-token context as bench/prefill does; wall seconds, GPU ms per op of the
// last chunk); `targets`: each target's measured value, goal and `met`, with the top kernels where one is not met.
// Chromium runs with --enable-dawn-features=allow_unsafe_apis,disable_robustness (benchmarks only, never in the
// product; `--robust` leaves it off). Options:
//   --size 20m|100m  --types F16,Q8_0,Q4_0 (also llama_ftype names: Q4_K_M, Q5_0, Q5_K_M, ... through llama.cpp's quantizer)  --no-bundled  --decode-tokens 32  --prefill 128,512  --ttft-tokens 16
//   --catalog id,id|all (the catalog's real shapes instead of the generated models: bench/real-sizes, below)  --logits-only
//   --positions N (catalog runs: logit positions; default 8, 3 for the 1B-4B shapes)  --binding-limit-mib 128 (catalog runs: the engine's device capped at WebGPU's default binding size, so weights split)
//   --no-transformers  --transformers-device webgpu|wasm|both  --transformers-models bundled,headline|all|ids  --transformers-decode-tokens 8  --transformers-prefill 128
//     (the WebGPU peer: @huggingface/transformers on the model exported to ONNX, bench/transformers; skipped when not installed)
//   --no-catalog-row  --catalog-row qwen2.5-0.5b-instruct-q4_0  --catalog-row-decode-tokens 4  --catalog-row-paired-rounds 3  --paired-models all|headline
//   --sampling-vocab 151936 (0: none)  --sampling-rounds 7  --prefill-long 8192 (0: none; smaller for a smoke run)
//   --prefill-long-catalog N (0: none): that long prefill and the decode after it on the catalog row's model too
//   --paired-rounds 3 (engine and wllama decode in alternation)  --full (every measurement for every model)  --no-ttft-tools  --q8-dot4 (the int8-dot-product matvec experiment)  --profile-steps 3  --no-wllama  --no-engine  --wllama-threads 1  --wllama-gpu-layers 0  --robust  --headline Q8_0  --context-length 1024
import { execFileSync } from 'node:child_process';
import { cpSync, createReadStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromiumArgs } from '../tools/chromium-flags.mjs';
import { ensureChromium } from '../tools/ensure-chromium.mjs';
import { writeHtmlReport } from './report/html.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: opt } = parseArgs({
  options: {
    size: { type: 'string', default: '20m' },
    types: { type: 'string' },
    catalog: { type: 'string' },
    'logits-only': { type: 'boolean', default: false },
    'binding-limit-mib': { type: 'string' },
    positions: { type: 'string' },
    'no-bundled': { type: 'boolean', default: false },
    'decode-tokens': { type: 'string', default: '32' },
    prefill: { type: 'string', default: '128,512' },
    'ttft-tokens': { type: 'string', default: '16' },
    'profile-steps': { type: 'string', default: '3' },
    'no-wllama': { type: 'boolean', default: false },
    'no-engine': { type: 'boolean', default: false },
    'wllama-threads': { type: 'string', default: '1' },
    'wllama-gpu-layers': { type: 'string', default: '0' },
    robust: { type: 'boolean', default: false },
    headline: { type: 'string', default: 'Q8_0' },
    'context-length': { type: 'string', default: '1024' },
    full: { type: 'boolean', default: false },
    'no-ttft-tools': { type: 'boolean', default: false },
    'q8-dot4': { type: 'boolean', default: false },
    'paired-rounds': { type: 'string', default: '3' },
    'no-transformers': { type: 'boolean', default: false },
    'transformers-device': { type: 'string', default: 'webgpu' },
    'transformers-models': { type: 'string', default: 'bundled,headline' },
    'transformers-decode-tokens': { type: 'string', default: '8' },
    'transformers-prefill': { type: 'string', default: '128' },
    'paired-models': { type: 'string', default: 'all' },
    'no-catalog-row': { type: 'boolean', default: false },
    'catalog-row': { type: 'string', default: 'qwen2.5-0.5b-instruct-q4_0' },
    'catalog-row-decode-tokens': { type: 'string', default: '4' },
    'catalog-row-paired-rounds': { type: 'string', default: '3' },
    'sampling-vocab': { type: 'string', default: '151936' },
    'sampling-rounds': { type: 'string', default: '7' },
    'prefill-long': { type: 'string', default: '8192' },
    'prefill-long-catalog': { type: 'string', default: '0' },
  },
});

const SIZES = {
  '20m': { layers: 6, hidden: 512, intermediate: 1536, heads: 8, kvHeads: 4, headDim: 64 },
  '100m': { layers: 16, hidden: 768, intermediate: 2048, heads: 12, kvHeads: 4, headDim: 64 },
};
const shape = SIZES[opt.size];
if (!shape) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const types = (opt.types ?? (opt.catalog ? '' : 'F16,Q8_0,Q4_0')).split(',').filter(Boolean);
const MODELS_DIR = join(ROOT, '.tmp', 'bench-models');
const REAL_SIZES_DIR = join(ROOT, '.tmp', 'real-sizes');
const ONNX_DIR = join(ROOT, '.tmp', 'bench-onnx');
const log = (message) => process.stderr.write(`[bench] ${message}\n`);
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').trim().split(/\s+/).slice(0, 3).map(Number);

// ---------------------------------------------------------------- models

// The types tools/make-test-model writes itself; any other llama_ftype name (Q4_K_M, Q5_0, Q5_K_M, ...) is an F32
// model of the same shape and seed quantized by llama.cpp's own llama_model_quantize (test/support/ggml-oracle.ts
// llamaQuantize: ../shared/tools/llama-quantize.py on tools/llama-oracle's node-llama-cpp libraries), with the type
// per tensor a published file has.
const MAKE_TEST_MODEL_TYPES = new Set(['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K']);

function makeTestModel(type, dir) {
  execFileSync(process.execPath, [
    join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'tools', 'make-test-model', 'cli.ts'),
    '--arch', 'qwen3', '--type', type, '--out', dir, '--seed', '7', '--layers', String(shape.layers), '--hidden', String(shape.hidden),
    '--intermediate', String(shape.intermediate), '--heads', String(shape.heads), '--kv-heads', String(shape.kvHeads),
    '--head-dim', String(shape.headDim), '--merges', '250', '--context-length', '2048',
  ], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

function generatedModel(type) {
  const name = `qwen3-q${opt.size}-${type.toLowerCase()}`;
  const dir = join(MODELS_DIR, name);
  if (!existsSync(join(dir, 'model.gguf'))) {
    log(`generating ${name} ...`);
    mkdirSync(dir, { recursive: true });
    if (MAKE_TEST_MODEL_TYPES.has(type)) makeTestModel(type, dir);
    else {
      const f32 = join(dir, 'f32');
      makeTestModel('F32', f32);
      const quantized = execFileSync(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), '-e',
        `import('./test/support/ggml-oracle.ts').then((o) => process.stdout.write(o.llamaQuantize(${JSON.stringify(join(f32, 'model.gguf'))}, ${JSON.stringify(type)})))`], { cwd: ROOT, encoding: 'utf8' });
      renameSync(quantized, join(dir, 'model.gguf'));
      cpSync(join(f32, 'hf'), join(dir, 'hf'), { recursive: true });
      rmSync(f32, { recursive: true });
    }
  }
  return { id: name, kind: 'generated', type, url: `/__bench_models/${name}/model.gguf`, path: join(dir, 'model.gguf') };
}

const models = [];
if (!opt['no-bundled']) {
  const catalog = JSON.parse(readFileSync(join(ROOT, 'public', 'models', 'catalog.json'), 'utf8'));
  const bundled = catalog.find((e) => e.bundled) ?? catalog[0];
  if (bundled && existsSync(join(ROOT, 'public', bundled.file))) {
    models.push({ id: `bundled-${bundled.id}`, kind: 'bundled', type: null, url: `/${bundled.file}`, path: join(ROOT, 'public', bundled.file) });
  } else log('the catalog has no bundled model file: skipped');
}
for (const type of types) models.push(generatedModel(type));

// The catalog's real shapes (bench/real-sizes): built (and llama.cpp's logits taken) one at a time, just before
// each is measured, so that one big model is in memory at once.
const realSizeShapes = () => JSON.parse(execFileSync(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), '-e',
  "Promise.all([import('./bench/real-sizes/shapes.ts'), import('./src/model-store/remote-catalog.ts')]).then(([s, c]) => console.log(JSON.stringify(s.REAL_SIZE_SHAPES.map((x) => ({ ...x, catalogBytes: c.remoteCatalog.find((e) => e.id === x.id)?.bytes ?? null })))))"], { cwd: ROOT, encoding: 'utf8' }));
function catalogEntry(shapes, id, option) {
  const shape = shapes.find((s) => s.id === id);
  if (!shape) throw new Error(`${option}: no real-size shape "${id}" (bench/real-sizes/shapes.ts has ${shapes.map((s) => s.id).join(', ')})`);
  return { id, kind: 'catalog', type: shape.ftype, name: shape.name, shape, url: `/__real_sizes/${id}/model.gguf`, path: join(REAL_SIZES_DIR, id, 'model.gguf') };
}
if (opt.catalog) {
  const shapes = realSizeShapes();
  const ids = opt.catalog === 'all' ? shapes.map((s) => s.id) : opt.catalog.split(',').filter(Boolean);
  for (const id of ids) models.push(catalogEntry(shapes, id, '--catalog'));
} else if (!opt['no-catalog-row'] && !opt['no-engine']) {
  // Issue 19's 0.5B row in the default run: the same catalog path, fewer decode tokens, paired rounds with wllama
  // and a per-kernel profile of one decode step.
  const row = catalogEntry(realSizeShapes(), opt['catalog-row'], '--catalog-row');
  if (row.shape.scope === 'header') throw new Error(`--catalog-row: "${row.id}" gets only a header check, no speed`);
  models.push({ ...row, row: true });
}

/** Builds a catalog model (and llama.cpp's reference logits) unless cached; returns its ref.json. */
function buildRealSize(m) {
  const positions = opt.positions ? Number(opt.positions) : m.shape.scope === 'full' ? 8 : 3;
  log(`${m.id}: building the real-size model (cached in .tmp/real-sizes) ...`);
  const out = execFileSync(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'bench', 'real-sizes', 'build.ts'), m.id, '--positions', String(positions)], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const { dir = m.id } = JSON.parse(out.trim().split('\n').pop());
  m.url = `/__real_sizes/${dir}/model.gguf`;
  m.path = join(REAL_SIZES_DIR, dir, 'model.gguf');
  return { ...JSON.parse(readFileSync(join(REAL_SIZES_DIR, dir, 'ref.json'), 'utf8')), dir };
}

/** gpt-oss-20b: the header and limits check alone (bench/real-sizes/header-check.ts). */
function headerCheck(m) {
  return JSON.parse(execFileSync(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'bench', 'real-sizes', 'header-check.ts'), m.id], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }));
}

// ---------------------------------------------------------------- the WebGPU peer (bench/transformers)

/**
 * @huggingface/transformers (onnxruntime-web) on the model exported to ONNX (tools/export-onnx.py, cached in
 * .tmp/bench-onnx/<id>/): installed apart in bench/transformers/node_modules; absent, the rows say it was skipped.
 */
const transformersPeer = {
  installed: existsSync(join(ROOT, 'bench', 'transformers', 'node_modules', '@huggingface', 'transformers', 'package.json')),
  loaded: false,
  skipped: null,
  async attach(page) {
    if (opt['no-transformers']) this.skipped = '--no-transformers';
    else if (!this.installed) this.skipped = 'not installed: npm install --prefix bench/transformers --omit=optional --ignore-scripts --no-audit --no-fund';
    if (this.skipped) {
      log(`transformers.js peer skipped (${this.skipped})`);
      return { skipped: this.skipped };
    }
    try {
      await page.addScriptTag({ type: 'module', url: '/bench/transformers/bench.ts' });
      await page.waitForFunction(() => window.__transformersBench !== undefined, null, { timeout: 60_000 });
      this.loaded = true;
      const version = JSON.parse(readFileSync(join(ROOT, 'bench', 'transformers', 'node_modules', '@huggingface', 'transformers', 'package.json'), 'utf8')).version;
      const ort = JSON.parse(readFileSync(join(ROOT, 'bench', 'transformers', 'node_modules', 'onnxruntime-web', 'package.json'), 'utf8')).version;
      return { library: `@huggingface/transformers ${version}`, onnxruntime_web: ort, device: opt['transformers-device'], dtype: 'fp32' };
    } catch (error) {
      this.skipped = `page module did not load: ${String(error?.message ?? error).slice(0, 300)}`;
      log(`transformers.js peer skipped (${this.skipped})`);
      return { skipped: this.skipped };
    }
  },
  /** The model's ONNX folder (exported unless cached); null and the reason where it cannot be. */
  exportFor(m) {
    const hf = m.kind === 'bundled' ? dirname(m.path) : join(dirname(m.path), 'hf');
    if (!existsSync(join(hf, 'model.safetensors')) || !existsSync(join(hf, 'config.json'))) return { error: `no Hugging Face folder beside ${m.path.slice(ROOT.length + 1)}` };
    const out = join(ONNX_DIR, m.id);
    const refPath = join(out, 'ref.json');
    const fresh = existsSync(refPath) && existsSync(join(out, 'onnx', 'model.onnx')) && statSync(refPath).mtimeMs >= statSync(join(hf, 'model.safetensors')).mtimeMs
      && JSON.parse(readFileSync(refPath, 'utf8')).format_version === 2;
    if (!fresh) {
      log(`${m.id}: exporting to ONNX (tools/export-onnx.py) ...`);
      try {
        execFileSync('/usr/bin/python3', [join(ROOT, 'tools', 'export-onnx.py'), '--model', hf, '--out', out], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      } catch (error) {
        return { error: `export failed (Debian's python3-torch at /usr/bin/python3 needed): ${String(error?.stderr ?? error?.message ?? error).trim().split('\n').slice(-3).join(' | ').slice(0, 400)}` };
      }
    }
    return { id: m.id };
  },
  async measure(page, m, entry, contextLength) {
    entry.transformersjs_decode_tok_s = null;
    entry.transformersjs_prefill_tok_s = null;
    entry.transformersjs_ep = null;
    if (!this.loaded) {
      entry.transformersjs = { skipped: this.skipped };
      return;
    }
    // ORT's WebGPU EP takes seconds per token on SwiftShader here (bench/README.md): by default the bundled model and
    // the headline type only (--transformers-models all, or ids/types).
    const wanted = opt['transformers-models'].split(',').filter(Boolean);
    if (!wanted.includes('all') && !wanted.includes(m.id) && !wanted.includes(m.kind) && !(m.type && wanted.includes(m.type)) && !(wanted.includes('headline') && m.type === opt.headline)) {
      entry.transformersjs = { skipped: `not in --transformers-models ${opt['transformers-models']}` };
      return;
    }
    const exported = this.exportFor(m);
    if (exported.error) {
      entry.transformersjs = { skipped: exported.error };
      return;
    }
    const devices = opt['transformers-device'] === 'both' ? ['webgpu', 'wasm'] : [opt['transformers-device']];
    const cfg = { onnxId: exported.id, ggufUrl: opt['no-engine'] ? undefined : m.url, decodeTokens: Number(opt['transformers-decode-tokens']), prefillTokens: opt['transformers-prefill'].split(',').filter(Boolean).map(Number), rounds: Math.max(1, Number(opt['paired-rounds'])), contextLength, threads: Number(opt['wllama-threads']) };
    const rows = {};
    for (const device of devices) {
      log(`${m.id}: transformers.js (${device}) ...`);
      try {
        rows[device] = await page.evaluate((c) => window.__transformersBench.run(c), { ...cfg, device });
      } catch (error) {
        rows[device] = { device, error: String(error?.message ?? error).slice(0, 800) };
        log(`${m.id}: transformers.js (${device}) failed: ${rows[device].error.slice(0, 300)}`);
        // WebGPU EP failing here: the wasm EP instead, as a labelled row.
        if (device === 'webgpu' && !devices.includes('wasm')) devices.push('wasm');
      }
    }
    entry.transformersjs = rows;
    const used = devices.find((d) => rows[d] && !rows[d].error);
    if (used) {
      const r = rows[used];
      entry.transformersjs_ep = used;
      entry.transformersjs_decode_tok_s = r.decode_tok_s;
      entry.transformersjs_prefill_tok_s = r.prefill?.[0]?.prefill_tok_s ?? null;
      entry.decode_vs_transformersjs_paired = r.paired_decode?.median_engine_over_transformersjs ?? null;
      log(`${m.id}: transformers.js (${used}) decode ${r.decode_tok_s} tok/s, prefill ${entry.transformersjs_prefill_tok_s} tok/s`);
    }
  },
};

// ---------------------------------------------------------------- server and browser

/** Serves .tmp/bench-models at /__bench_models/; the page is cross-origin isolated (wllama may then use threads). */
function benchPlugin() {
  return {
    name: 'bench-files',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
        res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
        const url = new URL(req.url ?? '/', 'http://localhost');
        const [prefix, dir] = url.pathname.startsWith('/__real_sizes/') ? ['/__real_sizes/', REAL_SIZES_DIR] : url.pathname.startsWith('/__bench_onnx/') ? ['/__bench_onnx/', ONNX_DIR] : ['/__bench_models/', MODELS_DIR];
        if (!url.pathname.startsWith(prefix)) return next();
        const file = normalize(join(dir, decodeURIComponent(url.pathname.slice(prefix.length))));
        if (!file.startsWith(dir) || !existsSync(file) || !statSync(file).isFile()) {
          res.statusCode = 404;
          return res.end('not found');
        }
        res.setHeader('content-type', 'application/octet-stream');
        res.setHeader('content-length', String(statSync(file).size));
        createReadStream(file).pipe(res);
      });
    },
  };
}

const benchFlags = opt.robust ? [] : ['--enable-dawn-features=allow_unsafe_apis,disable_robustness'];
const flags = chromiumArgs(benchFlags);
const executablePath = ensureChromium();
const { createServer } = await import('vite');
const { chromium } = await import('playwright-core');
const server = await createServer({
  root: ROOT,
  configFile: false,
  logLevel: 'error',
  clearScreen: false,
  optimizeDeps: { noDiscovery: true, include: [] },
  plugins: [benchPlugin()],
  server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false },
});
await server.listen();
const origin = `http://127.0.0.1:${server.httpServer.address().port}`;
// The catalog shapes (hundreds of MB to GBs) need Cache Storage on disk: a launched browser's context keeps it in
// memory, under a small quota, so those runs (and the default run's 0.5B row) use a persistent profile in
// .tmp/bench-profile-<pid> (removed after).
const PROFILE_DIR = join(ROOT, '.tmp', `bench-profile-${process.pid}`);
const persistent = models.some((m) => m.kind === 'catalog');
if (persistent) rmSync(PROFILE_DIR, { recursive: true, force: true });
const browser = persistent
  ? await chromium.launchPersistentContext(PROFILE_DIR, { executablePath, args: flags, headless: true }).then((context) => ({
      version: () => context.browser()?.version() ?? 'chromium (persistent context)',
      newPage: () => context.newPage(),
      close: () => context.close(),
    }))
  : await chromium.launch({ executablePath, args: flags, headless: true });
const started = Date.now();
const report = {
  bench: 'webgpu-responses',
  date: new Date().toISOString(),
  size: opt.size,
  browser: browser.version(),
  chromium_flags: flags,
  machine: { cpus: availableParallelism(), cpu_model: cpus()[0]?.model, memory_bytes: totalmem() },
  load_average_start: loadavg(),
};
let exitCode = 0;
try {
  const page = await browser.newPage();
  page.on('console', (m) => {
    const text = m.text();
    if (text.startsWith('[bench]')) log(text.slice(8));
    else if (process.env.BENCH_VERBOSE || m.type() === 'error' || m.type() === 'warning') log(`[page ${m.type()}] ${text.slice(0, 300)}`);
  });
  page.on('pageerror', (e) => log(`[page error] ${e.message}`));
  await page.goto(`${origin}/bench/responses/index.html`);
  await page.waitForFunction(() => window.__bench !== undefined, null, { timeout: 120_000 });
  // The wllama module loads beside the engine's (a failure there leaves the engine bench running).
  await page.waitForFunction(() => window.__wllamaBench !== undefined, null, { timeout: 30_000 }).catch(() => log('wllama module did not load'));
  report.cross_origin_isolated = await page.evaluate(() => self.crossOriginIsolated);
  report.transformersjs = await transformersPeer.attach(page);

  log('roofline ...');
  const roofline = await page.evaluate(() => window.__bench.roofline());
  report.adapter = roofline.adapter;
  delete roofline.adapter;
  report.roofline = roofline;
  let roofBytesPerS = roofline.gb_per_s * 1e9;
  log(`roofline ${roofline.gb_per_s} GB/s`);

  if (opt['q8-dot4']) {
    log('Q8_0 matvec: engine kernel vs dot4I8Packed prototype ...');
    report.q8_dot4_experiment = await page.evaluate(() => window.__bench.q8Dot4());
    log(JSON.stringify(report.q8_dot4_experiment.results ?? report.q8_dot4_experiment));
  }
  const contextLength = Number(opt['context-length']);
  const prefillTokens = opt.prefill.split(',').filter(Boolean).map(Number);
  report.models = [];
  for (const m of models) {
    if (m.kind === 'catalog') {
      const entry = await catalogModel(page, m, roofBytesPerS, contextLength);
      if (entry.error || entry.logits_check?.pass_excluding_near_ties === false || entry.header_check?.pass === false) exitCode = 1;
      report.models.push(entry);
      // Kept after each model (a long run stopped part way keeps what finished).
      mkdirSync(join(ROOT, '.tmp', 'bench'), { recursive: true });
      writeFileSync(join(ROOT, '.tmp', 'bench', 'real-sizes.partial.json'), `${JSON.stringify(report, null, 2)}\n`);
      continue;
    }
    // Within the ~5-minute budget only the headline model and the bundled one get every measurement; the other
    // types skip the 512-token prefill and the with-tools TTFT (each ~30-45 s on SwiftShader here) unless --full.
    const complete = opt.full || m.kind === 'bundled' || m.type === opt.headline;
    const prefillFor = complete ? prefillTokens : prefillTokens.filter((t) => t <= 128);
    const entry = { id: m.id, kind: m.kind, type: m.type, file: m.path.slice(ROOT.length + 1), measured: complete ? 'all' : 'reduced (no 512-token prefill, no with-tools TTFT; --full for all)', load_average_before: loadavg() };
    if (!opt['no-engine']) try {
      const r = await page.evaluate(
        (cfg) => window.__bench.model(cfg),
        { id: m.id, url: m.url, decodeTokens: Number(opt['decode-tokens']), prefillTokens: prefillFor, ttftTokens: Number(opt['ttft-tokens']), ttftWithTools: complete && !opt['no-ttft-tools'], profileSteps: Number(opt['profile-steps']), contextLength },
      );
      Object.assign(entry, r);
      entry.roofline_fraction = roofBytesPerS > 0 ? round((r.weight_bytes_per_token * r.decode_tok_s) / roofBytesPerS, 4) : null;
      // The fastest decode step against the roofline: less sensitive to the machine's load than the average.
      entry.roofline_fraction_fastest_step = roofBytesPerS > 0 && r.decode?.min_step_ms ? round((r.weight_bytes_per_token * (1000 / r.decode.min_step_ms)) / roofBytesPerS, 4) : null;
      if (r.decode_profile?.products_weight_gb_s) entry.products_roofline_fraction = round((r.decode_profile.products_weight_gb_s * 1e9) / roofBytesPerS, 4);
    } catch (error) {
      entry.error = String(error?.message ?? error).slice(0, 500);
      exitCode = 1;
    }
    if (!opt['no-wllama']) {
      try {
        log(`${m.id}: wllama ...`);
        const w = await page.evaluate((cfg) => window.__wllamaBench(cfg), {
          url: m.url, decodeTokens: Number(opt['decode-tokens']), prefillTokens: prefillFor, threads: Number(opt['wllama-threads']), gpuLayers: Number(opt['wllama-gpu-layers']), contextLength, verbose: Boolean(process.env.BENCH_VERBOSE),
        });
        entry.wllama = w;
        entry.wllama_decode_tok_s = w.decode_tok_s;
        log(`${m.id}: wllama decode ${w.decode_tok_s} tok/s`);
      } catch (error) {
        entry.wllama = { error: String(error?.message ?? error).slice(0, 500) };
        entry.wllama_decode_tok_s = null;
      }
      entry.decode_vs_wllama = entry.decode_tok_s && entry.wllama_decode_tok_s ? round(entry.decode_tok_s / entry.wllama_decode_tok_s, 3) : null;
    }
    // Engine and wllama decoding in alternation (the fair ratio on a machine whose load moves): every model by
    // default (issue 19's targets are paired medians), the headline model only with --paired-models headline.
    if (!opt['no-wllama'] && !opt['no-engine'] && (opt['paired-models'] === 'all' || m.type === opt.headline) && Number(opt['paired-rounds']) > 0) {
      entry.paired_decode = await pairedDecode(page, m, Number(opt['decode-tokens']), Number(opt['paired-rounds']), contextLength);
    }
    if (m.kind !== 'catalog') await transformersPeer.measure(page, m, entry, contextLength);
    entry.load_average_after = loadavg();
    report.models.push(entry);
  }
  // Issue 19's other targets, measured in this page: the sampler at a 152k vocabulary and an 8k prefill.
  if (!opt.catalog && !opt['no-engine']) await extraTargets(page, report);
  // The roofline again at the end (the machine is shared: its load changes); the best of both is the roofline.
  const again = await page.evaluate(() => window.__bench.roofline());
  report.roofline_end = { gb_per_s: again.gb_per_s, variants: again.variants };
  if (again.gb_per_s * 1e9 > roofBytesPerS) {
    const scale = roofBytesPerS / (again.gb_per_s * 1e9);
    roofBytesPerS = again.gb_per_s * 1e9;
    for (const m of report.models) {
      for (const key of ['roofline_fraction', 'roofline_fraction_fastest_step', 'products_roofline_fraction']) if (typeof m[key] === 'number') m[key] = round(m[key] * scale, 4);
    }
  }
  report.roofline_gb_per_s = round(roofBytesPerS / 1e9, 3);
  const headline = report.models.find((m) => m.kind === 'generated' && m.type === opt.headline) ?? report.models.find((m) => m.decode_tok_s);
  if (headline) {
    report.headline_model = headline.id;
    report.decode_tok_s = headline.decode_tok_s ?? null;
    report.roofline_fraction = headline.roofline_fraction ?? null;
    report.wllama_decode_tok_s = headline.wllama_decode_tok_s ?? null;
    report.decode_vs_wllama_paired = headline.paired_decode?.median_engine_over_wllama ?? null;
  }
  if (!opt.catalog) report.targets = targetsOf(report);
} catch (error) {
  report.error = String(error?.stack ?? error).slice(0, 1000);
  exitCode = 1;
} finally {
  await browser.close().catch(() => {});
  await server.close().catch(() => {});
  if (persistent) rmSync(PROFILE_DIR, { recursive: true, force: true });
}
report.load_average_end = loadavg();
report.wall_s = Math.round((Date.now() - started) / 1000);
// The headline fields first.
const ordered = { decode_tok_s: report.decode_tok_s, roofline_fraction: report.roofline_fraction, wllama_decode_tok_s: report.wllama_decode_tok_s, decode_vs_wllama_paired: report.decode_vs_wllama_paired, targets: report.targets, ...report };
if (report.targets) log(`targets: ${targetsLine(report.targets)}`);
const json = JSON.stringify(ordered, null, 2);
mkdirSync(join(ROOT, '.tmp', 'bench'), { recursive: true });
if (opt.catalog) {
  // The catalog shapes' run leaves the kept report (bench/report/latest.html) to the default bench.
  writeFileSync(join(ROOT, '.tmp', 'bench', 'real-sizes.json'), `${json}\n`);
  log('wrote .tmp/bench/real-sizes.json');
} else {
  writeFileSync(join(ROOT, '.tmp', 'bench', 'latest.json'), `${json}\n`);
  // Beside the JSON, not the tracked bench/report/latest.html: that one is the chart of the newest kept run (runs/),
  // redrawn when a run is kept (`node bench/report/html.mjs bench/report/runs/<run>.json bench/report/latest.html`).
  writeHtmlReport(ordered, join(ROOT, '.tmp', 'bench', 'latest.html'));
  log('wrote .tmp/bench/latest.json and .tmp/bench/latest.html');
}
process.stdout.write(`${json}\n`);
process.exit(exitCode);

/** One catalog shape: build, engine (logits check, load, GPU bytes, decode, prefill), wllama; the issue-19 row fields first. */
async function catalogModel(page, m, roofBytesPerS, contextLength) {
  const full = m.shape.scope === 'full';
  const entry = { name: m.id, model: m.name, type: m.type, kind: 'catalog', scope: m.shape.scope, decode_tok_s: null, prefill_tok_s: null, roofline_fraction: null, wllama_decode_tok_s: null, wllama_prefill_tok_s: null };
  const started = Date.now();
  try {
    if (m.shape.scope === 'header') {
      entry.header_check = headerCheck(m);
      entry.measured = 'header and limits only: the file is ~12 GB, more than this machine can hold in GPU (SwiftShader: CPU) memory';
      return entry;
    }
    const ref = buildRealSize(m);
    Object.assign(entry, { file: m.path.slice(ROOT.length + 1), file_bytes: ref.file_bytes, catalog_file_bytes_approximate: m.shape.catalogBytes, tensor_types: ref.tensor_types, build_s: ref.build_s, load_average_before: loadavg() });
    const decodeTokens = m.row ? Number(opt['catalog-row-decode-tokens']) : full ? 8 : 3;
    const prefillFor = full ? [32] : [12];
    const pairedRounds = m.row && !opt['no-wllama'] ? Number(opt['catalog-row-paired-rounds']) : 0;
    entry.measured = full
      ? `logits at ${ref.tokens.length} positions, ${decodeTokens} decode tokens after a 4-token warm-up, a prefill of ~32 tokens; wllama the same`
      : `reduced (3-4B on a 2-core CPU adapter): logits at ${ref.tokens.length} positions, ${decodeTokens} decode tokens from a one-word chat prompt (its prefill is the prefill speed); wllama ${decodeTokens} tokens and a prefill of ~12`;
    if (m.row) entry.measured += `; the default run's row (--no-catalog-row skips it): GPU ms per kernel of one decode step${pairedRounds > 0 ? `, ${pairedRounds} paired rounds of ${decodeTokens} tokens (engine, wllama alternating)` : ''}`;
    const r = await page.evaluate((cfg) => window.__bench.model(cfg), {
      id: m.id, url: m.url, decodeTokens, prefillTokens: prefillFor, ttftTokens: 0, ttftWithTools: false, noTtft: true, profileSteps: m.row ? 1 : 0, noOpsProfile: true, contextLength, quick: !full, logitsOnly: opt['logits-only'],
      bindingLimitBytes: opt['binding-limit-mib'] ? Number(opt['binding-limit-mib']) * 2 ** 20 : undefined,
      logitsCheck: { tokens: ref.tokens, refUrl: `/__real_sizes/${ref.dir}/ref-logits.f32`, vocab: ref.vocab },
    });
    entry.engine = r;
    entry.load_ms = r.load_from_cache_ms;
    entry.weight_gpu_bytes = r.weight_gpu_bytes;
    entry.gpu_bytes_after_load = r.gpu_memory?.allocated_after_load_bytes ?? null;
    entry.gpu_bytes_over_file_bytes = entry.gpu_bytes_after_load ? round(entry.gpu_bytes_after_load / ref.file_bytes, 3) : null;
    entry.weight_gpu_bytes_over_file_bytes = r.weight_gpu_bytes ? round(r.weight_gpu_bytes / ref.file_bytes, 3) : null;
    entry.decode_tok_s = r.decode_tok_s;
    entry.prefill_tok_s = r.prefill?.[0]?.prefill_tok_s ?? null;
    entry.roofline_fraction = roofBytesPerS > 0 ? round((r.weight_bytes_per_token * r.decode_tok_s) / roofBytesPerS, 4) : null;
    entry.logits_check = r.logits_check;
    entry.max_abs_logit_diff = r.logits_check?.max_abs_diff ?? null;
    entry.largest_buffer = r.largest_buffer;
    if (r.decode_profile) entry.decode_profile = r.decode_profile;
    if (!opt['no-wllama'] && !opt['logits-only']) {
      try {
        log(`${m.id}: wllama ...`);
        const w = await page.evaluate((cfg) => window.__wllamaBench(cfg), { url: m.url, decodeTokens, prefillTokens: prefillFor, threads: Number(opt['wllama-threads']), gpuLayers: Number(opt['wllama-gpu-layers']), contextLength });
        entry.wllama = w;
        entry.wllama_decode_tok_s = w.decode_tok_s;
        entry.wllama_prefill_tok_s = w.prefill?.[0]?.prefill_tok_s ?? null;
      } catch (error) {
        entry.wllama = { error: String(error?.message ?? error).slice(0, 500) };
      }
      entry.decode_vs_wllama = entry.decode_tok_s && entry.wllama_decode_tok_s ? round(entry.decode_tok_s / entry.wllama_decode_tok_s, 3) : null;
    }
    if (pairedRounds > 0 && !opt['logits-only']) {
      log(`${m.id}: paired rounds with wllama ...`);
      entry.paired_decode = await pairedDecode(page, m, decodeTokens, pairedRounds, contextLength);
    }
  } catch (error) {
    entry.error = String(error?.message ?? error).slice(0, 800);
  } finally {
    entry.wall_s = Math.round((Date.now() - started) / 1000);
    entry.load_average_after = loadavg();
    // Cache Storage holds a copy of each file: drop it before the next (big) one.
    await page.evaluate(async (url) => (await caches.open('bench-models')).delete(url), m.url).catch(() => {});
    log(`${m.id}: ${JSON.stringify({ decode_tok_s: entry.decode_tok_s, prefill_tok_s: entry.prefill_tok_s, wllama_decode_tok_s: entry.wllama_decode_tok_s, max_abs_logit_diff: entry.max_abs_logit_diff, error: entry.error })}`);
  }
  return entry;
}

/** Engine and wllama decoding `tokens` in alternation for `rounds` rounds on model `m` (bench/responses pairedDecode). */
async function pairedDecode(page, m, tokens, rounds, contextLength) {
  try {
    return await page.evaluate((cfg) => window.__bench.paired(cfg), { id: `${m.id}-paired`, url: m.url, tokens, rounds, contextLength, threads: Number(opt['wllama-threads']) });
  } catch (error) {
    return { error: String(error?.message ?? error).slice(0, 500) };
  }
}

// ---------------------------------------------------------------- issue 19's targets

/**
 * The sampler at `--sampling-vocab` logits (151936: Qwen2.5's vocabulary) and a `--prefill-long`-token prefill of the
 * bundled model, both in this page (bench/sampling/steps.ts, bench/prefill/long.ts); 0 skips either.
 */
async function extraTargets(page, report) {
  const vocab = Number(opt['sampling-vocab']);
  if (vocab > 0) {
    log(`sampling at ${vocab} logits ...`);
    try {
      const r = await page.evaluate((cfg) => window.__bench.sampling(cfg), { vocab, rounds: Number(opt['sampling-rounds']) });
      const cases = Object.fromEntries(r.rows.map((row) => [row.name, row.median_ms]));
      const worst = r.rows.reduce((a, b) => (b.median_ms > a.median_ms ? b : a));
      // The step it is a fraction of: the 0.5B-shape row's decode step (1000 / decode_tok_s).
      const row = report.models.find((m) => m.kind === 'catalog' && m.decode_tok_s > 0);
      const stepMs = row ? round(1000 / row.decode_tok_s, 1) : null;
      const fraction = stepMs ? round(worst.median_ms / stepMs, 4) : null;
      report.sampling_152k = {
        vocab,
        method: `in this page (Chromium's WebGPU), bench/sampling/steps.ts: logits already on the GPU, one step encoded, submitted and its token read back; median of ${r.rounds} steps after one untimed; GPU ms per kernel of one more step`,
        cases,
        worst_case: worst.name,
        worst_ms: worst.median_ms,
        step_ms: stepMs,
        step_from: row ? `${row.name} decode_tok_s ${row.decode_tok_s}` : 'no 0.5B row in this run (--no-catalog-row)',
        fraction,
        target: 0.05,
        met: fraction === null ? null : fraction < 0.05,
        kernel_ms: Object.fromEntries(r.rows.map((x) => [x.name, x.kernel_ms ?? null])),
        rows: r.rows,
      };
      log(`sampling at ${vocab}: worst ${worst.name} ${worst.median_ms} ms${fraction !== null ? `, ${fraction} of a ${stepMs} ms step` : ''}`);
    } catch (error) {
      report.sampling_152k = { vocab, error: String(error?.message ?? error).slice(0, 500), target: 0.05, met: null };
    }
  }
  const tokens = Number(opt['prefill-long']);
  const bundled = models.find((m) => m.kind === 'bundled');
  if (tokens > 0 && bundled) {
    log(`prefill of ${tokens} tokens on the bundled model ...`);
    try {
      const r = await page.evaluate((cfg) => window.__bench.prefillLong(cfg), { url: bundled.url, tokens });
      report.prefill_8k_bundled = {
        tokens,
        seconds: r.seconds,
        target_s: 60,
        met: r.seconds < 60,
        tok_s: r.tok_s,
        method: `in this page (Chromium's WebGPU), bench/prefill/long.ts as bench/prefill does it: the decoder alone on ${tokens} seeded random ids (no tokenizer), the KV cache sized to ${r.model.kv_cache_positions} positions${r.model.kv_cache_positions > r.model.context ? ` (past the model's ${r.model.context}-token context: speed only)` : ''}, chunks of ${r.chunk_tokens}, after a one-chunk warm-up; GPU ms per op of one more chunk after the prompt`,
        seconds_at_quarters: r.seconds_at_quarters,
        gpu_ms_per_op_last_chunk: r.gpu_ms_per_op_last_chunk,
        decode_after: r.decode_after,
        model: { file: bundled.path.slice(ROOT.length + 1), ...r.model },
      };
    } catch (error) {
      report.prefill_8k_bundled = { tokens, error: String(error?.message ?? error).slice(0, 500), target_s: 60, met: null };
    }
  }
  // --prefill-long-catalog N: the same long prefill, and the decode right after it, on the catalog row's model (the
  // 0.5B shape): what a conversation of N tokens decodes at on a real shape (minutes at a few thousand tokens here).
  const catalogTokens = Number(opt['prefill-long-catalog']);
  const catalog = models.find((m) => m.kind === 'catalog' && m.url);
  if (catalogTokens > 0 && catalog) {
    log(`prefill of ${catalogTokens} tokens on ${catalog.id} ...`);
    try {
      const r = await page.evaluate((cfg) => window.__bench.prefillLong(cfg), { url: catalog.url, tokens: catalogTokens });
      report.prefill_long_catalog = { model: catalog.id, tokens: catalogTokens, seconds: r.seconds, tok_s: r.tok_s, decode_after: r.decode_after, gpu_ms_per_op_last_chunk: r.gpu_ms_per_op_last_chunk, model_shape: r.model };
      log(`${catalog.id}: decode after ${catalogTokens} tokens ${r.decode_after?.tok_s} tok/s`);
    } catch (error) {
      report.prefill_long_catalog = { model: catalog.id, tokens: catalogTokens, error: String(error?.message ?? error).slice(0, 500) };
    }
  }
}

/** Issue 19's done-when, each target with its measured value, the target and whether it is met (null: not measured). */
function targetsOf(report) {
  const topKernels = (profile) => profile?.kernels?.slice(0, 6).map((k) => ({ kernel: k.kernel, ms_per_token: k.ms_per_token, share: k.share, dispatches_per_token: k.dispatches_per_token })) ?? null;
  const rows = report.models.filter((m) => m.kind !== 'catalog' || m.decode_tok_s !== null || m.paired_decode).map((m) => {
    const p = m.paired_decode && !m.paired_decode.error ? m.paired_decode : null;
    const ratio = p ? p.median_engine_over_wllama : (m.decode_vs_wllama ?? null);
    const met = typeof ratio === 'number' && ratio > 0 ? ratio >= 1 : null;
    const row = {
      model: m.id ?? m.name, type: m.type, value: ratio, paired: Boolean(p),
      engine_decode_tok_s: p ? p.median_engine_tok_s : (m.decode_tok_s ?? null),
      wllama_decode_tok_s: p ? p.median_wllama_tok_s : (m.wllama_decode_tok_s ?? null),
      met,
    };
    if (p) row.rounds = `${p.rounds} x ${p.tokens} tokens`;
    if (met === false) {
      row.gpu_ms_per_token = m.decode_profile?.gpu_ms_per_token ?? null;
      row.where_time_goes = topKernels(m.decode_profile);
    }
    return row;
  });
  const s = report.sampling_152k;
  const pf = report.prefill_8k_bundled;
  const targets = {
    decode_vs_wllama: { target: 1.0, what: "engine decode tok/s over wllama's on the same file: the median of paired rounds where the row has them, else one run each", met: rows.length && rows.every((r) => r.met !== null) ? rows.every((r) => r.met) : null, rows },
    sampling_152k: s ? { value: s.fraction ?? null, target: 0.05, what: `the slowest sampler case (${s.worst_case ?? '?'}: ${s.worst_ms ?? '?'} ms at ${s.vocab} logits) over the 0.5B row's decode step (${s.step_ms ?? '?'} ms)`, met: s.met ?? null } : { value: null, target: 0.05, met: null, what: 'not measured (--sampling-vocab 0 or --no-engine)' },
    prefill_8k_bundled: pf ? { value: pf.seconds ?? null, target: 60, unit: 's', tokens: pf.tokens, met: pf.met ?? null } : { value: null, target: 60, unit: 's', met: null, what: 'not measured (--prefill-long 0, --no-bundled or --no-engine)' },
  };
  if (s?.met === false) {
    const worst = s.rows?.find((r) => r.name === s.worst_case);
    targets.sampling_152k.where_time_goes = worst?.kernel_ms ?? null;
  }
  if (pf?.met === false) targets.prefill_8k_bundled.where_time_goes = { gpu_ms_per_op_last_chunk: pf.gpu_ms_per_op_last_chunk?.slice(0, 6) ?? null, seconds_at_quarters: pf.seconds_at_quarters };
  const all = [targets.decode_vs_wllama.met, targets.sampling_152k.met, targets.prefill_8k_bundled.met];
  targets.all_met = all.includes(null) ? (all.includes(false) ? false : null) : all.every(Boolean);
  return targets;
}

function targetsLine(t) {
  const rows = t.decode_vs_wllama.rows.map((r) => `${r.model} ${r.value ?? 'n/a'}x${r.paired ? ' paired' : ''}`).join(', ');
  return `decode vs wllama (>= 1): ${rows || 'n/a'}; sampling ${t.sampling_152k.value ?? 'n/a'} of a step (< 0.05); prefill ${t.prefill_8k_bundled.tokens ?? ''} tokens ${t.prefill_8k_bundled.value ?? 'n/a'} s (< 60); all met: ${t.all_met}`;
}

function round(x, digits) {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}
