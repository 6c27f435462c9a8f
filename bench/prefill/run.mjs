#!/usr/bin/env node
// Prefill tok/s at several prompt lengths, the attention kernel before the KV-tiled prefill (old) against it
// (new), on Node's Dawn (bench/prefill/bench.ts). Prints one JSON object. No test asserts a time.
//   node bench/prefill/run.mjs [--prefill 128,2048,8192] [--model public/models/toy-qwen3/model.gguf] [--rounds 1]
//                              [--kernels old,new] [--dawn-flags 'enable-dawn-features=allow_unsafe_apis,disable_robustness']
// Dawn needs a Vulkan driver: without VK_ICD_FILENAMES this reruns itself over Chromium's SwiftShader.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
if (!process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)) {
  const env = { ...process.env, VK_ICD_FILENAMES: SWIFTSHADER_ICD, LD_LIBRARY_PATH: ['/usr/lib/chromium', process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') };
  process.exit(spawnSync(process.execPath, process.argv.slice(1), { env, stdio: 'inherit' }).status ?? 1);
}
const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const options = {
  model: resolve(ROOT, option('model', 'public/models/toy-qwen3/model.gguf')),
  lengths: option('prefill', '128,2048,8192').split(',').map(Number),
  rounds: Number(option('rounds', '1')),
  kernels: option('kernels', 'old,new').split(','),
  dawnFlags: option('dawn-flags', 'enable-dawn-features=allow_unsafe_apis,disable_robustness').split(' ').filter(Boolean),
};
const { createServer } = await import('vite');
const vite = await createServer({ root: ROOT, server: { middlewareMode: true, hmr: false, ws: false, watch: null }, appType: 'custom', logLevel: 'error' });
let result;
try {
  const { runPrefillBench } = await vite.ssrLoadModule('/bench/prefill/bench.ts');
  result = await runPrefillBench(options);
} finally {
  await vite.close();
}
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
