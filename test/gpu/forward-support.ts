// Page-side helpers of the forward-pass tests: fixtures served by Vite (written by forward-fixtures.ts), a
// decoder built from a fixture GGUF, and logit comparison.
import { acquireGpu, type GpuContext } from '../../src/gpu/device.ts';
import { PipelineCache } from '../../src/gpu/pipeline-cache.ts';
import { uploadTensors, type TensorSource, type UploadedTensors } from '../../src/model/upload-weights.ts';
import { openModel } from '../../src/model/open-model.ts';
import { Decoder, type DecoderOptions } from '../../src/model/decoder.ts';
import { assembleDecoderWeights } from '../../src/model/decoder-weights.ts';
import { readGguf, type GgufFile } from '../../src/model/gguf.ts';
import { modelConfigFromGguf } from '../../src/model/model-config.ts';
import { ggufTensorSources } from '../../src/model/weight-loader.ts';
import type { ForwardFixtureIndex } from './forward-cases.ts';
export { maxAbsDiff } from '../support/logit-diff.ts';

export async function loadFixtureIndex(): Promise<ForwardFixtureIndex> {
  const response = await fetch('/.tmp/forward-fixtures/index.json');
  if (!response.ok) {
    throw new Error('No forward fixtures: run `npx tsx test/gpu/forward-fixtures.ts` (or the vitest globalSetup) first');
  }
  return (await response.json()) as ForwardFixtureIndex;
}

export async function fetchGguf(path: string): Promise<GgufFile> {
  const response = await fetch(path);
  if (!response.ok) throw new Error(`fetch ${path}: HTTP ${response.status}`);
  return readGguf(new Uint8Array(await response.arrayBuffer()));
}

let shared: { gpu: GpuContext; pipelines: PipelineCache } | null = null;

export async function sharedGpu(): Promise<{ gpu: GpuContext; pipelines: PipelineCache }> {
  if (!shared) {
    const gpu = await acquireGpu({ label: 'forward tests' });
    shared = { gpu, pipelines: new PipelineCache(gpu.device) };
  }
  return shared;
}

export interface TestDecoder {
  decoder: Decoder;
  uploaded: UploadedTensors;
  destroy(): void;
}

export async function decoderFromGguf(
  file: GgufFile,
  options: { maxSeq?: number; maxBatch?: number; maxPartBytes?: number; shapes?: DecoderOptions['shapes']; groupLayerMatrices?: boolean; widenF16?: boolean } = {},
): Promise<TestDecoder> {
  const { gpu, pipelines } = await sharedGpu();
  const config = modelConfigFromGguf(file);
  const sources: TensorSource[] = ggufTensorSources(file);
  const uploaded = await uploadTensors(gpu.device, sources, { maxPartBytes: options.maxPartBytes, groupLayerMatrices: options.groupLayerMatrices, widenF16: options.widenF16 });
  const weights = assembleDecoderWeights(config, (name) => uploaded.tensors.get(name), uploaded.ropeFreqFactors);
  const decoder = await Decoder.create(gpu, config, weights, { maxSeq: options.maxSeq ?? 128, maxBatch: options.maxBatch, pipelines, shapes: options.shapes });
  return {
    decoder,
    uploaded,
    destroy: () => {
      decoder.destroy();
      uploaded.destroy();
    },
  };
}

/** A decoder for a Hugging Face directory served at `baseUrl` (through the engine's model opener). */
export async function decoderFromHfDir(baseUrl: string, options: { maxSeq?: number } = {}): Promise<TestDecoder> {
  const { gpu, pipelines } = await sharedGpu();
  const opened = await openModel({ id: 'hf', hfDir: baseUrl });
  const uploaded = await uploadTensors(gpu.device, opened.tensors);
  const weights = assembleDecoderWeights(opened.config, (name) => uploaded.tensors.get(name), uploaded.ropeFreqFactors);
  const decoder = await Decoder.create(gpu, opened.config, weights, { maxSeq: options.maxSeq ?? 128, pipelines });
  return {
    decoder,
    uploaded,
    destroy: () => {
      decoder.destroy();
      uploaded.destroy();
    },
  };
}

