// `npm test`: everything a fresh clone needs checked, in order, with one summary line at the end.
//   0. the whole tree type-checks (TypeScript strict);
//   1. the system Chromium and Mesa's lavapipe (installed from Debian's packages where possible) and llama.cpp's
//      oracle package;
//   2. unit tests in Node and GPU/browser tests in headless Chromium (vitest projects `unit` and `browser`), then the
//      real clients (test/clients: AI SDK, Agents SDK, Codex CLI) against `webgpu-responses serve`;
//   3. the production build, then end-to-end tests (Playwright) against it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { ensureChromium } from '../tools/ensure-chromium.mjs';
import { summarizeResults } from './results-summary.mjs';

ensureChromium();
// Mesa's lavapipe (Mesa >= 25, with shader-f16) for the native-f16 Dawn test; installed where it can be (root on
// Debian), otherwise a warning and that test fails naming what is missing.
if (process.platform === 'linux' && spawnSync('bash', ['tools/ensure-lavapipe.sh'], { stdio: 'inherit' }).status !== 0) {
  console.error('warning: no lavapipe with shader-f16; test/unit/gpu/native-f16.dawn.test.ts will fail');
}

const env = { ...process.env, VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true' };
// Kernel tests also run in Node on Dawn (the `webgpu` package) over Chromium's SwiftShader Vulkan driver; the
// loader path has to be set before the process starts.
const swiftshaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';
if (existsSync(swiftshaderIcd)) {
  env.LD_LIBRARY_PATH = ['/usr/lib/chromium', process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  env.VK_ICD_FILENAMES = swiftshaderIcd;
}
function run(title, cmd, args, extraEnv = {}) {
  console.log(`\n=== ${title}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...env, ...extraEnv } });
  return r.status === 0;
}

if (!existsSync('tools/llama-oracle/node_modules/node-llama-cpp')) {
  // llama.cpp is the numerical oracle; kept apart so its optional CUDA/Vulkan builds are never fetched.
  if (!run('llama.cpp oracle', 'npm', ['install', '--no-save', '--omit=optional', '--no-audit', '--no-fund', '--prefix', 'tools/llama-oracle'])) process.exit(1);
}
// One CPU build of llama.cpp on every host: ggml would pick the best for the CPU, and their numerics differ by more
// than the F16 tolerances (tools/llama-oracle/pin-cpu-variant.mjs).
if (!run('llama.cpp oracle CPU build', 'node', ['tools/llama-oracle/pin-cpu-variant.mjs'])) process.exit(1);

rmSync('.tmp/test-results', { recursive: true, force: true });
mkdirSync('.tmp/test-results', { recursive: true });
const results = [];
results.push(['typecheck (tsc --noEmit)', run('typecheck', 'npx', ['tsc', '--noEmit', '-p', '.'])]);
results.push(['vitest (unit + browser)', run('vitest', 'npx', ['vitest', 'run', '--reporter=default', '--reporter=json', '--outputFile.json=.tmp/test-results/vitest.json'])]);
// The real clients (AI SDK, Agents SDK, Codex CLI) against `webgpu-responses serve` started as a process.
results.push(['real clients (test/clients)', run('clients', 'npx', ['vitest', 'run', '--config', 'test/clients/vitest.config.ts', '--reporter=default', '--reporter=json', '--outputFile.json=.tmp/test-results/clients.json'])]);
const built = run('build', 'npm', ['run', 'build']);
results.push(['build', built]);
if (built) results.push(['playwright e2e', run('playwright', 'npx', ['playwright', 'test'])]);

const { passed, failed, skipped, failedNames, notes } = summarizeResults('.tmp/test-results', built);
for (const line of notes) console.log(line);
const ok = results.every(([, r]) => r);
console.log('\n' + results.map(([t, r]) => `${r ? 'ok  ' : 'FAIL'} ${t}`).join('\n'));
// The names of the failed tests go at the end, beside the summary: CI keeps only the tail of the output.
for (const name of failedNames) console.log(`failed: ${name}`);
// A stage can fail with no test to name (Playwright's web server not starting, a crash before the reporters wrote).
if (failedNames.length === 0) for (const [t, r] of results) if (!r) console.log(`failed: ${t}: exited non-zero with no failed test recorded (its output is above)`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(ok && failed === 0 ? 0 : 1);
