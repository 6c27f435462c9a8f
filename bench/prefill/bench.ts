// Prefill speed of the decoder alone (no tokenizer, no sampler) on Node's Dawn, old attention kernel against the
// KV-tiled one (shaders/attention_prefill.wgsl), at several prompt lengths: per length and kernel, the wall time
// and this process's CPU time of the whole prefill (SwiftShader runs the GPU work on this process's threads, so CPU
// time is the steadier number on a shared machine), tok/s, and the GPU ms per op of one more 64-token chunk at the
// end of the prompt (timestamp queries; the chunk where attention costs most). Rounds alternate old and new.
// Run by bench/prefill/run.mjs (Vite's SSR loader resolves the shaders' ?raw imports); prints JSON.
import { create, globals } from 'webgpu';
import { uploadTensors } from '../../src/model/upload-weights.ts';
import { acquireGpu } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { Decoder, type DecoderOptions } from '../../src/model/decoder.ts';
import { assembleDecoderWeights } from '../../src/model/decoder-weights.ts';
import { readGguf } from '../../src/model/gguf.ts';
import { modelConfigFromGguf } from '../../src/model/model-config.ts';
import { ggufTensorSources } from '../../src/model/weight-loader.ts';
import { modelSummary, round3, seededTokens } from './long.ts';
import { fileSource } from '../../src/node-host/file-source.ts';

export interface PrefillBenchOptions {
  model: string;
  lengths: number[];
  rounds: number;
  kernels: ('old' | 'new')[];
  /** Dawn toggles, as the Chromium benches pass them. */
  dawnFlags: string[];
}

interface Run {
  tokens: number;
  kernel: 'old' | 'new';
  round: number;
  wall_s: number;
  cpu_s: number;
  tok_s: number;
}

export async function runPrefillBench(o: PrefillBenchOptions): Promise<unknown> {
  Object.assign(globalThis, globals);
  const dawn = create(o.dawnFlags);
  const gpu = await acquireGpu({ gpu: dawn });
  const file = await readGguf(fileSource(o.model));
  const config = modelConfigFromGguf(file);
  const uploaded = await uploadTensors(gpu.device, ggufTensorSources(file));
  const weights = assembleDecoderWeights(config, (name) => uploaded.tensors.get(name), uploaded.ropeFreqFactors);
  const maxSeq = Math.max(...o.lengths) + 64; // past the model's context where asked: speed only
  const pipelines = new PipelineCache(gpu.device);
  const decoders = new Map<'old' | 'new', Decoder>();
  for (const kernel of o.kernels) {
    // old: prefill through attention.wgsl (one invocation per query and head), as before attention_prefill.
    const shapes: DecoderOptions['shapes'] = kernel === 'old' ? { forward: { attentionPrefill: { WORKGROUP_SIZE: 1, KV_TILE: 0, ROWS: 1, SHARED_KV: false } } } : undefined;
    decoders.set(kernel, await Decoder.create(gpu, config, weights, { maxSeq, pipelines, shapes }));
  }
  const runs: Run[] = [];
  const profiles: Record<string, unknown> = {};
  const tokensOf = seededTokens(config.vocabSize);
  for (const n of o.lengths) {
    for (let round = 0; round < o.rounds; round++) {
      // Alternate which kernel goes first, so that a change in the machine's load hits both alike.
      const order = round % 2 === 0 ? o.kernels : [...o.kernels].reverse();
      for (const kernel of order) {
        const decoder = decoders.get(kernel)!;
        decoder.kv.clear();
        const tokens = tokensOf(n);
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await decoder.forward(tokens, { logits: 'last' });
        const wall = (performance.now() - t0) / 1000;
        const cpu = process.cpuUsage(cpu0);
        const cpuS = (cpu.user + cpu.system) / 1e6;
        runs.push({ tokens: n, kernel, round, wall_s: round3(wall), cpu_s: round3(cpuS), tok_s: round3(n / wall) });
        process.stderr.write(`[bench/prefill] ${n} tokens, ${kernel}: ${wall.toFixed(2)} s wall, ${cpuS.toFixed(2)} s CPU\n`);
        if (round === 0) {
          const ops = await decoder.profile(tokensOf(Math.min(64, decoder.maxBatch)));
          profiles[`${n}/${kernel}`] = ops?.map((op) => ({ op: op.op, ms: round3(op.ms) })) ?? null;
        }
      }
    }
  }
  const summary = o.lengths.map((n) => {
    const row: Record<string, unknown> = { tokens: n };
    for (const kernel of o.kernels) {
      const mine = runs.filter((r) => r.tokens === n && r.kernel === kernel);
      row[kernel] = { median_wall_s: median(mine.map((r) => r.wall_s)), median_cpu_s: median(mine.map((r) => r.cpu_s)), median_tok_s: median(mine.map((r) => r.tok_s)), gpu_ms_per_op_last_chunk: profiles[`${n}/${kernel}`] };
    }
    return row;
  });
  for (const d of decoders.values()) d.destroy();
  uploaded.destroy();
  const info = gpu.adapterInfo;
  gpu.destroy();
  return {
    bench: 'prefill',
    model: { file: o.model, ...modelSummary(config, maxSeq) },
    adapter: { vendor: info.vendor, architecture: info.architecture, description: info.description },
    dawn_flags: o.dawnFlags,
    summary,
    runs,
  };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[s.length >> 1] : round3((s[s.length / 2 - 1] + s[s.length / 2]) / 2);
}
