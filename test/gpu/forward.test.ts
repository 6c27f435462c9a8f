// The WGSL forward pass against the TypeScript reference (test/support/cpu-forward.ts, itself checked against
// llama.cpp in test/unit/forward-reference.test.ts) and against llama.cpp directly, on generated models of
// every architecture and tensor type, in headless Chromium.
//
// Tolerances (max |GPU - x| over every logit of 47 positions; logits ~ N(0, 1)):
// - vs the reference: both dequantize the same weights exactly and compute in f32 (GPU) / f64 (reference);
//   only f32 rounding differs: 1e-4 for every type (observed maxima are printed).
// - vs llama.cpp: F32 1e-4; F16 1e-2; BF16 5e-2; quantized 0.15 / 0.2 (K-quants): llama.cpp converts activations to F16 (BF16)
//   or quantizes them to Q8_0/Q8_K for these weight types, see test/unit/forward-reference.test.ts.
// Greedy: 32 free-running tokens equal the reference's for every type and llama.cpp's for F32/F16; against
// llama.cpp with quantized weights teacher-forced, with mismatches allowed only where llama.cpp's own top two
// logits are within 2x the tolerance (its quantized activations flip near ties, see forward-reference.test.ts).
import { beforeAll, describe, expect, test } from 'vitest';
import { argmax, referenceForward, referenceModelFromGguf } from '../support/cpu-forward.ts';
import { FORWARD_CASES, FORWARD_GREEDY, FORWARD_PROMPT, type ForwardFixtureIndex } from './forward-cases.ts';
import { createStorageBuffer } from '../../src/gpu/transfer.ts';
import { Decoder, type DecoderLayerWeights, type DecoderOptions, type DecoderWeights, type GpuMatrix, type GpuVector, type TokenChooser } from '../../src/model/decoder.ts';
import { productMatrices } from '../../src/model/decoder-types.ts';
import { isCpuAdapter } from '../../src/gpu/kernel-shapes.ts';
import type { ModelConfig } from '../../src/model/model-config.ts';
import { decoderFromGguf, decoderFromHfDir, fetchGguf, loadFixtureIndex, maxAbsDiff, sharedGpu } from './forward-support.ts';

const LLAMA_TOLERANCE: Record<string, number> = { F32: 1e-4, F16: 1e-2, BF16: 5e-2, Q8_0: 0.15, Q4_0: 0.15, Q4_K: 0.2, Q6_K: 0.2 };
const REFERENCE_TOLERANCE = 1e-4;

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
      // Prefill the whole sequence in one batched step, all logits back.
      const { logits } = await decoder.forward(sequence, { logits: 'all' });
      const vsReference = maxAbsDiff(logits!, referenceForward(reference.config, reference.weights, sequence));
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
      // The reference on the same tokens: logits at every step from the prompt's last on, and their argmax, so greedy
      // agrees for 32 tokens for every type.
      const P = FORWARD_PROMPT.length;
      const freeReference = referenceForward(reference.config, reference.weights, [...FORWARD_PROMPT, ...free.slice(0, -1)]).slice(P - 1);
      const vsReferenceDecode = maxAbsDiff(freeLogits, freeReference);
      expect(free).toEqual(freeReference.map((l) => argmax(l)));
      console.log(
        `${id}: max |GPU - reference| = ${vsReference.toExponential(2)} (prefill), ${vsReferenceDecode.toExponential(2)} (decode), max |GPU - llama.cpp| = ${vsLlama.toExponential(2)} ` +
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

  test('the shared GPU context records the GPU object\'s WGSL language features; the adapter here is a CPU one', async () => {
    const { gpu } = await sharedGpu();
    // GpuContext records the GPU object's WGSL language features (navigator.gpu's in a page).
    expect([...gpu.wgslLanguageFeatures].sort()).toEqual([...navigator.gpu.wgslLanguageFeatures].sort());
    expect(isCpuAdapter(gpu.adapterInfo)).toBe(true);
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

  test.each([['qwen2-f32'], ['llama-q8_0'], ['llama-q4_0'], ['qwen3-q4_k']])('%s: prefill then decode = token by token = chunked prefill', async (id) => {
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
      attention: { WORKGROUP_SIZE: 64, SPLIT_POSITIONS: 64, HEADS: 8, COOPERATIVE: true },
      attentionPrefill: { WORKGROUP_SIZE: 64, KV_TILE: 16, ROWS: 1, SHARED_KV: true },
      argmax: { WORKGROUP_SIZE: 256, ITEMS_PER_INVOCATION: 8 },
    },
  };

  // A GPU whose subgroups hold K_SPLIT lanes: the products sum by subgroup shuffles, and the fused norms' sums
  // (not per subgroup there: NORM_SUBGROUP is the CPU adapters') go through the subgroup split's workgroup memory.
  const GPU_SUBGROUP_SHAPES: DecoderOptions['shapes'] = { ...GPU_SHAPES, forward: { ...GPU_SHAPES.forward, product: { WORKGROUP_SIZE: 16, K_SPLIT: 4, TILE_M: 3 } } };

  // Prefill's products through workgroup-memory tiles (matmul_tiled: the fused norms' sums per 32 rows, as decode's
  // K split 8 writes them).
  const GPU_TILED_SHAPES: DecoderOptions['shapes'] = { ...GPU_SHAPES, forward: { ...GPU_SHAPES.forward, product: { WORKGROUP_SIZE: 64, K_SPLIT: 8, TILE_M: 4, PREFILL_TILED: true } } };

  // (K-quant products with these shapes are covered by the kernel tests; their models here are 4x larger.)
  test.each([
    ['qwen3-f32', 'K split 8', GPU_SHAPES], ['llama-f16', 'K split 8', GPU_SHAPES], ['qwen2-q8_0', 'K split 8', GPU_SHAPES], ['llama-q4_0', 'K split 8', GPU_SHAPES],
    ['qwen3-f32', 'K split 4 in subgroups', GPU_SUBGROUP_SHAPES], ['qwen2-q8_0', 'K split 4 in subgroups', GPU_SUBGROUP_SHAPES],
    ['qwen3-f32', 'prefill tiled', GPU_TILED_SHAPES], ['llama-q4_0', 'prefill tiled', GPU_TILED_SHAPES],
  ] as const)(
    '%s: with the kernel shapes of a real GPU (%s), prefill and decode past a flash-decoding split match the reference',
    async (id, _label, shapes) => {
      const file = await fetchGguf(index.cases.find((x) => x.id === id)!.gguf);
      const reference = await referenceModelFromGguf(file);
      const { decoder, destroy } = await decoderFromGguf(file, { shapes, maxSeq: 160 });
      try {
        expect(decoder.fusedNorms).toBe(true);
        const tokens = Array.from({ length: 80 }, (_, i) => (i * 53 + 5) % reference.config.vocabSize);
        const expected = referenceForward(reference.config, reference.weights, tokens);
        const prefilled = (await decoder.forward(tokens, { logits: 'all' })).logits!;
        decoder.kv.clear();
        const decoded = [...(await decoder.forward(tokens.slice(0, 66), { logits: 'all' })).logits!];
        for (const t of tokens.slice(66)) decoded.push((await decoder.forward([t], { logits: 'last' })).logits![0]);
        const dPrefill = maxAbsDiff(prefilled, expected);
        const dDecode = maxAbsDiff(decoded, expected);
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
      // The same weights from either loader (the safetensors files hold the Q4_0 weights dequantized: F32 products).
      const fromGguf = await decoderFromGguf(file);
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
