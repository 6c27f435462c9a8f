#!/usr/bin/env node
// Decode with the Q8_0/Q4_0 products on f32 activations against 8-bit activations (dot4I8Packed), on Node's Dawn
// (bench/decode-int8/bench.ts), on bench/real-sizes models: logits against llama.cpp, paired rounds of decode
// ms/token, GPU ms per op. Prints one JSON object. No test asserts a time.
//   node bench/decode-int8/run.mjs [--models qwen2.5-0.5b-instruct-q8_0,qwen2.5-0.5b-instruct-q4_0] [--tokens 4]
//                                  [--rounds 3] [--dawn-flags 'enable-dawn-features=allow_unsafe_apis,disable_robustness']
// The models are bench/real-sizes/build.ts's (.tmp/real-sizes/<id>/; `npm run bench -- --catalog <id> --logits-only`
// builds one). Dawn needs a Vulkan driver: without VK_ICD_FILENAMES this reruns itself over Chromium's SwiftShader.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
  dirs: option('models', 'qwen2.5-0.5b-instruct-q8_0,qwen2.5-0.5b-instruct-q4_0').split(',').map((id) => join(ROOT, '.tmp', 'real-sizes', id)),
  tokens: Number(option('tokens', '4')),
  rounds: Number(option('rounds', '3')),
  dawnFlags: option('dawn-flags', 'enable-dawn-features=allow_unsafe_apis,disable_robustness').split(' ').filter(Boolean),
};
const { createServer } = await import('vite');
const vite = await createServer({ root: ROOT, server: { middlewareMode: true, hmr: false, ws: false, watch: null }, appType: 'custom', logLevel: 'error' });
let result;
try {
  const { runDecodeInt8Bench } = await vite.ssrLoadModule('/bench/decode-int8/bench.ts');
  result = await runDecodeInt8Bench(options);
} finally {
  await vite.close();
}
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
