// Runs the kernel benchmarks (bench/kernels/bench.ts) in the system Chromium and prints their JSON on stdout.
// Vite serves the page from 127.0.0.1 (WebGPU needs a secure context); playwright-core drives Chromium with the
// project's WebGPU flags. By default it adds --enable-dawn-features=allow_unsafe_apis,disable_robustness
// (benchmarks only, never in the product); --robust leaves them off.
// Options: --robust, --repeats N, --n N --k K (matvec and roofline size), --m M --mn N --mk K (matmul),
// --shapes '<KernelShapes JSON>' (override per-adapter kernel shapes), --only matvec,matmul_f32 (kernel name prefixes),
// --gated 1 (the products as the fused gate/up product: two matrices of n rows, SwiGLU), --product '<product shape
// JSON>' (WORKGROUP_SIZE, K_SPLIT, TILE_M, NORM_SUBGROUP: the subgroup split, and with K_SPLIT 1 the quads' shared
// activations, need K_SPLIT > 1 or NORM_SUBGROUP, as the CPU shapes' {"WORKGROUP_SIZE":16,"K_SPLIT":1,"TILE_M":4,
// "NORM_SUBGROUP":4}; without them a product takes the workgroup split).
import { createServer } from 'vite';
import { chromium } from 'playwright-core';
import { chromiumArgs } from '../../tools/chromium-flags.mjs';
import { ensureChromium } from '../../tools/ensure-chromium.mjs';
import { option } from '../support/node-dawn.mjs';

const argv = process.argv.slice(2);
const robust = argv.includes('--robust');
const query = new URLSearchParams();
for (const name of ['repeats', 'n', 'k', 'm', 'mn', 'mk', 'shapes', 'product', 'only', 'gated']) {
  const value = option(argv, name, undefined);
  if (value !== undefined) query.set(name, value);
}

const benchFlags = robust ? [] : ['--enable-dawn-features=allow_unsafe_apis,disable_robustness'];
const flags = chromiumArgs(benchFlags);
const executablePath = ensureChromium();

const server = await createServer({
  configFile: false,
  root: new URL('../..', import.meta.url).pathname,
  logLevel: 'error',
  server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false },
});
await server.listen();
const address = server.httpServer.address();
const url = `http://127.0.0.1:${address.port}/bench/kernels/index.html?${query}`;

const browser = await chromium.launch({ executablePath, args: flags, headless: true });
let exitCode = 0;
try {
  const page = await browser.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') console.error(`[page] ${message.text()}`);
  });
  await page.goto(url);
  await page.waitForFunction(() => window.__kernelBench !== undefined || window.__kernelBenchError !== undefined, null, {
    timeout: 600_000,
  });
  const error = await page.evaluate(() => window.__kernelBenchError);
  if (error) {
    console.error(`Kernel benchmark failed: ${error}`);
    exitCode = 1;
  } else {
    const result = await page.evaluate(() => window.__kernelBench);
    const browserVersion = browser.version();
    console.log(JSON.stringify({ browser: browserVersion, chromiumFlags: flags, ...result }, null, 2));
  }
} finally {
  await browser.close();
  await server.close();
}
process.exit(exitCode);
