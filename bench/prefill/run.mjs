#!/usr/bin/env node
// Prefill tok/s at several prompt lengths, the attention kernel before the KV-tiled prefill (old) against it
// (new), on Node's Dawn (bench/prefill/bench.ts). Prints one JSON object. No test asserts a time.
//   node bench/prefill/run.mjs [--prefill 128,2048,8192] [--model public/models/toy-qwen3/model.gguf] [--rounds 1]
//                              [--kernels old,new] [--dawn-flags 'enable-dawn-features=allow_unsafe_apis,disable_robustness']
//   node bench/prefill/run.mjs --attention-only 2048,8128 [--shapes '["default",{...}]'] [--reps 3] [--m 64]
//                              [--heads 4 --kv-heads 2 --head-dim 32 --layers 4]
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
// --attention-only: the attention op alone (bench/prefill/attention.ts) at these cached lengths, per --shapes entry
// (a JSON array of kernel-shapes attentionPrefill objects, or "default"; KV_TILE 0: attention.wgsl).
const attentionOnly = option('attention-only', '');
const attentionOptions = {
  positions: attentionOnly.split(',').filter(Boolean).map(Number),
  m: Number(option('m', '64')),
  heads: Number(option('heads', '4')),
  kvHeads: Number(option('kv-heads', '2')),
  headDim: Number(option('head-dim', '32')),
  layers: Number(option('layers', '4')),
  reps: Number(option('reps', '3')),
  shapes: JSON.parse(option('shapes', '["default"]')),
  dawnFlags: options.dawnFlags,
};
const { createServer } = await import('vite');
const vite = await createServer({ root: ROOT, server: { middlewareMode: true, hmr: false, ws: false, watch: null }, appType: 'custom', logLevel: 'error' });
let result;
try {
  if (attentionOnly) {
    const { runAttentionBench } = await vite.ssrLoadModule('/bench/prefill/attention.ts');
    result = await runAttentionBench(attentionOptions);
  } else {
    const { runPrefillBench } = await vite.ssrLoadModule('/bench/prefill/bench.ts');
    result = await runPrefillBench(options);
  }
} finally {
  await vite.close();
}
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
