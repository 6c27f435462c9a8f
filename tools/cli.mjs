#!/usr/bin/env node
// webgpu-responses command line (package.json `bin`, also `npm run cli --`):
//   webgpu-responses logits   --model <file|dir|url> --tokens 1,2,3 [--json]
//   webgpu-responses generate --model <file|dir|url> --prompt "..." [--system "..."] [--max-tokens N] [--temperature 0] [--json]
//   webgpu-responses serve [--port 8080] [--host 127.0.0.1] [--model [ID=]FILE|DIR|URL …] [--api-key KEY]
//                          [--upstream URL [--upstream-api-key KEY]] [--store DIR] [--context-length N] [--allow-origin O …]
//     The Responses API on node:http (src/node-host), the engine on Dawn; prints `listening on URL` on stdout once
//     the models are loaded; SIGINT/SIGTERM shut it down gracefully.
// Options: --backend chromium (default: the engine in headless Chromium, the page served by Vite) or node
// (the engine in this Node process on Dawn, the `webgpu` package); --context-length N (KV cache size).
// A model is a GGUF file, a Hugging Face directory (config.json, tokenizer files, safetensors) or a URL of
// either (a directory URL ends with /). The work itself is src/cli/cli-main.ts.
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

const USAGE = `usage:
  webgpu-responses logits   --model <file|dir|url> --tokens 1,2,3 [--json]
  webgpu-responses generate --model <file|dir|url> --prompt "..." [--system "..."] [--max-tokens N] [--temperature 0] [--json]
  webgpu-responses serve    [--port 8080] [--host 127.0.0.1] [--model [ID=]FILE|DIR|URL ...] [--api-key KEY]
                            [--upstream URL] [--upstream-api-key KEY] [--store DIR (default ~/.webgpu-responses/store)]
                            [--context-length N] [--allow-origin ORIGIN ...] [--log-requests FILE.jsonl]
                            [--reasoning-events openai|open-responses]
                            (the API on Node, the engine on Dawn)
options: --backend chromium|node (default chromium), --context-length N,
  --bench-flags (Chromium: --enable-dawn-features=allow_unsafe_apis,disable_robustness; benchmarks only),
  --profile (generate: GPU ms per op of one prefill step and one decode step, in the JSON)`;

function fail(message) {
  process.stderr.write(`webgpu-responses: ${message}\n${USAGE}\n`);
  process.exit(2);
}

if (process.argv[2] === 'serve') await serveCommand(process.argv.slice(3)); // runs until SIGINT/SIGTERM

/** Dawn needs the Vulkan loader and an ICD at process start: when none is set, rerun this command over SwiftShader. */
function needsSwiftShaderRerun() {
  return !process.env.VK_ICD_FILENAMES && !process.env.WEBGPU_RESPONSES_CLI_CHILD && existsSync(SWIFTSHADER_ICD);
}
function swiftShaderEnv() {
  return {
    ...process.env,
    WEBGPU_RESPONSES_CLI_CHILD: '1',
    VK_ICD_FILENAMES: SWIFTSHADER_ICD,
    LD_LIBRARY_PATH: ['/usr/lib/chromium', process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
  };
}

async function serveCommand(args) {
  let opts;
  try {
    opts = parseArgs({
      args,
      allowPositionals: false,
      options: {
        port: { type: 'string', default: '8080' },
        host: { type: 'string', default: '127.0.0.1' },
        model: { type: 'string', multiple: true, default: [] },
        'api-key': { type: 'string' },
        upstream: { type: 'string' },
        'upstream-api-key': { type: 'string' },
        store: { type: 'string' },
        'context-length': { type: 'string' },
        'allow-origin': { type: 'string', multiple: true, default: [] },
        'keep-alive-ms': { type: 'string' },
        'log-requests': { type: 'string' },
        'reasoning-events': { type: 'string', default: 'openai' },
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    fail(error.message);
  }
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail('--port must be a port number (0: any free port)');
  const contextLength = opts['context-length'] === undefined ? undefined : Number(opts['context-length']);
  if (contextLength !== undefined && !(Number.isInteger(contextLength) && contextLength > 0)) fail('--context-length must be a positive integer');
  if (opts.upstream !== undefined && !/^https?:\/\//.test(opts.upstream)) fail('--upstream must be an http(s) URL');
  if (opts['api-key'] === '') fail('--api-key must not be empty');
  if (opts['reasoning-events'] !== 'openai' && opts['reasoning-events'] !== 'open-responses') fail('--reasoning-events must be openai or open-responses');

  if (needsSwiftShaderRerun()) {
    const child = spawn(process.execPath, process.argv.slice(1), { stdio: 'inherit', env: swiftShaderEnv() });
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
    const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? 1)));
    process.exit(code);
  }

  const out = (line) => process.stdout.write(`${line}\n`);
  const err = (line) => process.stderr.write(`webgpu-responses: ${line}\n`);
  let served;
  try {
    const main = await loadServeMain();
    const { create, globals } = await import('webgpu');
    Object.assign(globalThis, globals);
    const gpu = create([]);
    // Dawn crashes if this object is collected while its devices live: held for the life of the process.
    globalThis.__webgpuResponsesGpu = gpu;
    served = await main.runServe(
      {
        port,
        host: opts.host,
        models: opts.model,
        apiKey: opts['api-key'],
        upstream: opts.upstream,
        upstreamApiKey: opts['upstream-api-key'],
        storeDir: opts.store,
        contextLength,
        allowOrigins: opts['allow-origin'],
        logRequests: opts['log-requests'],
        keepAliveMs: opts['keep-alive-ms'] === undefined ? undefined : Number(opts['keep-alive-ms']),
        reasoningEvents: opts['reasoning-events'],
      },
      gpu,
      { out, err },
    );
    main.exitOnSignals(served, { out, err });
  } catch (error) {
    err(error?.message ?? String(error));
    process.exit(1);
  }
  await new Promise(() => {}); // the server runs until a signal ends the process (exitOnSignals)
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    model: { type: 'string' },
    tokens: { type: 'string' },
    prompt: { type: 'string' },
    system: { type: 'string' },
    'max-tokens': { type: 'string', default: '64' },
    temperature: { type: 'string', default: '0' },
    'context-length': { type: 'string' },
    backend: { type: 'string', default: 'chromium' },
    json: { type: 'boolean', default: false },
    'bench-flags': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const name = positionals[0];
if (name !== 'logits' && name !== 'generate') fail(`unknown command ${JSON.stringify(name ?? '')}`);
if (!values.model) fail('--model is required');
if (values.backend !== 'chromium' && values.backend !== 'node') fail('--backend must be chromium or node');
const contextLength = values['context-length'] === undefined ? undefined : Number(values['context-length']);

/** @type {import('../src/cli/cli-main.ts').CliCommand} */
let command;
if (name === 'logits') {
  if (!values.tokens) fail('logits needs --tokens 1,2,3');
  const tokens = values.tokens.split(',').map((t) => Number(t.trim()));
  if (tokens.some((t) => !Number.isInteger(t) || t < 0)) fail(`--tokens must be comma-separated token ids, got ${values.tokens}`);
  command = { command: 'logits', tokens, contextLength };
} else {
  if (values.prompt === undefined) fail('generate needs --prompt');
  const maxTokens = Number(values['max-tokens']);
  const temperature = Number(values.temperature);
  if (!Number.isInteger(maxTokens) || maxTokens < 1) fail('--max-tokens must be a positive integer');
  if (!(temperature >= 0)) fail('--temperature must be a number >= 0');
  command = { command: 'generate', prompt: values.prompt, system: values.system, maxTokens, temperature, contextLength, profile: values.profile };
}

const modelArg = values.model;
const isUrl = /^https?:\/\//.test(modelArg);
const localPath = isUrl ? null : resolve(modelArg);
if (localPath && !existsSync(localPath)) fail(`no such model file or directory: ${localPath}`);
const isDir = localPath ? statSync(localPath).isDirectory() : modelArg.endsWith('/');

function print(result) {
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else if (command.command === 'logits') {
    result.logits.forEach((row, i) => {
      const top = row.map((v, id) => [id, v]).sort((a, b) => b[1] - a[1]).slice(0, 5);
      process.stdout.write(`position ${i} (token ${result.tokens[i]}): top ${top.map(([id, v]) => `${id}:${v.toFixed(4)}`).join(' ')}\n`);
    });
  } else {
    process.stdout.write(`${result.text}\n`);
    const t = result.timings;
    process.stderr.write(
      `[${result.finish_reason}; ${result.usage.promptTokens} prompt + ${result.usage.completionTokens} generated tokens; ` +
        `prefill ${t.prefill_tok_s} tok/s, decode ${t.decode_tok_s} tok/s; load ${t.load_ms} ms; ${result.adapter}]\n`,
    );
  }
}

/**
 * serve-main.ts, one of two ways. The published package (no vite.config.ts: it is not in package.json `files`)
 * runs the build, dist/node/serve-main.js (`vite build --mode node`, run by `npm run build` and before `npm pack`:
 * the shaders inlined, only runtime dependencies imported), so `serve` needs no dev dependency. A development
 * checkout runs the sources through Vite's SSR loader, which resolves the shaders' `?raw` imports (closed once
 * the modules are evaluated: src imports nothing dynamically), so a stale build is never served;
 * WEBGPU_RESPONSES_SERVE_BUNDLE=FILE runs that build instead (the tests of the packaged path use it).
 */
async function loadServeMain() {
  const bundle = process.env.WEBGPU_RESPONSES_SERVE_BUNDLE || (existsSync(join(ROOT, 'vite.config.ts')) ? null : join(ROOT, 'dist/node/serve-main.js'));
  if (bundle !== null) {
    if (!existsSync(bundle)) throw new Error(`${bundle} is missing: build it with \`npm run build\` (vite build --mode node).`);
    return import(pathToFileURL(resolve(bundle)).href);
  }
  const vite = await startVite({ server: { middlewareMode: true, hmr: false, ws: false, watch: null }, appType: 'custom' });
  try {
    return await vite.ssrLoadModule('/src/node-host/serve-main.ts');
  } finally {
    await vite.close();
  }
}

async function startVite(extra) {
  // logits and generate load the sources through Vite, a dev dependency: they are tools of a development checkout.
  const { createServer } = await import('vite').catch((error) => {
    throw new Error(`this command needs a development checkout of webgpu-responses (npm ci there: vite is a dev dependency): ${error.message}`);
  });
  return createServer({
    root: ROOT,
    configFile: false,
    logLevel: 'error',
    clearScreen: false,
    optimizeDeps: { noDiscovery: true, include: [] },
    ...extra,
  });
}

async function runOnNode() {
  if (!process.env.VK_ICD_FILENAMES && !process.env.WEBGPU_RESPONSES_CLI_CHILD && existsSync(SWIFTSHADER_ICD)) {
    // Dawn needs the Vulkan loader and an ICD at process start: rerun with Chromium's SwiftShader.
    const env = {
      ...process.env,
      WEBGPU_RESPONSES_CLI_CHILD: '1',
      VK_ICD_FILENAMES: SWIFTSHADER_ICD,
      LD_LIBRARY_PATH: ['/usr/lib/chromium', process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
    };
    const child = spawnSync(process.execPath, process.argv.slice(1), { stdio: 'inherit', env });
    process.exit(child.status ?? 1);
  }
  const vite = await startVite({ server: { middlewareMode: true, hmr: false, ws: false }, appType: 'custom' });
  try {
    const { runCliCommand } = await vite.ssrLoadModule('/src/cli/cli-main.ts');
    // Files through a handle, not fs.openAsBlob (wrong sizes past 4 GiB on Node 20: src/node-host/file-source.ts).
    const { fileSource } = await vite.ssrLoadModule('/src/node-host/file-source.ts');
    const { create, globals } = await import('webgpu');
    Object.assign(globalThis, globals);
    const gpu = create([]); // kept referenced until the process ends (Dawn crashes if it is collected first)
    let model;
    if (isUrl) model = isDir ? { hfDir: modelArg } : { gguf: modelArg };
    else if (isDir) {
      const files = {};
      for (const f of readdirSync(localPath)) if (statSync(join(localPath, f)).isFile()) files[f] = fileSource(join(localPath, f));
      model = { hfDir: files };
    } else model = { gguf: fileSource(localPath) };
    const result = await runCliCommand(command, model, gpu);
    print(result);
    globalThis.__webgpuResponsesGpu = gpu;
  } finally {
    await vite.close();
  }
}

/** Serves the local model file (or directory) at /__cli_model/ with Range support. */
function modelFilesPlugin() {
  return {
    name: 'cli-model-files',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const url = new URL(req.url ?? '/', 'http://localhost');
        if (url.pathname === '/__cli_page') {
          res.setHeader('content-type', 'text/html');
          res.end('<!doctype html><meta charset="utf-8"><title>webgpu-responses cli</title>');
          return;
        }
        if (!url.pathname.startsWith('/__cli_model/') || !localPath) return next();
        const rel = decodeURIComponent(url.pathname.slice('/__cli_model/'.length));
        const path = isDir ? join(localPath, rel) : localPath;
        if ((isDir && (rel.includes('..') || !existsSync(path))) || !statSync(path).isFile()) {
          res.statusCode = 404;
          res.end('not found');
          return;
        }
        const size = statSync(path).size;
        res.setHeader('accept-ranges', 'bytes');
        res.setHeader('content-type', 'application/octet-stream');
        const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
        let start = 0;
        let end = size - 1;
        if (range) {
          start = Number(range[1]);
          end = range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
          if (start > end) {
            res.statusCode = 416;
            res.setHeader('content-range', `bytes */${size}`);
            res.end();
            return;
          }
          res.statusCode = 206;
          res.setHeader('content-range', `bytes ${start}-${end}/${size}`);
        }
        res.setHeader('content-length', String(end - start + 1));
        if (req.method === 'HEAD') return res.end();
        createReadStream(path, { start, end }).pipe(res);
      });
    },
  };
}

async function runInChromium() {
  const { chromium } = await import('playwright-core');
  const { chromiumArgs } = await import('./chromium-flags.mjs');
  const vite = await startVite({ server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false }, plugins: [modelFilesPlugin()] });
  await vite.listen();
  const base = vite.resolvedUrls?.local[0];
  if (!base) throw new Error('the Vite server did not start');
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
  const extra = values['bench-flags'] ? ['--enable-dawn-features=allow_unsafe_apis,disable_robustness'] : [];
  const browser = await chromium.launch({ executablePath, args: chromiumArgs(extra), headless: true });
  try {
    const page = await browser.newPage();
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(new URL('/__cli_page', base).href);
    let model;
    if (isUrl) model = isDir ? { hfDir: modelArg } : { gguf: modelArg };
    else model = isDir ? { hfDir: new URL('/__cli_model/', base).href } : { gguf: new URL('/__cli_model/model', base).href };
    const result = await page.evaluate(
      async ({ command, model }) => {
        const main = await import('/src/cli/cli-main.ts');
        return main.runCliCommand(command, model);
      },
      { command, model },
    );
    print(result);
  } finally {
    await browser.close();
    await vite.close();
  }
}

try {
  if (values.backend === 'node') await runOnNode();
  else await runInChromium();
  process.exit(0);
} catch (error) {
  process.stderr.write(`webgpu-responses: ${error?.message ?? error}\n`);
  process.exit(1);
}
