// The engine's speed on whatever adapter Dawn (the `webgpu` package) finds: for random-weight models of real shapes
// (bench/gpu/models.ts), prefill and decode tok/s through the engine (src/cli/cli-main.ts, greedy, the GPU
// sampler choosing each token), GPU ms per op of one prefill and one decode step, and the sampler's ms per step at
// each vocabulary (bench/sampling/bench.ts: greedy, top-p alone, top-k + top-p). Prints one JSON object on stdout;
// with --out FILE also writes it there after each model, so a run stopped by its time cap keeps what finished.
// Bundled by bench/gpu/prepare.sh into one .mjs that needs only node and the `webgpu` package; run by run.sh.
//   main(['--tiny'])  (CPU adapters: 2 layers of hidden 256, vocabularies of a few thousand)
//   options: --models a,b  --prefill N (prompt tokens, about)  --decode N  --budget-s S  --out FILE  --no-sampling
//            --variants JSON|none (engine options run beside the defaults, per model: VARIANTS below)  --no-floor
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, globals } from 'webgpu';
import { runCliCommand } from '../../src/cli/cli-main.ts';
// Not fs.openAsBlob: Node 20's Blob of a file past 4 GiB has the wrong size (gpt-oss-20b's 12 GB).
import { fileSource } from '../../src/node-host/file-source.ts';
import type { WebGpuEngineOptions } from '../../src/engine/webgpu-engine.ts';
import { runSamplingBench, type SamplingBenchRow } from '../sampling/bench.ts';
import { runFloorBench, type FloorReport } from './floor.ts';
import { SHAPES, buildBenchModel, tinyShape, type BenchShape } from './models.ts';

interface ModelRow {
  id: string;
  name: string;
  like: string;
  arch: string;
  layers: number;
  hidden: number;
  vocab: number;
  file_bytes?: number;
  build_s?: number;
  parameters?: number;
  weight_gpu_bytes?: number;
  weight_bytes_per_token?: number;
  dispatches_per_token?: number;
  prompt_tokens?: number;
  generated_tokens?: number;
  load_ms?: number;
  prefill_tok_s?: number;
  decode_tok_s?: number;
  decode_ms_per_token?: number;
  /** Weight bytes read per decoded token times decode tok/s. */
  decode_weight_gb_s?: number;
  /** That against the GPU's memory bandwidth (--bandwidth-gb-s; the H200's datasheet 4800 by default on NVIDIA). */
  bandwidth_fraction?: number | null;
  /** That against the read bandwidth a WGSL kernel reached on this adapter (`floor.read_gb_s`). */
  measured_read_fraction?: number;
  /** The sampler's greedy and top-p ms per step at this vocabulary (from `sampling`), and as a fraction of a decode step. */
  sampling_greedy_ms?: number;
  sampling_top_p_ms?: number;
  sampling_top_p_fraction_of_step?: number;
  /** GPU ms per op (the five largest) of one prefill step over the prompt and of one decode step. */
  prefill_top_ops?: { op: string; ms: number }[];
  decode_top_ops?: { op: string; ms: number }[];
  decode_gpu_ms?: number;
  finish_reason?: string;
  /** The first model only: prefill of a longer prompt (--long-prefill, about 2048 tokens). */
  long_prefill?: { prompt_tokens: number; prefill_tok_s: number; prefill_ms: number; decode_tok_s: number } | { error: string };
  /** The same prompt and a shorter decode with other kernel shapes (--variants), each in a fresh engine. */
  variants?: VariantRow[];
  error?: string;
}

/** The largest model file the variants run on (each loads it again). */
const VARIANTS_MAX_BYTES = 4e9;

/** Kernel shapes run beside the adapter's own (src/gpu/kernel-shapes.ts's GPU shapes), to choose them on a real GPU. */
interface Variant {
  name: string;
  /** Engine options: kernel shapes, decode steps in flight, prompt tokens a prefill step. */
  engine: Pick<WebGpuEngineOptions, 'shapes' | 'decodeInFlight' | 'maxBatch'>;
}

interface VariantRow {
  name: string;
  prefill_tok_s?: number;
  decode_tok_s?: number;
  decode_gpu_ms?: number;
  decode_top_ops?: { op: string; ms: number }[];
  error?: string;
}

/**
 * The default variants on a GPU (not --tiny), most telling first (each runs on every model before the next starts,
 * while the budget lasts): decode attention as it was before attention_decode.wgsl and with other
 * workgroups and splits; the products with other K splits (lanes sharing 4 rows: the GPU shape's 8 lanes in
 * workgroups of 64 give a product of 896 rows 28 workgroups, for 132 SMs on the H200; K split 32 in workgroups of 32
 * gives it 224); decode attention never split (one workgroup per KV head group walks every position: a layer's
 * attention_combine dispatch saved, at the cost of parallelism); prefill's products through workgroup-memory tiles (matmul_tiled.wgsl); decode steps kept in flight (the engine's 2) and prompt tokens a prefill step (a GPU's 256).
 */
const VARIANTS: Variant[] = [
  { name: 'attention per invocation (before)', engine: { shapes: { forward: { attention: { WORKGROUP_SIZE: 32, SPLIT_POSITIONS: 64 } } } } },
  { name: 'prefill products tiled (matmul_tiled)', engine: { shapes: { forward: { product: { WORKGROUP_SIZE: 64, K_SPLIT: 8, TILE_M: 4, PREFILL_TILED: true } } } } },
  { name: 'products K split 32, 4 rows a workgroup', engine: { shapes: { forward: { product: { WORKGROUP_SIZE: 32, K_SPLIT: 32, TILE_M: 4 } } } } },
  { name: 'products K split 32, 8 rows a workgroup', engine: { shapes: { forward: { product: { WORKGROUP_SIZE: 64, K_SPLIT: 32, TILE_M: 4 } } } } },
  { name: 'prefill tiled + products K split 32, 8 rows a workgroup', engine: { shapes: { forward: { product: { WORKGROUP_SIZE: 64, K_SPLIT: 32, TILE_M: 4, PREFILL_TILED: true } } } } },
  { name: 'products K split 16', engine: { shapes: { forward: { product: { WORKGROUP_SIZE: 64, K_SPLIT: 16, TILE_M: 4 } } } } },
  { name: 'attention wg 32, splits of 32', engine: { shapes: { forward: { attention: { WORKGROUP_SIZE: 32, SPLIT_POSITIONS: 32, HEADS: 8, COOPERATIVE: true } } } } },
  { name: 'attention wg 128, splits of 128', engine: { shapes: { forward: { attention: { WORKGROUP_SIZE: 128, SPLIT_POSITIONS: 128, HEADS: 8, COOPERATIVE: true } } } } },
  { name: 'attention never split (no combine dispatch)', engine: { shapes: { forward: { attention: { WORKGROUP_SIZE: 128, SPLIT_POSITIONS: 0, HEADS: 8, COOPERATIVE: true } } } } },
  { name: 'products K split 4', engine: { shapes: { forward: { product: { WORKGROUP_SIZE: 64, K_SPLIT: 4, TILE_M: 4 } } } } },
  { name: 'one decode step in flight', engine: { decodeInFlight: 1 } },
  { name: 'three decode steps in flight', engine: { decodeInFlight: 3 } },
  { name: 'prefill steps of 512 tokens', engine: { maxBatch: 512 } },
];

function option(argv: string[], name: string, fallback: string): string {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

async function adapterReport(gpu: GPU): Promise<Record<string, unknown>> {
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) return { found: false };
  const info = adapter.info;
  const limits: Record<string, number> = {};
  for (const name of ['maxBufferSize', 'maxStorageBufferBindingSize', 'maxComputeWorkgroupStorageSize', 'maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupsPerDimension', 'maxStorageBuffersPerShaderStage']) {
    const v = (adapter.limits as unknown as Record<string, unknown>)[name];
    if (typeof v === 'number') limits[name] = v;
  }
  return {
    found: true,
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    subgroup_min_size: (info as unknown as { subgroupMinSize?: number }).subgroupMinSize,
    subgroup_max_size: (info as unknown as { subgroupMaxSize?: number }).subgroupMaxSize,
    features: [...adapter.features].sort(),
    limits,
  };
}

/** A prompt of about `tokens` tokens for the generated BPE vocabulary (250 merges: about 1.4 characters a token). */
function promptOf(tokens: number): string {
  const text = 'The quick brown fox jumps over the lazy dog while the engine counts every token it reads. ';
  const chars = Math.max(8, Math.round(tokens * 1.4));
  return text.repeat(Math.ceil(chars / text.length)).slice(0, chars);
}

function topOps(ops: { op: string; ms: number }[] | null | undefined): { op: string; ms: number }[] | undefined {
  if (!ops) return undefined;
  return [...ops].sort((a, b) => b.ms - a.ms).slice(0, 5).map((o) => ({ op: o.op, ms: round(o.ms) }));
}

async function writeChunks(path: string, chunks: Uint8Array[]): Promise<void> {
  const stream = createWriteStream(path);
  for (const c of chunks) if (!stream.write(c)) await new Promise<void>((r) => stream.once('drain', () => r()));
  await new Promise<void>((resolve, reject) => stream.end((error?: Error | null) => (error ? reject(error) : resolve())));
}

/** Builds model `id` (of SHAPES, shrunk with `tiny`) into `path`; writes `path`.json with its size and build time. */
export async function buildModelFile(id: string, path: string, tiny: boolean): Promise<void> {
  const t0 = performance.now();
  const shape = tiny ? tinyShape(SHAPES[id]) : SHAPES[id];
  if (!shape) throw new Error(`unknown model ${id}`);
  const model = buildBenchModel(shape);
  await writeChunks(`${path}.part`, model.chunks);
  const { renameSync } = await import('node:fs');
  renameSync(`${path}.part`, path);
  writeFileSync(`${path}.json`, JSON.stringify({ bytes: model.bytes, build_s: round((performance.now() - t0) / 1000, 1) }));
}

/**
 * Every model file, built at once (child processes of the bundle, at most half the cores; in this process when
 * not bundled): a promise per id resolving to its size and build time.
 */
function buildAll(ids: string[], dir: string, tiny: boolean): Map<string, Promise<{ bytes: number; build_s: number }>> {
  const self = fileURLToPath(import.meta.url);
  const bundled = self.endsWith('.mjs');
  const slots = Math.max(1, Math.min(ids.length, Math.floor(availableParallelism() / 2)));
  let running = 0;
  const queue: (() => void)[] = [];
  const next = () => {
    running--;
    queue.shift()?.();
  };
  const result = new Map<string, Promise<{ bytes: number; build_s: number }>>();
  for (const id of ids) {
    const path = join(dir, `${id}.gguf`);
    const start = (): Promise<void> =>
      bundled
        ? new Promise((resolve, reject) => {
            const child = spawn(process.execPath, [self, '--build', id, path, ...(tiny ? ['--tiny'] : [])], { stdio: ['ignore', 'inherit', 'inherit'] });
            child.on('error', reject);
            child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`building ${id} exited with ${code}`))));
          })
        : buildModelFile(id, path, tiny);
    result.set(
      id,
      new Promise<void>((resolve) => (running < slots ? (running++, resolve()) : queue.push(() => (running++, resolve()))))
        .then(start)
        .finally(next)
        .then(() => JSON.parse(readFileSync(`${path}.json`, 'utf8'))),
    );
  }
  for (const p of result.values()) p.catch(() => {}); // awaited (and reported) per model
  return result;
}

export async function main(argv: string[]): Promise<Record<string, unknown>> {
  const started = performance.now();
  const tiny = argv.includes('--tiny');
  const budgetS = Number(option(argv, 'budget-s', tiny ? '600' : '420'));
  const ids = option(argv, 'models', Object.keys(SHAPES).join(',')).split(',').filter(Boolean);
  const prefill = Number(option(argv, 'prefill', tiny ? '64' : '512'));
  const decode = Number(option(argv, 'decode', tiny ? '8' : '64'));
  const longPrefill = Number(option(argv, 'long-prefill', tiny ? '256' : '2048'));
  const out = option(argv, 'out', '');
  // Timestamps unquantized: Dawn rounds them (to ~65 us on the H200) unless timestamp_quantization is off.
  const flags = option(argv, 'dawn-flags', 'enable-dawn-features=allow_unsafe_apis,disable_robustness disable-dawn-features=timestamp_quantization').split(' ').filter(Boolean);
  const variantsOption = option(argv, 'variants', tiny ? 'none' : 'default');
  const variants: Variant[] = variantsOption === 'none' ? [] : variantsOption === 'default' ? VARIANTS : (JSON.parse(variantsOption) as Variant[]);
  const elapsed = () => (performance.now() - started) / 1000;

  Object.assign(globalThis, globals);
  const gpu = create(flags) as unknown as GPU; // referenced until the end: Dawn crashes if it is collected first
  (globalThis as Record<string, unknown>).__benchGpu = gpu;
  const adapter = await adapterReport(gpu);
  const nvidia = /nvidia/i.test(`${adapter.vendor} ${adapter.description}`);
  const bandwidth = Number(option(argv, 'bandwidth-gb-s', nvidia ? '4800' : '0')) || null;
  const report: Record<string, unknown> = {
    bench: 'gpu',
    date: new Date().toISOString(),
    tiny,
    dawn_flags: flags,
    node: process.version,
    adapter,
    bandwidth_gb_s: bandwidth,
    settings: { prefill_tokens_about: prefill, decode_tokens: decode, long_prefill_tokens_about: longPrefill, budget_s: budgetS },
    models: [] as ModelRow[],
    sampling: null as unknown,
    floor: null as FloorReport | { error: string } | null,
    skipped: [] as string[],
  };
  const save = () => {
    report.elapsed_s = round(elapsed(), 1);
    if (out) writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  };
  save();
  if (!adapter.found) throw new Error('Dawn found no WebGPU adapter (is a Vulkan driver installed and VK_DRIVER_FILES set?)');
  // Real shapes on a CPU adapter take hours: stop at once rather than spend a lent machine's minutes.
  const cpuAdapter = /swiftshader|llvmpipe|lavapipe|cpu/i.test(`${adapter.architecture} ${adapter.description} ${adapter.device}`);
  report.cpu_adapter = cpuAdapter;
  if (cpuAdapter && !tiny && !argv.includes('--allow-cpu')) {
    save();
    throw new Error(`the adapter is a CPU one (${adapter.description}): no GPU driver was found; real shapes need --allow-cpu (or --tiny)`);
  }
  process.stderr.write(`[bench/gpu] adapter: ${JSON.stringify({ vendor: adapter.vendor, description: adapter.description, architecture: adapter.architecture })}\n`);

  // The sampler first (seconds): every distinct vocabulary of the chosen models.
  const shapes: [string, BenchShape][] = [];
  for (const id of ids) {
    const s = SHAPES[id];
    if (!s) throw new Error(`unknown model ${id}: one of ${Object.keys(SHAPES).join(', ')}`);
    shapes.push([id, tiny ? tinyShape(s) : s]);
  }
  const dir = join(tmpdir(), `webgpu-responses-bench-gpu-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  // The models build on the CPU while the sampler runs on the GPU.
  const builds = buildAll(ids, dir, tiny);
  let samplingRows: SamplingBenchRow[] = [];
  if (!argv.includes('--no-sampling')) {
    const vocabs = [...new Set(tiny ? [151936] : shapes.map(([, s]) => s.vocab))];
    try {
      const result = await runSamplingBench(vocabs, tiny ? 3 : 9, { dawn: gpu });
      samplingRows = result.rows;
      report.sampling = { adapter: result.adapter, vocabs, rows: result.rows };
    } catch (error) {
      report.sampling = { error: String((error as Error)?.stack ?? error).slice(0, 2000) };
    }
    save();
    process.stderr.write(`[bench/gpu] sampling done at ${elapsed().toFixed(1)} s\n`);
  }

  // Models whose variants run after every model's own row (each variant loads the model again: not the 12 GB
  // gpt-oss-20b), with their files kept until then.
  const withVariants: [string, ModelRow, string][] = [];
  // The floors (seconds): the read bandwidth a kernel reaches and the cost of a chain of dispatches.
  let readGbS = 0;
  if (!argv.includes('--no-floor')) {
    try {
      const floor = await runFloorBench(gpu, tiny ? 64 * 2 ** 20 : 2 ** 30);
      report.floor = floor;
      readGbS = floor.read_gb_s;
    } catch (error) {
      report.floor = { error: String((error as Error)?.stack ?? error).slice(0, 2000) };
    }
    save();
    process.stderr.write(`[bench/gpu] floor done at ${elapsed().toFixed(1)} s\n`);
  }
  try {
    for (const [id, shape] of shapes) {
      if (elapsed() > budgetS) {
        (report.skipped as string[]).push(`${id}: the ${budgetS} s budget was spent`);
        save();
        continue;
      }
      const o = shape.options;
      const row: ModelRow = { id, name: shape.name, like: shape.like, arch: o.arch, layers: o.layers ?? 1, hidden: o.hidden ?? 0, vocab: shape.vocab };
      (report.models as ModelRow[]).push(row);
      try {
        const built = await builds.get(id)!;
        const path = join(dir, `${id}.gguf`);
        row.file_bytes = built.bytes;
        row.build_s = built.build_s;
        process.stderr.write(`[bench/gpu] ${id}: ${(built.bytes / 1e6).toFixed(0)} MB built in ${row.build_s} s (ready at ${elapsed().toFixed(1)} s)\n`);
        const r = await runCliCommand(
          { command: 'generate', prompt: promptOf(prefill), maxTokens: decode, temperature: 0, contextLength: Math.max(2048, prefill * 2 + decode + 64), profile: true },
          { gguf: fileSource(path) },
          gpu,
        );
        if (!('timings' in r)) throw new Error('generate gave no timings');
        if (longPrefill > 0 && id === shapes[0][0] && elapsed() < budgetS) {
          try {
            const l = await runCliCommand(
              { command: 'generate', prompt: promptOf(longPrefill), maxTokens: 16, temperature: 0, contextLength: longPrefill * 2 + 256 },
              { gguf: fileSource(path) },
              gpu,
            );
            if ('timings' in l) row.long_prefill = { prompt_tokens: l.usage.promptTokens, prefill_tok_s: l.timings.prefill_tok_s, prefill_ms: l.timings.prefill_ms, decode_tok_s: l.timings.decode_tok_s };
          } catch (error) {
            row.long_prefill = { error: String((error as Error)?.message ?? error).slice(0, 500) };
          }
        }
        if (built.bytes <= VARIANTS_MAX_BYTES && variants.length > 0) withVariants.push([id, row, path]);
        else rmSync(path, { force: true });
        row.parameters = r.model.parameters;
        row.weight_gpu_bytes = r.model.weight_gpu_bytes;
        row.weight_bytes_per_token = r.model.weight_bytes_per_token;
        row.dispatches_per_token = r.model.dispatches_per_token;
        row.prompt_tokens = r.usage.promptTokens;
        row.generated_tokens = r.usage.completionTokens;
        row.finish_reason = r.finish_reason;
        row.load_ms = r.timings.load_ms;
        row.prefill_tok_s = r.timings.prefill_tok_s;
        row.decode_tok_s = r.timings.decode_tok_s;
        row.decode_ms_per_token = r.timings.decode_tok_s > 0 ? round(1000 / r.timings.decode_tok_s) : undefined;
        row.decode_weight_gb_s = round((r.model.weight_bytes_per_token * r.timings.decode_tok_s) / 1e9);
        row.bandwidth_fraction = bandwidth ? round(row.decode_weight_gb_s / bandwidth) : null;
        if (readGbS > 0) row.measured_read_fraction = round(row.decode_weight_gb_s / readGbS);
        row.prefill_top_ops = topOps(r.profile?.prefill);
        row.decode_top_ops = topOps(r.profile?.decode);
        row.decode_gpu_ms = r.profile?.decode ? round(r.profile.decode.reduce((n, x) => n + x.ms, 0)) : undefined;
        const at = (name: string) => samplingRows.find((x) => x.vocab === (tiny ? 151936 : shape.vocab) && x.name === name);
        const greedy = at('greedy');
        const topP = at('top-p 0.9, temperature 1');
        if (greedy) row.sampling_greedy_ms = greedy.median_ms;
        if (topP) {
          row.sampling_top_p_ms = topP.median_ms;
          if (row.decode_ms_per_token) row.sampling_top_p_fraction_of_step = round(topP.median_ms / row.decode_ms_per_token);
        }
        process.stderr.write(`[bench/gpu] ${id}: prefill ${row.prefill_tok_s} tok/s, decode ${row.decode_tok_s} tok/s at ${elapsed().toFixed(1)} s\n`);
      } catch (error) {
        row.error = String((error as Error)?.stack ?? error).slice(0, 2000);
        process.stderr.write(`[bench/gpu] ${id}: ${row.error}\n`);
      }
      save();
    }
    for (const variant of variants) {
      for (const [id, row, path] of withVariants) {
        if (elapsed() > budgetS) break;
        const v: VariantRow = { name: variant.name };
        (row.variants ??= []).push(v);
        try {
          const vr = await runCliCommand(
            { command: 'generate', prompt: promptOf(prefill), maxTokens: Math.min(decode, 32), temperature: 0, contextLength: Math.max(2048, prefill * 2 + decode + 64), profile: true },
            { gguf: fileSource(path) },
            gpu,
            variant.engine,
          );
          if (!('timings' in vr)) throw new Error('generate gave no timings');
          v.prefill_tok_s = vr.timings.prefill_tok_s;
          v.decode_tok_s = vr.timings.decode_tok_s;
          v.decode_gpu_ms = vr.profile?.decode ? round(vr.profile.decode.reduce((n, x) => n + x.ms, 0)) : undefined;
          v.decode_top_ops = topOps(vr.profile?.decode);
        } catch (error) {
          v.error = String((error as Error)?.message ?? error).slice(0, 500);
        }
        process.stderr.write(`[bench/gpu] ${id} / ${variant.name}: ${v.error ?? `prefill ${v.prefill_tok_s} tok/s, decode ${v.decode_tok_s} tok/s`}\n`);
        save();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  save();
  return report;
}
