// Decode speed and logits of the decoder alone (no tokenizer, no sampler) on Node's Dawn with the Q8_0/Q4_0
// products reading f32 activations (f32) against 8-bit activations (int8: shapes.int8Activations,
// shaders/quantize_activations.wgsl + matmul_q*_int8.wgsl), on bench/real-sizes models (.tmp/real-sizes/<id>/:
// model.gguf, llama.cpp's ref.json and ref-logits.f32). Per model: the max |logit - llama.cpp's| at every position
// of ref.json's tokens (the prompt as one prefill, the rest as decode steps: only decode takes int8), then rounds
// of `tokens` greedy decode steps alternating which variant goes first: wall and process CPU time per token
// (SwiftShader runs the GPU work on this process's threads), paired per round; and the GPU ms per op of one decode
// step (timestamp queries). Run by bench/decode-int8/run.mjs (Vite's SSR loader resolves the shaders' ?raw imports).
import { openAsBlob, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { create, globals } from 'webgpu';
import { uploadTensors } from '../../src/model/upload-weights.ts';
import { acquireGpu } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { Decoder, type DecoderOptions } from '../../src/model/decoder.ts';
import { assembleDecoderWeights } from '../../src/model/decoder-weights.ts';
import { readGguf } from '../../src/model/gguf.ts';
import { modelConfigFromGguf } from '../../src/model/model-config.ts';
import { ggufTensorSources } from '../../src/model/weight-loader.ts';

export interface DecodeInt8BenchOptions {
  dirs: string[];
  tokens: number;
  rounds: number;
  dawnFlags: string[];
  /** > 0: instead of decode, prefill this many tokens (chunks of the decoder's maxBatch) with f32 against int8 prefill. */
  prefill?: number;
}

type Variant = 'f32' | 'int8';
const VARIANTS: Variant[] = ['f32', 'int8'];

export async function runDecodeInt8Bench(o: DecodeInt8BenchOptions): Promise<unknown> {
  Object.assign(globalThis, globals);
  const dawn = create(o.dawnFlags);
  const gpu = await acquireGpu({ gpu: dawn });
  const models: unknown[] = [];
  for (const dir of o.dirs) {
    models.push(await (o.prefill ? benchPrefill(gpu, dir, o) : benchModel(gpu, dir, o)));
    // Each model's result on stderr as it finishes (a run stopped part way keeps what finished).
    process.stderr.write(`[bench/decode-int8] result ${JSON.stringify(models.at(-1))}\n`);
  }
  const info = gpu.adapterInfo;
  gpu.destroy();
  return { bench: 'decode-int8', adapter: { vendor: info.vendor, architecture: info.architecture, description: info.description }, dawn_flags: o.dawnFlags, packed_4x8_integer_dot_product: dawn.wgslLanguageFeatures.has('packed_4x8_integer_dot_product'), models };
}

async function benchModel(gpu: Awaited<ReturnType<typeof acquireGpu>>, dir: string, o: DecodeInt8BenchOptions): Promise<unknown> {
  const ref = JSON.parse(readFileSync(join(dir, 'ref.json'), 'utf8')) as { id: string; tokens: number[]; prompt: number[]; vocab: number; ftype: string };
  const refLogits = new Float32Array(readFileSync(join(dir, 'ref-logits.f32')).buffer.slice(0));
  const file = await readGguf(await openAsBlob(join(dir, 'model.gguf')));
  const config = modelConfigFromGguf(file);
  const uploaded = await uploadTensors(gpu.device, ggufTensorSources(file));
  const weights = assembleDecoderWeights(config, (name) => uploaded.tensors.get(name), uploaded.ropeFreqFactors);
  const pipelines = new PipelineCache(gpu.device);
  const maxSeq = ref.tokens.length + o.tokens * o.rounds + 16;
  const decoders = new Map<Variant, Decoder>();
  for (const v of VARIANTS) {
    const shapes: DecoderOptions['shapes'] = { forward: { int8Activations: { Q8_0: v === 'int8', Q4_0: v === 'int8', prefill: false } } };
    decoders.set(v, await Decoder.create(gpu, config, weights, { maxSeq, pipelines, shapes }));
  }
  // Logits against llama.cpp: the prompt in one prefill, each later token a decode step.
  const logits: Record<string, unknown> = {};
  for (const v of VARIANTS) {
    const d = decoders.get(v)!;
    d.kv.clear();
    const rows: Float32Array[] = [...(await d.forward(ref.prompt, { logits: 'all' })).logits!];
    for (const t of ref.tokens.slice(ref.prompt.length)) rows.push((await d.forward([t], { logits: 'last' })).logits![0]!);
    const perPosition = rows.map((row, p) => {
      let max = 0;
      let argmax = 0;
      let refArgmax = 0;
      for (let i = 0; i < ref.vocab; i++) {
        const r = refLogits[p * ref.vocab + i]!;
        max = Math.max(max, Math.abs(row[i]! - r));
        if (row[i]! > row[argmax]!) argmax = i;
        if (r > refLogits[p * ref.vocab + refArgmax]!) refArgmax = i;
      }
      return { position: p, step: p < ref.prompt.length ? 'prefill' : 'decode', max_abs_diff: round4(max), argmax_equal: argmax === refArgmax };
    });
    logits[v] = { max_abs_diff_decode: Math.max(...perPosition.filter((r) => r.step === 'decode').map((r) => r.max_abs_diff)), per_position: perPosition };
  }
  // Speed: rounds alternate which variant goes first; each decodes o.tokens greedy tokens after a short prompt.
  const runs: { round: number; variant: Variant; wall_ms_per_token: number; cpu_ms_per_token: number }[] = [];
  for (let round = 0; round < o.rounds; round++) {
    for (const v of round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
      const d = decoders.get(v)!;
      d.kv.clear();
      const first = (await d.forward(ref.prompt)).nextToken;
      for await (const _ of d.decode(first, { maxSteps: 1, inFlight: 1 })); // warm-up step (first use of the m = 1 program)
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for await (const _ of d.decode(first, { maxSteps: o.tokens, inFlight: 1 }));
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      runs.push({ round, variant: v, wall_ms_per_token: round1(wall / o.tokens), cpu_ms_per_token: round1((cpu.user + cpu.system) / 1000 / o.tokens) });
      process.stderr.write(`[bench/decode-int8] ${ref.id} round ${round} ${v}: ${(wall / o.tokens).toFixed(1)} ms/token wall, ${((cpu.user + cpu.system) / 1000 / o.tokens).toFixed(1)} ms CPU\n`);
    }
  }
  const profiles: Record<string, unknown> = {};
  for (const v of VARIANTS) {
    const d = decoders.get(v)!;
    d.kv.clear();
    await d.forward(ref.prompt);
    const ops = await d.profile([ref.tokens[ref.prompt.length]!]);
    profiles[v] = ops?.map((op) => ({ op: op.op, ms: round1(op.ms), count: op.count })) ?? null;
  }
  for (const d of decoders.values()) d.destroy();
  uploaded.destroy();
  const wall = paired(runs, 'wall_ms_per_token');
  const cpu = paired(runs, 'cpu_ms_per_token');
  return {
    id: ref.id,
    ftype: ref.ftype,
    layers: config.layers,
    hidden: config.hidden,
    vocab: config.vocabSize,
    decode_tokens_per_round: o.tokens,
    median_wall_ms_per_token: wall.medians,
    median_cpu_ms_per_token: cpu.medians,
    paired_speedup_median: { wall: wall.speedup, cpu: cpu.speedup },
    logits_vs_llama_cpp: logits,
    gpu_ms_per_op_decode_step: profiles,
    runs,
  };
}

/**
 * Prefill of o.prefill tokens (the Decoder's chunks) with every product on f32 activations (`f32`) against the
 * Q8_0/Q4_0 products on 8-bit activations in prefill steps too (`int8`: int8Activations.prefill), rounds
 * alternating which goes first: wall and process CPU ms per prompt, paired per round.
 */
async function benchPrefill(gpu: Awaited<ReturnType<typeof acquireGpu>>, dir: string, o: DecodeInt8BenchOptions): Promise<unknown> {
  const ref = JSON.parse(readFileSync(join(dir, 'ref.json'), 'utf8')) as { id: string; vocab: number; ftype: string };
  const file = await readGguf(await openAsBlob(join(dir, 'model.gguf')));
  const config = modelConfigFromGguf(file);
  const uploaded = await uploadTensors(gpu.device, ggufTensorSources(file));
  const weights = assembleDecoderWeights(config, (name) => uploaded.tensors.get(name), uploaded.ropeFreqFactors);
  const pipelines = new PipelineCache(gpu.device);
  const count = o.prefill!;
  const prompt = Array.from({ length: count }, (_, i) => (i * 7919 + 13) % ref.vocab);
  const decoders = new Map<Variant, Decoder>();
  for (const v of VARIANTS) {
    const shapes: DecoderOptions['shapes'] = { forward: { int8Activations: { Q8_0: v === 'int8', Q4_0: v === 'int8', prefill: v === 'int8' } } };
    const d = await Decoder.create(gpu, config, weights, { maxSeq: count + 8, pipelines, shapes });
    await d.forward(prompt.slice(0, Math.min(count, d.maxBatch))); // compile and warm the m > 1 programs
    decoders.set(v, d);
  }
  const runs: { round: number; variant: Variant; wall_ms: number; cpu_ms: number }[] = [];
  for (let round = 0; round < o.rounds; round++) {
    for (const v of round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
      const d = decoders.get(v)!;
      d.kv.clear();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await d.forward(prompt);
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      runs.push({ round, variant: v, wall_ms: round1(wall), cpu_ms: round1((cpu.user + cpu.system) / 1000) });
      process.stderr.write(`[bench/decode-int8] ${ref.id} prefill ${count} round ${round} ${v}: ${wall.toFixed(0)} ms wall, ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU\n`);
    }
  }
  const maxBatch = decoders.get('f32')!.maxBatch;
  for (const d of decoders.values()) d.destroy();
  uploaded.destroy();
  const wall = paired(runs, 'wall_ms');
  const cpu = paired(runs, 'cpu_ms');
  return {
    id: ref.id,
    ftype: ref.ftype,
    layers: config.layers,
    prefill_tokens: count,
    max_batch: maxBatch,
    median_wall_ms: wall.medians,
    median_cpu_ms: cpu.medians,
    paired_speedup_median: { wall: wall.speedup, cpu: cpu.speedup },
    runs,
  };
}

/**
 * Paired rounds summarised for one measure: each variant's median, and the median over rounds of f32 / int8 (each
 * round ran both variants, so the ratio cancels what the machine was doing in that round).
 */
function paired<K extends string>(runs: readonly ({ round: number; variant: Variant } & Record<K, number>)[], key: K): { medians: Record<Variant, number>; speedup: number } {
  const of = (v: Variant) => runs.filter((r) => r.variant === v).map((r) => r[key]);
  const rounds = [...new Set(runs.map((r) => r.round))];
  const value = (round: number, v: Variant) => runs.find((x) => x.round === round && x.variant === v)![key];
  return { medians: { f32: median(of('f32')), int8: median(of('int8')) }, speedup: round3(median(rounds.map((r) => value(r, 'f32') / value(r, 'int8')))) };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}
const round1 = (x: number) => Math.round(x * 10) / 10;
const round3 = (x: number) => Math.round(x * 1000) / 1000;
const round4 = (x: number) => Math.round(x * 1e4) / 1e4;
