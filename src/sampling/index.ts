// Sampling on the GPU and constrained decoding: the public surface the engine uses.
//   const sampler = await createSampler(gpu, vocabSize, { pipelines });
//   const constraint = compileConstraint(spec, vocabulary);            // checkConstraintForRequest(spec) at request time
//   per step: sampler.encode(batch, logitsRow, params, step, { mask: constraint.allowedMask() }); batch.submit();
//             const [{ token, logprob, top }] = await sampler.read(); constraint.accept(token);
export * from './constraints/index.ts';
export { type EncodeOptions, GpuSampler, MAX_TOP_LOGPROBS, type SampledToken, type SamplerOptions, createSampler } from './gpu-sampler.ts';
