#!/usr/bin/env node
// Decode with the Q8_0/Q4_0 products on f32 activations against 8-bit activations, on Node's Dawn
// (bench/decode-int8/bench.ts), on bench/real-sizes models: logits against llama.cpp, paired rounds of decode
// ms/token, GPU ms per op. Prints one JSON object. No test asserts a time.
//   node bench/decode-int8/run.mjs [--models qwen2.5-0.5b-instruct-q8_0,qwen2.5-0.5b-instruct-q4_0] [--tokens 4]
//                                  [--rounds 3] [--dawn-flags 'enable-dawn-features=allow_unsafe_apis,disable_robustness']
//                                  [--prefill N]: prefill N tokens with f32 against int8 prefill instead of decode
// The models are bench/real-sizes/build.ts's (.tmp/real-sizes/<id>/; `npm run bench -- --catalog <id> --logits-only`
// builds one). Dawn needs a Vulkan driver: without VK_ICD_FILENAMES this reruns itself over Chromium's SwiftShader.
import { join } from 'node:path';
import { ROOT, option as optionIn, rerunOverSwiftShader, runInVite } from '../support/node-dawn.mjs';

rerunOverSwiftShader();
const option = (name, fallback) => optionIn(process.argv.slice(2), name, fallback);
const options = {
  dirs: option('models', 'qwen2.5-0.5b-instruct-q8_0,qwen2.5-0.5b-instruct-q4_0').split(',').map((id) => join(ROOT, '.tmp', 'real-sizes', id)),
  tokens: Number(option('tokens', '4')),
  rounds: Number(option('rounds', '3')),
  prefill: Number(option('prefill', '0')),
  dawnFlags: option('dawn-flags', 'enable-dawn-features=allow_unsafe_apis,disable_robustness').split(' ').filter(Boolean),
};
const result = await runInVite('/bench/decode-int8/bench.ts', ({ runDecodeInt8Bench }) => runDecodeInt8Bench(options));
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
