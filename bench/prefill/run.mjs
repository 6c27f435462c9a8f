#!/usr/bin/env node
// Prefill tok/s at several prompt lengths, the attention kernel before the KV-tiled prefill (old) against it
// (new), on Node's Dawn (bench/prefill/bench.ts). Prints one JSON object. No test asserts a time.
//   node bench/prefill/run.mjs [--prefill 128,2048,8192] [--model public/models/toy-qwen3/model.gguf] [--rounds 1]
//                              [--kernels old,new] [--dawn-flags 'enable-dawn-features=allow_unsafe_apis,disable_robustness']
//   node bench/prefill/run.mjs --attention-only 2048,8128 [--shapes '["default",{...}]'] [--reps 3] [--m 64]
//                              [--heads 4 --kv-heads 2 --head-dim 32 --layers 4]
// Dawn needs a Vulkan driver: without VK_ICD_FILENAMES this reruns itself over Chromium's SwiftShader.
import { resolve } from 'node:path';
import { ROOT, option as optionIn, rerunOverSwiftShader, runInVite } from '../support/node-dawn.mjs';

rerunOverSwiftShader();
const option = (name, fallback) => optionIn(process.argv.slice(2), name, fallback);
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
const result = attentionOnly
  ? await runInVite('/bench/prefill/attention.ts', ({ runAttentionBench }) => runAttentionBench(attentionOptions))
  : await runInVite('/bench/prefill/bench.ts', ({ runPrefillBench }) => runPrefillBench(options));
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
