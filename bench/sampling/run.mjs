#!/usr/bin/env node
// GPU sampling time per step at real vocabularies (Dawn in Node over SwiftShader): prints JSON.
//   node bench/sampling/run.mjs [--vocab 151936,262144] [--rounds 7]
import { option as optionIn, rerunOverSwiftShader, runInVite } from '../support/node-dawn.mjs';

rerunOverSwiftShader();
const option = (name, fallback) => optionIn(process.argv.slice(2), name, fallback);
const vocabs = option('vocab', '151936,262144').split(',').map(Number);
const result = await runInVite('/bench/sampling/bench.ts', ({ runSamplingBench }) => runSamplingBench(vocabs, Number(option('rounds', '7'))));
process.stdout.write(`${JSON.stringify({ bench: 'sampling', date: new Date().toISOString(), ...result }, null, 2)}\n`);
