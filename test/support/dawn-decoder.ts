// The setup the Dawn (Node WebGPU) tests share: the process's one Dawn GPU object, a device with a pipeline cache
// (or the reason there is none, which the tests fail with: see dawn-adapter.ts), generated models with llama.cpp's
// answers for them, the logits of a Decoder built from a model's tensors, and for the engine tests the bundled toy
// model's Hugging Face folder under another chat template.
// Dawn needs a Vulkan driver: LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
import { openAsBlob, readFileSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { loadDecoder } from '../../src/model/load-decoder.ts';
import type { DecoderOptions, DecoderWeights } from '../../src/model/decoder.ts';
import type { ModelConfig } from '../../src/model/model-config.ts';
import type { TensorSource } from '../../src/model/weight-loader.ts';
import { runLlamaOracle, type LlamaOracleJob, type LlamaOracleResult } from './llama-oracle.ts';
import { makeTestModel, type TestModel, type TestModelOptions } from './test-models.ts';

Object.assign(globalThis, globals);
/** Dawn's GPU object: one per process, outliving every device made from it (Node crashes if it is collected first). */
export const dawn = create([]);

/** Why Dawn gave no device, as the tests say it. */
function noAdapter(error: unknown): string {
  return `no WebGPU adapter on Dawn (${error instanceof Error ? error.message : String(error)}); set LD_LIBRARY_PATH and VK_ICD_FILENAMES as vitest.config.ts does`;
}

/** A Dawn device and its pipeline cache; `gpu` null and `missing` saying why when there is no adapter. */
export interface DawnDevice {
  gpu: GpuContext | null;
  pipelines: PipelineCache | null;
  missing: string;
}

export async function acquireDawn(label?: string): Promise<DawnDevice> {
  try {
    const gpu = await acquireGpu({ gpu: dawn, ...(label ? { label } : {}) });
    return { gpu, pipelines: new PipelineCache(gpu.device), missing: '' };
  } catch (error) {
    return { gpu: null, pipelines: null, missing: noAdapter(error) };
  }
}

/** '' when Dawn has an adapter (the device made to ask is destroyed), else why not: for tests that make an engine. */
export async function dawnMissing(): Promise<string> {
  const { gpu, missing } = await acquireDawn();
  gpu?.destroy();
  return missing;
}

/**
 * The generated model of each case and llama.cpp's answer on it (one oracle run for all), by case name. `job` gives
 * the oracle's job for a case's model (its tokens, greedy steps).
 */
export async function modelsWithOracle<C extends { name: string; options: TestModelOptions }>(
  cases: readonly C[],
  job: (model: TestModel, c: C) => LlamaOracleJob,
): Promise<Map<string, { model: TestModel; oracle: LlamaOracleResult }>> {
  const generated: TestModel[] = [];
  for (const c of cases) generated.push(await makeTestModel(c.options));
  const oracle = runLlamaOracle(generated.map((m, i) => job(m, cases[i]!)));
  return new Map(cases.map((c, i) => [c.name, { model: generated[i]!, oracle: oracle[i]! }]));
}

export interface DecoderRun {
  /** Tokens the first forward pass takes (logits at every position); each later token is one decode step. Default: all. */
  prefill?: number;
  /** Decoder options besides the pipeline cache (default maxSeq 64). */
  decoder?: Partial<Omit<DecoderOptions, 'pipelines'>>;
  /** Upload the tensors in buffers of at most this many bytes. */
  maxPartBytes?: number;
  /** Sees (or edits) the assembled weights before the decoder is made. */
  poke?: (weights: DecoderWeights) => void;
}

/**
 * Logits at every position of `tokens` from a Decoder over `sources` with `config` on the Dawn device: a prefill of
 * `run.prefill` tokens, then one decode step per further token. Fails with `device.missing` when there is no adapter.
 */
export async function decoderLogits(device: DawnDevice, config: ModelConfig, sources: TensorSource[], tokens: number[], run: DecoderRun = {}): Promise<Float32Array[]> {
  const { gpu, pipelines } = device;
  if (!gpu || !pipelines) throw new Error(device.missing);
  // Built as the engine builds it: beside the upload (src/model/load-decoder.ts).
  const { uploaded, decoder } = await loadDecoder(gpu, config, sources, {
    upload: run.maxPartBytes ? { maxPartBytes: run.maxPartBytes } : undefined,
    decoder: { maxSeq: 64, ...run.decoder, pipelines },
    onWeights: run.poke,
  });
  try {
    const prefill = run.prefill ?? tokens.length;
    const out = (await decoder.forward(tokens.slice(0, prefill), { logits: 'all' })).logits!;
    for (const t of tokens.slice(prefill)) out.push(...(await decoder.forward([t], { logits: 'last' })).logits!);
    return out;
  } finally {
    decoder.destroy();
    uploaded.destroy();
  }
}

const TOY = 'public/models/toy-qwen3';

/** The bundled toy model's Hugging Face folder (weights and tokenizer) with `chatTemplate` as its template. */
export async function toyHfDir(chatTemplate: string): Promise<Record<string, Blob | Uint8Array>> {
  const config = JSON.parse(readFileSync(`${TOY}/tokenizer_config.json`, 'utf8')) as Record<string, unknown>;
  return {
    'config.json': await openAsBlob(`${TOY}/config.json`),
    'generation_config.json': await openAsBlob(`${TOY}/generation_config.json`),
    'tokenizer.json': await openAsBlob(`${TOY}/tokenizer.json`),
    'model.safetensors': await openAsBlob(`${TOY}/model.safetensors`),
    'tokenizer_config.json': new TextEncoder().encode(JSON.stringify({ ...config, chat_template: chatTemplate })),
  };
}
