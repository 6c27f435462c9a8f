#!/usr/bin/env node
// GPU sampling time per step at real vocabularies (Dawn in Node over SwiftShader): prints JSON.
//   node bench/sampling/run.mjs [--vocab 151936,262144] [--rounds 7]
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const icd = '/usr/lib/chromium/vk_swiftshader_icd.json';
if (!process.env.VK_ICD_FILENAMES && existsSync(icd)) {
  // The loader reads these at process start: re-run this script with them set.
  const { spawnSync } = await import('node:child_process');
  const env = { ...process.env, VK_ICD_FILENAMES: icd, LD_LIBRARY_PATH: ['/usr/lib/chromium', process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') };
  process.exit(spawnSync(process.execPath, process.argv.slice(1), { stdio: 'inherit', env }).status ?? 1);
}
const { createServer } = await import('vite');
const vite = await createServer({ root: ROOT, logLevel: 'error', server: { middlewareMode: true, hmr: false, ws: false }, appType: 'custom' });
try {
  const { runSamplingBench } = await vite.ssrLoadModule('/bench/sampling/bench.ts');
  const vocabs = option('vocab', '151936,262144').split(',').map(Number);
  const result = await runSamplingBench(vocabs, Number(option('rounds', '7')));
  process.stdout.write(`${JSON.stringify({ bench: 'sampling', date: new Date().toISOString(), ...result }, null, 2)}\n`);
} finally {
  await vite.close();
}
