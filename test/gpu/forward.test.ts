// The WGSL forward pass against the TypeScript reference (test/support/cpu-forward.ts, itself checked against
// llama.cpp in test/unit/forward-reference.test.ts) and against llama.cpp directly, on generated models of
// every architecture and tensor type, in headless Chromium.
//
// Tolerances (max |GPU - x| over every logit of 47 positions; logits ~ N(0, 1)):
// - vs the reference: both dequantize the same weights exactly and compute in f32 (GPU) / f64 (reference);
//   only f32 rounding differs: 1e-4 for every type (observed maxima are printed). Where the decoder's kernels take
//   8-bit activations (ForwardKernels.int8Product: where kernel shapes ask, INT8 below), the reference quantizes those
//   products' inputs the same way, a fused norm's before its 1/rms (q8ActivationsOf).
// - vs llama.cpp: F32 1e-4; F16 1e-2; BF16 5e-2; quantized 0.15 / 0.2 (K-quants): llama.cpp converts activations to F16 (BF16)
//   or quantizes them to Q8_0/Q8_K for these weight types, see test/unit/forward-reference.test.ts.
// Greedy: 32 free-running tokens equal the reference's for every type and llama.cpp's for F32/F16; against
// llama.cpp with quantized weights teacher-forced, with mismatches allowed only where llama.cpp's own top two
// logits are within 2x the tolerance (its quantized activations flip near ties, see forward-reference.test.ts).
import { beforeAll, describe, expect, test } from 'vitest';
import { argmax, referenceForward, referenceModelFromGguf, referenceNearTies, type Q8Activations, type ReferenceStep } from '../support/cpu-forward.ts';
import { FORWARD_CASES, FORWARD_GREEDY, FORWARD_PROMPT, type ForwardFixtureIndex } from './forward-cases.ts';
import { createStorageBuffer } from '../../src/gpu/transfer.ts';
import { Decoder, type DecoderLayerWeights, type DecoderOptions, type DecoderWeights, type GpuMatrix, type GpuVector, type TokenChooser } from '../../src/model/decoder.ts';
import { ffnMatrices, productMatrices, qkvMatrices } from '../../src/model/decoder-types.ts';
import { isCpuAdapter } from '../../src/gpu/kernel-shapes.ts';
import type { ModelConfig } from '../../src/model/model-config.ts';
import { decoderFromGguf, decoderFromHfDir, fetchGguf, loadFixtureIndex, maxAbsDiff, sharedGpu } from './forward-support.ts';

const LLAMA_TOLERANCE: Record<string, number> = { F32: 1e-4, F16: 1e-2, BF16: 5e-2, Q8_0: 0.15, Q4_0: 0.15, Q4_K: 0.2, Q6_K: 0.2 };
const REFERENCE_TOLERANCE = 1e-4;

/**
 * The products `decoder` runs on 8-bit activations, by weight name and step size, as its own ForwardKernels chose
 * them (int8Product of each matrix's GPU type) and as the reference's q8 mode takes them.
 */
function q8ActivationsOf(decoder: Decoder): Q8Activations {
  const fk = decoder['fk'];
  const types = new Map<string, GpuMatrix['type']>([['output.weight', decoder.weights.lmHead.type]]);
  decoder.weights.layers.forEach((l, i) => {
    const p = `blk.${i}.`;
    const [q, k = q, v = q] = qkvMatrices(l.qkv);
    const ffn = ffnMatrices(l); // [gate and up stacked, down] or [gate, up, down]
    const [gate, up, down] = ffn.length === 2 ? [ffn[0], ffn[0], ffn[1]] : ffn;
    for (const [name, m] of [['attn_q', q], ['attn_k', k], ['attn_v', v], ['attn_output', l.wo], ['ffn_gate', gate], ['ffn_up', up], ['ffn_down', down]] as const) types.set(`${p}${name}.weight`, m.type);
  });
  const q8 = (tensor: string, m: number): boolean => {
    const type = types.get(tensor);
    if (!type) throw new Error(`q8 activations: no product weight ${tensor}`);
    return fk.int8Product(type, m);
  };
  return Object.assign(q8, { fusedNorms: decoder.fusedNorms });
}

/** The m of each position when `count` tokens go through a decoder in chunks of maxBatch. */
function chunkSizes(count: number, maxBatch: number): number[] {
  return Array.from({ length: count }, (_, i) => Math.min(maxBatch, count - Math.floor(i / maxBatch) * maxBatch));
}

/** Reference steps for `tokens` run in GPU steps of these sizes (logits 'all': the LM head over every row). */
function stepsOf(tokens: readonly number[], m: readonly number[]): ReferenceStep[] {
  return tokens.map((token, i) => ({ token, m: m[i] }));
}

let index: ForwardFixtureIndex;
beforeAll(async () => {
  index = await loadFixtureIndex();
});

describe('forward pass on WebGPU', () => {
  test.each(FORWARD_CASES.map((c) => [c.id, c] as const))('%s: logits at every position, greedy decoding', async (id, c) => {
    const fixture = index.cases.find((x) => x.id === id)!;
    const file = await fetchGguf(fixture.gguf);
    const reference = await referenceModelFromGguf(file);
    const { decoder, destroy } = await decoderFromGguf(file);
    try {
      expect(decoder.fusedNorms, 'the layers\' norms ride on the products (forward-plan.ts fusedNorms)').toBe(true);
      const greedy = fixture.llama.greedy;
      const sequence = [...FORWARD_PROMPT, ...greedy.slice(0, -1)];
      const q8 = q8ActivationsOf(decoder);
      // Prefill the whole sequence in one batched step, all logits back.
      const { logits } = await decoder.forward(sequence, { logits: 'all' });
      const vsReference = referenceNearTies(reference, stepsOf(sequence, sequence.map(() => sequence.length)), q8, logits!, REFERENCE_TOLERANCE).maxDiff;
      const vsLlama = maxAbsDiff(logits!, fixture.llama.logits);
      const tolerance = LLAMA_TOLERANCE[c.options.type];
      let nearTies = 0;
      for (let i = 0; i < FORWARD_GREEDY; i++) {
        const p = FORWARD_PROMPT.length - 1 + i;
        const ours = argmax(logits![p]);
        if (ours === greedy[i]) continue;
        nearTies++;
        expect(fixture.llama.logits[p][greedy[i]] - fixture.llama.logits[p][ours], `step ${i}: not a near tie`).toBeLessThan(2 * tolerance);
      }
      // Free-running greedy: prefill the prompt, then one token per step (each reads the previous argmax on the GPU).
      decoder.kv.clear();
      let step = await decoder.forward(FORWARD_PROMPT, { logits: 'last' });
      const free = [step.nextToken];
      const freeLogits = [step.logits![0]];
      while (free.length < FORWARD_GREEDY) {
        step = await decoder.forward([free.at(-1)!], { logits: 'last' });
        free.push(step.nextToken);
        freeLogits.push(step.logits![0]);
      }
      const agree = free.findIndex((t, i) => t !== greedy[i]);
      // The reference on the same tokens (the prompt as one step with the LM head of its last row, then decode
      // steps): logits at every step, and its argmax, so greedy agrees for 32 tokens for every type.
      const P = FORWARD_PROMPT.length;
      const freeSequence = [...FORWARD_PROMPT, ...free.slice(0, -1)];
      const freeSteps = freeSequence.map((token, i): ReferenceStep => (i < P ? { token, m: P, headM: 1 } : { token, m: 1 }));
      const near = referenceNearTies(reference, freeSteps, q8, freeSequence.map((_, i) => (i < P - 1 ? null : freeLogits[i - P + 1])), REFERENCE_TOLERANCE);
      const vsReferenceDecode = near.maxDiff;
      expect(free).toEqual(near.logits.slice(P - 1).map((l) => argmax(l)));
      const int8 = q8('blk.0.ffn_down.weight', 1) ? `int8 activations, ${near.flipped.length} near-tie values rounded the other way` : 'f32 activations';
      console.log(
        `${id}: max |GPU - reference| = ${vsReference.toExponential(2)} (prefill), ${vsReferenceDecode.toExponential(2)} (decode, ${int8}), max |GPU - llama.cpp| = ${vsLlama.toExponential(2)} ` +
          `over ${sequence.length} positions; teacher-forced near ties ${nearTies}; free-running greedy agrees for ${agree < 0 ? FORWARD_GREEDY : agree} tokens`,
      );
      expect(vsReference).toBeLessThan(REFERENCE_TOLERANCE);
      expect(vsReferenceDecode).toBeLessThan(REFERENCE_TOLERANCE);
      expect(vsLlama).toBeLessThan(tolerance);
      if (c.options.type === 'F32' || c.options.type === 'F16') expect(free).toEqual(greedy);
    } finally {
      destroy();
    }
  });
});

describe('decoder invariants', () => {
  const prompt = FORWARD_PROMPT;

  // 8-bit activations are a kernel-shapes option (no adapter takes them by default: kernel-shapes.ts).
  const INT8: DecoderOptions['shapes'] = { forward: { int8Activations: { Q8_0: false, Q4_0: true, prefill: false } } };

  test('8-bit activations only where the shapes ask: then Q4_0 decode steps take them and match the reference\'s q8 mode', async () => {
    const { gpu } = await sharedGpu();
    // GpuContext records the GPU object's WGSL language features (navigator.gpu's in a page).
    expect([...gpu.wgslLanguageFeatures].sort()).toEqual([...navigator.gpu.wgslLanguageFeatures].sort());
    expect(isCpuAdapter(gpu.adapterInfo)).toBe(true);
    for (const id of ['llama-q8_0', 'qwen2-q4_0', 'qwen3-f32']) {
      for (const shapes of [undefined, INT8]) {
        const { decoder, destroy } = await decoderFromGguf(await fetchGguf(index.cases.find((x) => x.id === id)!.gguf), { shapes });
        try {
          const q8 = q8ActivationsOf(decoder);
          const names = ['blk.0.attn_q.weight', 'blk.0.attn_output.weight', 'blk.0.ffn_gate.weight', 'blk.0.ffn_down.weight'];
          expect(names.map((n) => q8(n, 1)), `${id} ${shapes ? 'int8' : 'default'}`).toEqual(names.map(() => shapes !== undefined && id.endsWith('q4_0')));
        } finally {
          destroy();
        }
      }
    }
    // Decode steps on int8 activations against the reference's q8 mode (the prompt as one f32 step, then 12 steps).
    const file = await fetchGguf(index.cases.find((x) => x.id === 'qwen2-q4_0')!.gguf);
    const reference = await referenceModelFromGguf(file);
    const { decoder, destroy } = await decoderFromGguf(file, { shapes: INT8 });
    try {
      const q8 = q8ActivationsOf(decoder);
      expect(q8('blk.0.ffn_down.weight', 1)).toBe(true);
      let step = await decoder.forward(FORWARD_PROMPT, { logits: 'last' });
      const tokens = [step.nextToken];
      const logits = [step.logits![0]];
      while (tokens.length < 12) {
        step = await decoder.forward([tokens.at(-1)!], { logits: 'last' });
        tokens.push(step.nextToken);
        logits.push(step.logits![0]);
      }
      const P = FORWARD_PROMPT.length;
      const sequence = [...FORWARD_PROMPT, ...tokens.slice(0, -1)];
      const steps = sequence.map((token, i): ReferenceStep => (i < P ? { token, m: P, headM: 1 } : { token, m: 1 }));
      const near = referenceNearTies(reference, steps, q8, sequence.map((_, i) => (i < P - 1 ? null : logits[i - P + 1])), REFERENCE_TOLERANCE);
      expect(near.maxDiff).toBeLessThan(REFERENCE_TOLERANCE);
      expect(tokens).toEqual(near.logits.slice(P - 1).map((l) => argmax(l)));
    } finally {
      destroy();
    }
  });

  test('Q4_0 decode steps on int8 activations take them from the products that wrote them: 3 quantize dispatches fewer a layer', async () => {
    const file = await fetchGguf(index.cases.find((x) => x.id === 'qwen2-q4_0')!.gguf);
    const dispatches: number[] = [];
    let layers = 0;
    // The hand-off needs one invocation a row group (K_SPLIT 1): with 2, every int8 product quantizes its own input.
    for (const product of [undefined, { WORKGROUP_SIZE: 16, K_SPLIT: 2, TILE_M: 4 }]) {
      const { decoder, destroy } = await decoderFromGguf(file, { shapes: { forward: { ...INT8!.forward, ...(product ? { product } : {}) } } });
      try {
        layers = decoder.weights.layers.length;
        await decoder.forward(FORWARD_PROMPT.slice(0, 3));
        await decoder.forward([FORWARD_PROMPT[3]]);
        dispatches.push(decoder.lastStepDispatches);
      } finally {
        destroy();
      }
    }
    // Per layer the gate/up product's input (the output product's hand-off) and the down product's (gate/up's), and
    // past layer 0 the q/k/v products' (the down product's before them); the LM head's too (Q4_0 here).
    expect(dispatches[1] - dispatches[0]).toBe(3 * layers);
  });

  test('a weight row length that is not whole product blocks is refused before anything is allocated, naming the tensor', async () => {
    const { gpu } = await sharedGpu();
    const matrix = (name: string, cols: number): GpuMatrix => ({ name, type: 'F32', rows: 8, cols, parts: [] });
    const vector = (name: string): GpuVector => ({ name, buffer: gpu.device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE }), length: 4 });
    const layer: DecoderLayerWeights = {
      attnNorm: vector('attn_norm'),
      qkv: { q: matrix('blk.0.attn_q.weight', 66), k: matrix('blk.0.attn_k.weight', 66), v: matrix('blk.0.attn_v.weight', 66) },
      wo: matrix('blk.0.attn_output.weight', 64),
      ffnNorm: vector('ffn_norm'),
      gateUp: { stacked: { ...matrix('blk.0.ffn_gate_up.weight', 66), stacked: 2 } },
      wDown: matrix('blk.0.ffn_down.weight', 64),
    };
    const config = { headDim: 32, layers: 1 } as ModelConfig;
    const weights: DecoderWeights = { tokenEmbedding: matrix('token_embd.weight', 66), layers: [layer], outputNorm: vector('output_norm'), lmHead: matrix('output.weight', 66) };
    await expect(Decoder.create(gpu, config, weights, { maxSeq: 16 })).rejects.toThrow(
      'output.weight: rows of 66 weights are not a multiple of 4, which the F32 product kernel needs',
    );
    for (const v of [layer.attnNorm, layer.ffnNorm, weights.outputNorm]) v.buffer.destroy();
  });

  test.each([['qwen2-f32'], ['llama-q8_0'], ['llama-q4_0'], ['qwen3-q4_k']])('%s: prefill then decode = token by token = chunked prefill (or each = the reference where decode takes int8 activations)', async (id) => {
    const file = await fetchGguf(index.cases.find((x) => x.id === id)!.gguf);
    const whole = await decoderFromGguf(file);
    const chunked = await decoderFromGguf(file, { maxBatch: 5 });
    try {
      const all = (await whole.decoder.forward(prompt, { logits: 'all' })).logits!;
      // Token by token (each step a decode step reading the previous token from the GPU or uploaded).
      whole.decoder.kv.clear();
      const stepwise: Float32Array[] = [];
      for (const t of prompt) stepwise.push((await whole.decoder.forward([t], { logits: 'last' })).logits![0]);
      // Prefill 10, then decode the rest.
      whole.decoder.kv.clear();
      const mixed = [...(await whole.decoder.forward(prompt.slice(0, 10), { logits: 'all' })).logits!];
      for (const t of prompt.slice(10)) mixed.push((await whole.decoder.forward([t], { logits: 'last' })).logits![0]);
      // Prefill in chunks of 5 tokens.
      const chunks = (await chunked.decoder.forward(prompt, { logits: 'all' })).logits!;
      const d3 = maxAbsDiff(chunks, all);
      // Where decode steps (m = 1) take 8-bit activations and prefill steps do not, the paths differ by the
      // quantization (the chunks of 5 too: the 16th token is a step of its own): each is checked against the
      // reference taking the same products on int8 activations.
      const q8 = q8ActivationsOf(whole.decoder);
      const fk = whole.decoder['fk'];
      const differs = qkvMatrices(whole.decoder.weights.layers[0].qkv).some((m) => fk.int8Product(m.type, 1) !== fk.int8Product(m.type, prompt.length));
      if (differs) {
        const reference = await referenceModelFromGguf(file);
        const near = (got: Float32Array[], m: number[]) => referenceNearTies(reference, stepsOf(prompt, m), q8, got, REFERENCE_TOLERANCE);
        const r0 = near(all, prompt.map(() => prompt.length));
        const r1 = near(stepwise, prompt.map(() => 1));
        const r2 = near(mixed, prompt.map((_, i) => (i < 10 ? 10 : 1)));
        const r3 = near(chunks, chunkSizes(prompt.length, 5));
        const flips = [r0, r1, r2, r3].reduce((n, r) => n + r.flipped.length, 0);
        console.log(`${id} (decode on int8 activations): |prefill - reference| ${r0.maxDiff.toExponential(2)}, |token by token - reference| ${r1.maxDiff.toExponential(2)}, |prefill+decode - reference| ${r2.maxDiff.toExponential(2)}, |chunked - reference| ${r3.maxDiff.toExponential(2)} (${flips} near ties rounded the other way)`);
        for (const r of [r0, r1, r2, r3]) expect(r.maxDiff).toBeLessThan(REFERENCE_TOLERANCE);
        // The quantization shows: token by token is not the f32 prefill.
        expect(maxAbsDiff(stepwise, all)).toBeGreaterThan(1e-3);
        return;
      }
      expect(d3).toBeLessThan(1e-5);
      const d1 = maxAbsDiff(stepwise, all);
      const d2 = maxAbsDiff(mixed, all);
      console.log(`${id}: |token by token - prefill| ${d1.toExponential(2)}, |prefill+decode - prefill| ${d2.toExponential(2)}, |chunked - prefill| ${d3.toExponential(2)}`);
      expect(d1).toBeLessThan(1e-5);
      expect(d2).toBeLessThan(1e-5);
    } finally {
      whole.destroy();
      chunked.destroy();
    }
  });

  test.each([['qwen3-q4_k'], ['llama-f16'], ['qwen2-q8_0']])('%s: q/k/v as one matrix and gate/up stacked (one dispatch each) = loaded apart (five products and the SwiGLU kernel), bit for bit', async (id) => {
    const file = await fetchGguf(index.cases.find((x) => x.id === id)!.gguf);
    const stacked = await decoderFromGguf(file, { maxPartBytes: 4096 });
    const apart = await decoderFromGguf(file, { maxPartBytes: 4096, groupLayerMatrices: false });
    try {
      expect('stacked' in stacked.decoder.weights.layers[0].gateUp!).toBe(true);
      expect('concatenated' in stacked.decoder.weights.layers[0].qkv).toBe(true);
      expect('stacked' in apart.decoder.weights.layers[0].gateUp!).toBe(false);
      expect('concatenated' in apart.decoder.weights.layers[0].qkv).toBe(false);
      const a = (await stacked.decoder.forward(prompt, { logits: 'all' })).logits!;
      const b = (await apart.decoder.forward(prompt, { logits: 'all' })).logits!;
      const decodeA = (await stacked.decoder.forward([5], { logits: 'last' })).logits!;
      const decodeB = (await apart.decoder.forward([5], { logits: 'last' })).logits!;
      expect(maxAbsDiff([...a, ...decodeA], [...b, ...decodeB])).toBe(0);
    } finally {
      stacked.destroy();
      apart.destroy();
    }
  });

  test.each([['llama-f16', undefined], ['qwen3-f16-hidden68', 4096]])('%s: F16 weights widened to F32 at load (CPU adapters: kernel-shapes.ts widenF16Weights) = read as halves, bit for bit', async (id, maxPartBytes) => {
    const file = await fetchGguf(index.cases.find((x) => x.id === id)!.gguf);
    const halves = await decoderFromGguf(file, { maxPartBytes });
    const widened = await decoderFromGguf(file, { maxPartBytes, widenF16: true });
    try {
      const types = (d: Decoder) => [d.weights.tokenEmbedding.type, ...productMatrices(d.weights).map((m) => m.type)];
      expect(new Set(types(halves.decoder))).toEqual(new Set(['F16']));
      expect(new Set(types(widened.decoder))).toEqual(new Set(['F32']));
      expect(widened.uploaded.bytes).toBeGreaterThan(1.9 * halves.uploaded.bytes);
      const a = (await halves.decoder.forward(prompt, { logits: 'all' })).logits!;
      const b = (await widened.decoder.forward(prompt, { logits: 'all' })).logits!;
      const decodeA = (await halves.decoder.forward([5], { logits: 'last' })).logits!;
      const decodeB = (await widened.decoder.forward([5], { logits: 'last' })).logits!;
      expect(maxAbsDiff([...a, ...decodeA], [...b, ...decodeB])).toBe(0);
    } finally {
      halves.destroy();
      widened.destroy();
    }
  });

  test.each([['qwen2-f32'], ['llama-q4_0']])('%s: a reused KV prefix gives the same logits as a cold start', async (id) => {
    const file = await fetchGguf(index.cases.find((x) => x.id === id)!.gguf);
    const { decoder, destroy } = await decoderFromGguf(file);
    try {
      const other = [5, 6, 7, 8, 9, 10];
      // Cold: the first 9 prompt tokens, then a different continuation.
      const cold = (await decoder.forward([...prompt.slice(0, 9), ...other], { logits: 'all' })).logits!;
      // Warm: run the whole prompt, keep its first 9 positions, run the continuation on top of them.
      decoder.kv.clear();
      await decoder.forward(prompt);
      expect(decoder.kv.commonPrefixLength([...prompt.slice(0, 9), ...other])).toBe(9);
      decoder.kv.truncate(9);
      const warm = (await decoder.forward(other, { logits: 'all' })).logits!;
      const d = maxAbsDiff(warm, cold.slice(9));
      console.log(`${id}: |reused prefix - cold start| ${d.toExponential(2)}`);
      expect(d).toBeLessThan(1e-5);
      expect(decoder.kv.tokens).toEqual([...prompt.slice(0, 9), ...other]);
    } finally {
      destroy();
    }
  });

  test('qwen3-f32: a long context (decode past the attention split size) matches prefill and the reference', async () => {
    const file = await fetchGguf(index.cases.find((x) => x.id === 'qwen3-f32')!.gguf);
    const reference = await referenceModelFromGguf(file);
    const { decoder, destroy } = await decoderFromGguf(file, { maxSeq: 320 });
    try {
      const tokens = Array.from({ length: 300 }, (_, i) => (i * 37 + 11) % reference.config.vocabSize);
      const prefilled = (await decoder.forward(tokens, { logits: 'all' })).logits!;
      decoder.kv.clear();
      await decoder.forward(tokens.slice(0, 270));
      const decoded: Float32Array[] = [];
      for (const t of tokens.slice(270)) decoded.push((await decoder.forward([t], { logits: 'last' })).logits![0]);
      const expected = referenceForward(reference.config, reference.weights, tokens).slice(270);
      const dPrefill = maxAbsDiff(decoded, prefilled.slice(270));
      const dReference = maxAbsDiff(decoded, expected);
      console.log(`qwen3-f32 at 270..300 positions: |decode - prefill| ${dPrefill.toExponential(2)}, |decode - reference| ${dReference.toExponential(2)}`);
      expect(dPrefill).toBeLessThan(1e-4);
      expect(dReference).toBeLessThan(1e-4);
    } finally {
      destroy();
    }
  });

  // The shapes real GPUs get (kernel-shapes.ts / forward-kernels.ts for a non-CPU adapter: many lanes per
  // row with workgroup-memory reductions, flash-decoding splits of 64 positions, prefill attention's K/V tiles in
  // workgroup memory), run here on SwiftShader.
  const GPU_SHAPES: DecoderOptions['shapes'] = {
    kernels: { rowReduce: { WORKGROUP_SIZE: 256, ROW_THREADS: 256 } },
    forward: {
      product: { WORKGROUP_SIZE: 64, K_SPLIT: 8, TILE_M: 4 },
      elementwise: { WORKGROUP_SIZE: 256 },
      attention: { WORKGROUP_SIZE: 32, SPLIT_POSITIONS: 64 },
      attentionPrefill: { WORKGROUP_SIZE: 64, KV_TILE: 16, ROWS: 1, SHARED_KV: true },
      argmax: { WORKGROUP_SIZE: 256, ITEMS_PER_INVOCATION: 8 },
    },
  };

  // A GPU whose subgroups hold K_SPLIT lanes: the products sum by subgroup shuffles, and the fused norms' sums
  // (not per subgroup there: NORM_SUBGROUP is the CPU adapters') go through the subgroup split's workgroup memory.
  const GPU_SUBGROUP_SHAPES: DecoderOptions['shapes'] = { ...GPU_SHAPES, forward: { ...GPU_SHAPES.forward, product: { WORKGROUP_SIZE: 16, K_SPLIT: 4, TILE_M: 3 } } };

  // (K-quant products with these shapes are covered by the kernel tests; their models here are 4x larger.)
  test.each([
    ['qwen3-f32', 'K split 8', GPU_SHAPES], ['llama-f16', 'K split 8', GPU_SHAPES], ['qwen2-q8_0', 'K split 8', GPU_SHAPES], ['llama-q4_0', 'K split 8', GPU_SHAPES],
    ['qwen3-f32', 'K split 4 in subgroups', GPU_SUBGROUP_SHAPES], ['qwen2-q8_0', 'K split 4 in subgroups', GPU_SUBGROUP_SHAPES],
  ] as const)(
    '%s: with the kernel shapes of a real GPU (%s), prefill and decode past a flash-decoding split match the reference',
    async (id, _label, shapes) => {
      const file = await fetchGguf(index.cases.find((x) => x.id === id)!.gguf);
      const reference = await referenceModelFromGguf(file);
      const { decoder, destroy } = await decoderFromGguf(file, { shapes, maxSeq: 160 });
      try {
        expect(decoder.fusedNorms).toBe(true);
        const tokens = Array.from({ length: 80 }, (_, i) => (i * 53 + 5) % reference.config.vocabSize);
        // The reference steps as the decoder's: prefill chunks of maxBatch, then decode steps (int8 activations where its kernels take them).
        const q8 = q8ActivationsOf(decoder);
        const prefilled = (await decoder.forward(tokens, { logits: 'all' })).logits!;
        decoder.kv.clear();
        const decoded = [...(await decoder.forward(tokens.slice(0, 66), { logits: 'all' })).logits!];
        for (const t of tokens.slice(66)) decoded.push((await decoder.forward([t], { logits: 'last' })).logits![0]);
        const dPrefill = referenceNearTies(reference, stepsOf(tokens, chunkSizes(80, decoder.maxBatch)), q8, prefilled, 1e-4).maxDiff;
        const dDecode = referenceNearTies(reference, stepsOf(tokens, [...chunkSizes(66, decoder.maxBatch), ...tokens.slice(66).map(() => 1)]), q8, decoded, 1e-4).maxDiff;
        console.log(`${id} (GPU shapes): |prefill - reference| ${dPrefill.toExponential(2)}, |prefill 66 + decode 14 - reference| ${dDecode.toExponential(2)}`);
        expect(dPrefill).toBeLessThan(1e-4);
        expect(dDecode).toBeLessThan(1e-4);
      } finally {
        destroy();
      }
    },
  );

  test('a custom token chooser replaces argmax and its choice feeds the next decode step on the GPU', async () => {
    const file = await fetchGguf(index.cases.find((x) => x.id === 'qwen2-f32')!.gguf);
    const { decoder, destroy } = await decoderFromGguf(file);
    const { gpu } = await sharedGpu();
    const forced = createStorageBuffer(gpu.device, new Uint32Array([7, 1234, 0, 0]), 'forced choice');
    try {
      const chooser: TokenChooser = (batch, a) => void batch.copy(forced, 0, a.out, 0, 16);
      const first = await decoder.forward(prompt.slice(0, 5), { chooser });
      expect(first.nextToken).toBe(7);
      expect(Array.from(first.chosen)).toEqual([7, 1234, 0, 0]);
      const viaGpu = await decoder.forward([7], { logits: 'last' });
      decoder.kv.clear();
      const cold = await decoder.forward([...prompt.slice(0, 5), 7], { logits: 'last' });
      expect(maxAbsDiff(viaGpu.logits!, cold.logits!)).toBeLessThan(1e-5);
    } finally {
      forced.destroy();
      destroy();
    }
  });

  test.each([['llama-f32'], ['qwen2-q8_0'], ['llama-q6_k']])('%s: tensors split by rows over many buffers give the same logits', async (id) => {
    const file = await fetchGguf(index.cases.find((x) => x.id === id)!.gguf);
    const plain = await decoderFromGguf(file);
    const split = await decoderFromGguf(file, { maxPartBytes: 4096 });
    try {
      const lmHeadParts = split.decoder.weights.lmHead.parts.length;
      expect(lmHeadParts).toBeGreaterThan(2);
      const a = (await plain.decoder.forward(prompt, { logits: 'all' })).logits!;
      const b = (await split.decoder.forward(prompt, { logits: 'all' })).logits!;
      const d = maxAbsDiff(a, b);
      console.log(`${id}: LM head in ${lmHeadParts} parts; |split - whole| ${d.toExponential(2)}`);
      expect(d).toBeLessThan(1e-5);
    } finally {
      plain.destroy();
      split.destroy();
    }
  });

  test.each([['llama-f32'], ['qwen2-f16'], ['qwen3-f32'], ['llama-q4_0'], ['llama-f32-tied-rope-scaling']])(
    '%s: GGUF and safetensors of the same weights give the same logits',
    async (id) => {
      const fixture = index.cases.find((x) => x.id === id)!;
      const file = await fetchGguf(fixture.gguf);
      // The same weights from either loader: the GGUF decoder's products on f32 activations, as the safetensors
      // one's (whose files hold the Q4_0 weights dequantized, F32 products): 8-bit activations are another test's.
      const fromGguf = await decoderFromGguf(file, { shapes: { forward: { int8Activations: { Q8_0: false, Q4_0: false, prefill: false } } } });
      const fromHf = await decoderFromHfDir(new URL(fixture.hfDir, location.origin).href);
      try {
        expect(fromHf.decoder.config.format).toBe('safetensors');
        const a = (await fromGguf.decoder.forward(prompt, { logits: 'all' })).logits!;
        const b = (await fromHf.decoder.forward(prompt, { logits: 'all' })).logits!;
        const d = maxAbsDiff(a, b);
        console.log(`${id}: |GGUF - safetensors| ${d.toExponential(2)}`);
        expect(d).toBeLessThan(1e-4);
      } finally {
        fromGguf.destroy();
        fromHf.destroy();
      }
    },
  );
});
