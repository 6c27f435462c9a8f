// Decode cost per step of the Decoder itself in Node on Dawn: CPU time (process.cpuUsage, user + system) and wall
// time per greedy decode step after a short prefill, so recording and encoding costs show apart from the engine.
// --in-flight N[,N...]: Decoder.decode keeps N steps submitted (1: each step is encoded after the previous token came
// back); with several values, --rounds R rounds each decode the same `steps` tokens from the same position with
// every value, the order rotating per round, and the output adds per-value medians and the paired ratios (per round,
// against the first value).
// With --record-only it only records decode steps at successive positions (finished, never submitted): the CPU cost
// of encoding a step alone (the forward plan's step).
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json \
//     node --import ./bench/decode/raw-import.mjs --import tsx bench/decode/step-cpu.ts --model public/models/toy-qwen3/model.gguf [--steps 64] [--in-flight 1,2,3] [--rounds 5]
// Prints one JSON line: { model, steps, in_flight, cpu_ms_per_step, wall_ms_per_step, tok_s, dispatches } (one
// value), or { model, steps, rounds, load, medians: { N: { tok_s, cpu_ms_per_step } }, paired: { N: { tok_s, cpu } }, runs }.
import { create, globals } from 'webgpu';
import { acquireGpu } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { openModel } from '../../src/model/open-model.ts';
import { uploadTensors } from '../../src/model/upload-weights.ts';
import { assembleDecoderWeights } from '../../src/model/decoder-weights.ts';
import { Decoder } from '../../src/model/decoder.ts';
import { fileSource } from '../../src/node-host/file-source.ts';

Object.assign(globalThis, globals);
const dawn = create([]);
const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : fallback);
const modelPath = option('model', 'public/models/toy-qwen3/model.gguf');
const steps = Number(option('steps', '64'));
const inFlights = option('in-flight', '1').split(',').map(Number);
const rounds = Number(option('rounds', inFlights.length > 1 ? '5' : '1'));
const recordOnly = argv.includes('--record-only');

const gpu = await acquireGpu({ gpu: dawn });
const opened = await openModel({ id: 'bench', gguf: fileSource(modelPath) });
const uploaded = await uploadTensors(gpu.device, opened.tensors);
const weights = assembleDecoderWeights(opened.config, (name) => uploaded.tensors.get(name), uploaded.ropeFreqFactors);
const decoder = await Decoder.create(gpu, opened.config, weights, { maxSeq: 1024 });
const prompt = Array.from({ length: 16 }, (_, i) => (i * 7 + 3) % opened.config.vocabSize);
let { nextToken } = await decoder.forward(prompt);
// Warm-up steps (first-use costs), then the measured ones.
for (let i = 0; i < 4; i++) nextToken = (await decoder.forward([nextToken])).nextToken;
if (recordOnly) {
  const inner = decoder as unknown as { plan: { step: (b: ComputeBatch, s: object) => void } };
  const pos = decoder.kv.length;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < steps; i++) {
    const batch = new ComputeBatch(gpu, 'record only');
    inner.plan.step(batch, { m: 1, pos0: pos + i, input: 'gpu', mode: 'none', chooser: null });
    batch.endPass();
    batch.encoder.finish();
  }
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ model: modelPath, steps, record_only: true, cpu_ms_per_step: round3((cpu.user + cpu.system) / 1000 / steps) }));
} else {
  // Every run decodes the same tokens from the same position: back to `base` positions, from `first`.
  const base = decoder.kv.length;
  const first = nextToken;
  const runs: { round: number; in_flight: number; cpu_ms_per_step: number; wall_ms_per_step: number; tok_s: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = inFlights.map((_, i) => inFlights[(i + round) % inFlights.length]);
    for (const inFlight of order) {
      decoder.kv.truncate(base);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for await (const _ of decoder.decode(first, { maxSteps: steps, inFlight }));
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      runs.push({ round, in_flight: inFlight, cpu_ms_per_step: round3((cpu.user + cpu.system) / 1000 / steps), wall_ms_per_step: round3(wall / steps), tok_s: Math.round((steps / wall) * 1000 * 10) / 10 });
    }
  }
  if (runs.length === 1) {
    console.log(JSON.stringify({ model: modelPath, steps, ...runs[0], round: undefined, dispatches: decoder.lastStepDispatches }));
  } else {
    const of = (n: number, key: 'tok_s' | 'cpu_ms_per_step') => runs.filter((r) => r.in_flight === n).map((r) => r[key]);
    const ratio = (n: number, key: 'tok_s' | 'cpu_ms_per_step') => median(Array.from({ length: rounds }, (_, r) => {
      const at = (m: number) => runs.find((x) => x.round === r && x.in_flight === m)![key];
      return key === 'tok_s' ? at(n) / at(inFlights[0]) : at(inFlights[0]) / at(n);
    }));
    console.log(JSON.stringify({
      model: modelPath, steps, rounds, dispatches: decoder.lastStepDispatches,
      medians: Object.fromEntries(inFlights.map((n) => [n, { tok_s: median(of(n, 'tok_s')), cpu_ms_per_step: median(of(n, 'cpu_ms_per_step')) }])),
      // Per round, against the first value: tok/s ratio, and CPU ms per step of the first / this one (> 1: less CPU).
      paired: Object.fromEntries(inFlights.slice(1).map((n) => [n, { tok_s: round3(ratio(n, 'tok_s')), cpu: round3(ratio(n, 'cpu_ms_per_step')) }])),
      runs,
    }));
  }
}
decoder.destroy();
uploaded.destroy();
gpu.destroy();
process.exit(0);

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
