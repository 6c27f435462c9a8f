#!/usr/bin/env node
// `npm run bench`: the engine's speed in headless Chromium, side by side with llama.cpp (@wllama/wllama, wasm) on
// the same GGUF in the same browser. Prints one JSON document on stdout, writes it to .tmp/bench/latest.json and a
// chart a person can look at to bench/report/latest.html. Progress goes to stderr.
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
// Chromium runs with --enable-dawn-features=allow_unsafe_apis,disable_robustness (benchmarks only, never in the
// product; `--robust` leaves it off). Options:
//   --size 20m|100m  --types F16,Q8_0,Q4_0  --no-bundled  --decode-tokens 32  --prefill 128,512  --ttft-tokens 16
//   --paired-rounds 3 (headline: engine and wllama decode in alternation)  --full (every measurement for every model)  --no-ttft-tools  --q8-dot4 (the int8-dot-product matvec experiment)  --profile-steps 3  --no-wllama  --no-engine  --wllama-threads 1  --wllama-gpu-layers 0  --robust  --headline Q8_0  --context-length 1024
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
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
    types: { type: 'string', default: 'F16,Q8_0,Q4_0' },
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
  },
});

const SIZES = {
  '20m': { layers: 6, hidden: 512, intermediate: 1536, heads: 8, kvHeads: 4, headDim: 64 },
  '100m': { layers: 16, hidden: 768, intermediate: 2048, heads: 12, kvHeads: 4, headDim: 64 },
};
const shape = SIZES[opt.size];
if (!shape) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const types = opt.types.split(',').filter(Boolean);
const MODELS_DIR = join(ROOT, '.tmp', 'bench-models');
const log = (message) => process.stderr.write(`[bench] ${message}\n`);
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').trim().split(/\s+/).slice(0, 3).map(Number);

// ---------------------------------------------------------------- models

function generatedModel(type) {
  const name = `qwen3-q${opt.size}-${type.toLowerCase()}`;
  const dir = join(MODELS_DIR, name);
  if (!existsSync(join(dir, 'model.gguf'))) {
    log(`generating ${name} ...`);
    mkdirSync(dir, { recursive: true });
    execFileSync(process.execPath, [
      join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'tools', 'make-test-model', 'cli.ts'),
      '--arch', 'qwen3', '--type', type, '--out', dir, '--seed', '7', '--layers', String(shape.layers), '--hidden', String(shape.hidden),
      '--intermediate', String(shape.intermediate), '--heads', String(shape.heads), '--kv-heads', String(shape.kvHeads),
      '--head-dim', String(shape.headDim), '--merges', '250', '--context-length', '2048',
    ], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
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
        if (!url.pathname.startsWith('/__bench_models/')) return next();
        const file = normalize(join(MODELS_DIR, decodeURIComponent(url.pathname.slice('/__bench_models/'.length))));
        if (!file.startsWith(MODELS_DIR) || !existsSync(file) || !statSync(file).isFile()) {
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
const browser = await chromium.launch({ executablePath, args: flags, headless: true });
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
    // The headline model: engine and wllama decoding in alternation (the fair ratio on a machine whose load moves).
    if (!opt['no-wllama'] && !opt['no-engine'] && m.type === opt.headline && Number(opt['paired-rounds']) > 0) {
      try {
        entry.paired_decode = await page.evaluate((cfg) => window.__bench.paired(cfg), {
          id: `${m.id}-paired`, url: m.url, tokens: Number(opt['decode-tokens']), rounds: Number(opt['paired-rounds']), contextLength, threads: Number(opt['wllama-threads']),
        });
      } catch (error) {
        entry.paired_decode = { error: String(error?.message ?? error).slice(0, 500) };
      }
    }
    entry.load_average_after = loadavg();
    report.models.push(entry);
  }
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
} catch (error) {
  report.error = String(error?.stack ?? error).slice(0, 1000);
  exitCode = 1;
} finally {
  await browser.close().catch(() => {});
  await server.close().catch(() => {});
}
report.load_average_end = loadavg();
report.wall_s = Math.round((Date.now() - started) / 1000);
// The headline fields first.
const ordered = { decode_tok_s: report.decode_tok_s, roofline_fraction: report.roofline_fraction, wllama_decode_tok_s: report.wllama_decode_tok_s, decode_vs_wllama_paired: report.decode_vs_wllama_paired, ...report };
const json = JSON.stringify(ordered, null, 2);
mkdirSync(join(ROOT, '.tmp', 'bench'), { recursive: true });
writeFileSync(join(ROOT, '.tmp', 'bench', 'latest.json'), `${json}\n`);
writeHtmlReport(ordered, join(ROOT, 'bench', 'report', 'latest.html'));
process.stdout.write(`${json}\n`);
log('wrote .tmp/bench/latest.json and bench/report/latest.html');
process.exit(exitCode);

function round(x, digits) {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}
