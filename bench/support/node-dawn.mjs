// What the Node-Dawn bench wrappers (bench/decode, bench/prefill, bench/sampling run.mjs; kernels/run.mjs
// takes the option reader) share: rerunning over
// Chromium's SwiftShader when no Vulkan driver is named, the `--name value` option reader, and loading a TypeScript
// bench module through Vite's SSR loader. Imports only Node and Vite; nothing in src/ imports this.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/**
 * Dawn needs a Vulkan driver, and the Vulkan loader reads VK_ICD_FILENAMES at process start: when it is unset and
 * Chromium's SwiftShader is installed, rerun this script with it (and Chromium's libraries) set, and exit with its
 * status. Returns (doing nothing) when VK_ICD_FILENAMES is set or SwiftShader is absent.
 */
export function rerunOverSwiftShader() {
  if (process.env.VK_ICD_FILENAMES || !existsSync(SWIFTSHADER_ICD)) return;
  const libraryPath = ['/usr/lib/chromium', process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  const env = { ...process.env, VK_ICD_FILENAMES: SWIFTSHADER_ICD, LD_LIBRARY_PATH: libraryPath };
  process.exit(spawnSync(process.execPath, process.argv.slice(1), { env, stdio: 'inherit' }).status ?? 1);
}

/** The value after `--name` in argv, or fallback when `--name` is absent. */
export function option(argv, name, fallback) {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
}

/** Loads `path` (root-relative, e.g. '/bench/sampling/bench.ts') through a middleware-mode Vite server, returns
 *  `await fn(module)`, and closes the server whatever happens. */
export async function runInVite(path, fn) {
  const { createServer } = await import('vite');
  const vite = await createServer({
    root: ROOT,
    server: { middlewareMode: true, hmr: false, ws: false, watch: null },
    appType: 'custom',
    logLevel: 'error',
  });
  try {
    return await fn(await vite.ssrLoadModule(path));
  } finally {
    await vite.close();
  }
}
