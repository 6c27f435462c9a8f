#!/usr/bin/env node
// llama.cpp (node-llama-cpp, CPU build shipped with the package, F32 KV cache, flash attention off) as the
// numerical oracle: the full-vocabulary logits at every position of given token ids, and a greedy continuation.
//
//   node tools/llama-oracle/logits.mjs --model m.gguf --tokens 1,2,3 [--greedy 32]
//     prints {"tokens":[...],"logits":[[...],...],"greedy":[...],"greedyLogits":[[...],...]}
//     (greedyLogits[i]: the logits after feeding greedy[i], i < greedy - 1; so tokens + greedy[0..n-2] have
//     logits + greedyLogits, position by position)
//   node tools/llama-oracle/logits.mjs --jobs jobs.json [--out results.json]
//     jobs.json: [{"model":"m.gguf","tokens":[1,2,3],"greedy":32}, ...]; prints (or writes) an array of results
//     in the same order (one process, one llama.cpp instance: much faster than one process per job).
//
// Greedy decoding here is argmax over the raw logits (ties broken by the lowest id, like the engine's argmax).
import { readFileSync, writeFileSync } from 'node:fs';
import { getLlama } from 'node-llama-cpp';
import { pinCpuVariant } from './pin-cpu-variant.mjs';

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) args[a.slice(2)] = true;
    else args[a.slice(2)] = argv[++i];
  }
  return args;
}

/** The logits map (every vocabulary id -> logit) as a dense array indexed by token id. */
function logitsArray(map) {
  const out = new Array(map.size).fill(Number.NaN);
  for (const [token, value] of map) out[token] = value;
  return out;
}

function argmax(values) {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

async function runJob(llama, models, job) {
  let model = models.get(job.model);
  if (!model) {
    model = await llama.loadModel({ modelPath: job.model, gpuLayers: 0, useMmap: false });
    models.set(job.model, model);
  }
  const greedy = job.greedy ?? 0;
  const contextSize = Math.max(64, job.tokens.length + greedy + 8);
  const context = await model.createContext({
    contextSize,
    batchSize: Math.max(job.tokens.length, 1),
    flashAttention: false,
    threads: 1,
    experimentalKvCacheKeyType: 'F32',
    experimentalKvCacheValueType: 'F32',
  });
  try {
    const sequence = context.getSequence();
    const withLogits = (token) => [token, { generateNext: { logits: true } }];
    const results = await sequence.controlledEvaluate(job.tokens.map(withLogits));
    const logits = results.map((r, i) => {
      if (!r?.next?.logits) throw new Error(`no logits at position ${i}`);
      return logitsArray(r.next.logits);
    });
    const greedyTokens = [];
    const greedyLogits = [];
    let last = logits[logits.length - 1];
    for (let i = 0; i < greedy; i++) {
      const next = argmax(last);
      greedyTokens.push(next);
      if (i + 1 === greedy) break;
      const [r] = await sequence.controlledEvaluate([withLogits(next)]);
      last = logitsArray(r.next.logits);
      greedyLogits.push(last);
    }
    return { tokens: job.tokens, logits, ...(greedy ? { greedy: greedyTokens, greedyLogits } : {}) };
  } finally {
    await context.dispose();
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const jobs = args.jobs
    ? JSON.parse(readFileSync(args.jobs, 'utf8'))
    : [{ model: args.model, tokens: String(args.tokens).split(',').map(Number), greedy: args.greedy ? Number(args.greedy) : 0 }];
  for (const job of jobs) {
    if (typeof job.model !== 'string' || !Array.isArray(job.tokens) || job.tokens.length === 0) {
      throw new Error('each job needs "model" (a GGUF path) and a non-empty "tokens" array');
    }
  }
  pinCpuVariant(); // the same CPU build of llama.cpp on every host (see pin-cpu-variant.mjs)
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: 'error', progressLogs: false });
  const models = new Map();
  const results = [];
  for (const job of jobs) results.push(await runJob(llama, models, job));
  for (const model of models.values()) await model.dispose();
  const text = JSON.stringify(args.jobs ? results : results[0]);
  if (args.out) writeFileSync(args.out, text);
  else process.stdout.write(`${text}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
