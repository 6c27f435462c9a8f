// Decode cost per step of the Decoder itself in Node on Dawn: CPU time (process.cpuUsage, user + system) and wall
// time per greedy decode step after a short prefill, so recording and encoding costs show apart from the engine.
// --in-flight N: Decoder.decode keeps N steps submitted (1: each step is encoded after the previous token came back).
// With --record-only it only records decode steps at successive positions (finished, never submitted): the CPU cost
// of encoding a step alone (the forward plan's step, or before it Decoder.record).
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json \
//     node --import ./bench/decode/raw-import.mjs --import tsx bench/decode/step-cpu.ts --model public/models/toy-qwen3/model.gguf [--steps 64] [--in-flight 1]
// Prints one JSON line: { model, steps, in_flight, cpu_ms_per_step, wall_ms_per_step, tok_s, dispatches }.
import { openAsBlob } from 'node:fs';
import { create, globals } from 'webgpu';
import { acquireGpu } from '../../src/gpu/device.ts';
import { ComputeBatch } from '../../src/gpu/dispatch.ts';
import { openModel } from '../../src/engine/model-registry.ts';
import { uploadTensors } from '../../src/engine/upload-weights.ts';
import { assembleDecoderWeights } from '../../src/model/decoder-weights.ts';
import { Decoder } from '../../src/model/decoder.ts';

Object.assign(globalThis, globals);
const dawn = create([]);
const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : fallback);
const modelPath = option('model', 'public/models/toy-qwen3/model.gguf');
const steps = Number(option('steps', '64'));
const inFlight = Number(option('in-flight', '1'));
const recordOnly = argv.includes('--record-only');

const gpu = await acquireGpu({ gpu: dawn });
const opened = await openModel({ id: 'bench', gguf: await openAsBlob(modelPath) });
const uploaded = await uploadTensors(gpu.device, opened.tensors);
const weights = assembleDecoderWeights(opened.config, (name) => uploaded.tensors.get(name), uploaded.ropeFreqFactors);
const decoder = await Decoder.create(gpu, opened.config, weights, { maxSeq: 1024 });
const prompt = Array.from({ length: 16 }, (_, i) => (i * 7 + 3) % opened.config.vocabSize);
let { nextToken } = await decoder.forward(prompt);
// Warm-up steps (first-use costs), then the measured ones.
for (let i = 0; i < 4; i++) nextToken = (await decoder.forward([nextToken])).nextToken;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
if (recordOnly) {
  const inner = decoder as unknown as {
    plan?: { step: (b: ComputeBatch, s: object) => void };
    record?: (b: ComputeBatch, tokens: GPUBuffer, m: number, pos0: number, mode: string) => void;
    nextToken?: GPUBuffer;
  };
  const pos = decoder.kv.length;
  for (let i = 0; i < steps; i++) {
    const batch = new ComputeBatch(gpu, 'record only');
    if (inner.plan) inner.plan.step(batch, { m: 1, pos0: pos + i, input: 'gpu', mode: 'none', chooser: null });
    else inner.record!.call(decoder, batch, inner.nextToken!, 1, pos + i, 'none');
    batch.endPass();
    batch.encoder.finish();
  }
} else {
  for await (const _ of decoder.decode(nextToken, { maxSteps: steps, inFlight }));
}
const wall = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({
  model: modelPath, steps, in_flight: inFlight, record_only: recordOnly,
  cpu_ms_per_step: Math.round(((cpu.user + cpu.system) / 1000 / steps) * 1000) / 1000,
  wall_ms_per_step: Math.round((wall / steps) * 1000) / 1000,
  tok_s: Math.round((steps / wall) * 1000 * 10) / 10,
  dispatches: decoder.lastStepDispatches,
}));
decoder.destroy();
uploaded.destroy();
gpu.destroy();
process.exit(0);
