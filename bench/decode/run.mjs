#!/usr/bin/env node
// Decode and prefill speed of the engine on a generated ~20M-parameter llama-family model (6 layers, hidden 512,
// 8 heads / 4 KV heads, FFN 1536, vocabulary 513) in each weight type, on this machine's adapter in headless
// Chromium (with the benchmark-only Dawn flags, like bench/kernels), through the CLI (tools/cli.mjs generate).
// Prints one JSON object: per type decode tok/s, prefill tok/s (a ~128-token prompt), weight bytes read per
// decoded token, the bandwidth that implies, and its fraction of the read roofline bench/kernels measures.
//   node bench/decode/run.mjs [--types F32,F16,Q8_0,Q4_0] [--max-tokens 48] [--backend chromium|node] [--no-roofline]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { option as readOption } from '../support/node-dawn.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const argv = process.argv.slice(2);
const option = (name, fallback) => readOption(argv, name, fallback);
const types = option('types', 'F32,F16,Q8_0,Q4_0').split(',');
const maxTokens = option('max-tokens', '48');
const backend = option('backend', 'chromium');
const MODEL = { arch: 'llama', layers: 6, hidden: 512, heads: 8, kvHeads: 4, intermediate: 1536, merges: 250, seed: 5 };
// About 128 prompt tokens through the ChatML template (random-weight BPE vocabulary: ~2-3 characters per token).
const PROMPT = 'The quick brown fox jumps over the lazy dog. '.repeat(4);

function run(cmd, args) {
  return execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'] });
}

function modelFor(type) {
  const dir = join(ROOT, '.tmp', 'bench-decode', `llama-20m-${type.toLowerCase()}`);
  if (!existsSync(join(dir, 'model.gguf'))) {
    mkdirSync(dir, { recursive: true });
    run(process.execPath, [
      join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'tools', 'make-test-model', 'cli.ts'),
      '--arch', MODEL.arch, '--type', type, '--out', dir, '--seed', String(MODEL.seed), '--layers', String(MODEL.layers),
      '--hidden', String(MODEL.hidden), '--heads', String(MODEL.heads), '--kv-heads', String(MODEL.kvHeads),
      '--intermediate', String(MODEL.intermediate), '--merges', String(MODEL.merges),
    ]);
  }
  return join(dir, 'model.gguf');
}

function roofline() {
  try {
    // bench/kernels always measures the read-every-byte roofline; `--only read_roofline` skips the kernels.
    const out = JSON.parse(run(process.execPath, [join(ROOT, 'bench', 'kernels', 'run.mjs'), '--only', 'read_roofline']));
    return { gb_per_s: typeof out.rooflineGbPerSecond === 'number' ? out.rooflineGbPerSecond : null, source: 'bench/kernels rooflineGbPerSecond' };
  } catch (error) {
    return { gb_per_s: null, error: String(error?.message ?? error).slice(0, 200) };
  }
}

const results = [];
for (const type of types) {
  const model = modelFor(type);
  const args = [join(ROOT, 'tools', 'cli.mjs'), 'generate', '--model', model, '--prompt', PROMPT, '--max-tokens', maxTokens, '--json', '--backend', backend, '--profile'];
  if (backend === 'chromium') args.push('--bench-flags');
  const r = JSON.parse(run(process.execPath, args));
  const gbps = (r.model.weight_bytes_per_token * r.timings.decode_tok_s) / 1e9;
  results.push({
    type,
    parameters: r.model.parameters,
    weight_gpu_bytes: r.model.weight_gpu_bytes,
    weight_bytes_per_token: r.model.weight_bytes_per_token,
    prompt_tokens: r.usage.promptTokens,
    generated_tokens: r.usage.completionTokens,
    prefill_tok_s: r.timings.prefill_tok_s,
    decode_tok_s: r.timings.decode_tok_s,
    decode_weight_gb_per_s: Math.round(gbps * 1000) / 1000,
    load_ms: r.timings.load_ms,
    adapter: r.adapter,
    gpu_ms_per_op: r.profile ?? null,
  });
}
const roof = argv.includes('--no-roofline') ? null : roofline();
for (const r of results) r.roofline_fraction = roof?.gb_per_s ? Math.round((r.decode_weight_gb_per_s / roof.gb_per_s) * 1000) / 1000 : null;
process.stdout.write(`${JSON.stringify({ bench: 'decode', backend, model: MODEL, roofline: roof, results }, null, 2)}\n`);
