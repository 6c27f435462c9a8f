// A model's weights uploaded and its decoder built beside the upload: the decoder needs the weights' buffers, not
// their bytes, so its KV cache, bind groups and pipelines (seconds of compiling on CPU adapters, where the 0.5B
// shape's took 5.3 s after a 2.2 s upload in Node's Dawn) are made while the file streams in; its copies from the
// weights (joined biases) wait for them (Decoder.create's weightsReady). The engine and the tests' decoders load so.
import type { GpuContext } from '../gpu/device.ts';
import { Decoder, type DecoderOptions } from './decoder.ts';
import type { DecoderWeights } from './decoder-types.ts';
import { assembleDecoderWeights } from './decoder-weights.ts';
import type { ModelConfig } from './model-config.ts';
import { uploadTensors, type TensorSource, type UploadedTensors, type UploadOptions } from './upload-weights.ts';

export interface LoadDecoderOptions {
  upload?: Omit<UploadOptions, 'onBuffers' | 'signal'>;
  decoder: Omit<DecoderOptions, 'weightsReady'>;
  /** Sees the assembled weights before the decoder is built (tests plant faults in them). */
  onWeights?: (weights: DecoderWeights) => void;
}

/**
 * Uploads `sources` and builds their decoder meanwhile. On failure nothing is left allocated; a decoder that fails
 * (a compile error, a shape it cannot run) stops the upload, and its error is the one thrown.
 */
export async function loadDecoder(gpu: GpuContext, config: ModelConfig, sources: readonly TensorSource[], options: LoadDecoderOptions): Promise<{ uploaded: UploadedTensors; decoder: Decoder }> {
  // Aborted only by a failing decoder: the upload stops for it.
  const stop = new AbortController();
  let weightsIn!: () => void;
  let weightsLost!: (reason: Error) => void;
  const weightsReady = new Promise<void>((resolve, reject) => {
    weightsIn = resolve;
    weightsLost = reject;
  });
  weightsReady.catch(() => undefined); // a decoder that failed before waiting for it no longer listens
  let decoder: Promise<Decoder> | undefined;
  let uploaded: UploadedTensors | undefined;
  try {
    uploaded = await uploadTensors(gpu.device, sources, {
      ...options.upload,
      signal: stop.signal,
      onBuffers: (tensors, ropeFreqFactors) => {
        const weights = assembleDecoderWeights(config, (name) => tensors.get(name), ropeFreqFactors);
        options.onWeights?.(weights);
        decoder = Decoder.create(gpu, config, weights, { ...options.decoder, weightsReady });
        decoder.catch(() => stop.abort());
      },
    });
    weightsIn();
    if (!decoder) throw new Error('the weight upload built no decoder');
    return { uploaded, decoder: await decoder };
  } catch (error) {
    // Aborted already: the decoder failed first and stopped the upload; its failure is the reason.
    const decoderFirst = stop.signal.aborted;
    weightsLost(new Error('the weights did not load'));
    const built = await (decoder ?? Promise.resolve(null)).then((d) => ({ ok: true as const, d }), (reason: unknown) => ({ ok: false as const, reason }));
    if (built.ok) built.d?.destroy();
    uploaded?.destroy();
    if (decoderFirst && !built.ok) throw built.reason;
    throw error;
  }
}
