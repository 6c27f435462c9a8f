// Gemma 3's Hugging Face config.json and tensor names (Gemma3ForCausalLM, model_type gemma3_text) read into the same
// ModelConfig and GGUF names as the GGUF of the same generated model (tools/make-test-model --arch gemma3 writes
// both), the sliding pattern from layer_types or sliding_window_pattern, transformers 5's rope_parameters, and
// the checkpoints the decoder would get wrong refused with a reason. Node only, no GPU (the logits are
// gemma3-hf.dawn.test.ts's).
import { describe, expect, test } from 'vitest';
import { readGguf } from '../../../src/model/gguf.ts';
import { ggufNameOfHfTensor, hfNormShift, layerWindow, modelConfigFromGguf, modelConfigFromHf } from '../../../src/model/model-config.ts';
import { buildTestModel, type TestModelOptions } from '../../../tools/make-test-model/build.ts';
import { readSafetensors } from '../../../src/model/safetensors.ts';
import { safetensorsTensorSources } from '../../../src/model/weight-loader.ts';
import { dequantizeGguf } from '../../../src/model/dequantize.ts';

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((s, c) => s + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

async function both(options: TestModelOptions) {
  const { files } = buildTestModel(options);
  const gguf = await readGguf(concat(files['model.gguf']!));
  const configJson = JSON.parse(new TextDecoder().decode(concat(files['hf/config.json']!))) as Record<string, unknown>;
  const st = await readSafetensors(concat(files['hf/model.safetensors']!), 'model.safetensors');
  return { gguf, configJson, st };
}

const OPTIONS: TestModelOptions = { arch: 'gemma3', type: 'F16', seed: 5, hidden: 64, heads: 4, kvHeads: 1, headDim: 32, intermediate: 96, layers: 13, window: 7, ropeTheta: 1e6 };

describe('Gemma 3 Hugging Face folders', () => {
  test("config.json gives the GGUF's config; the tensors map to its names with the + 1 on exactly the norms", async () => {
    const { gguf, configJson, st } = await both(OPTIONS);
    expect(configJson).toMatchObject({ architectures: ['Gemma3ForCausalLM'], model_type: 'gemma3_text', query_pre_attn_scalar: 32, sliding_window: 7, rope_local_base_freq: 10000 });
    const fromGguf = modelConfigFromGguf(gguf);
    const fromHf = modelConfigFromHf(configJson, { tensorNames: st.tensors.map((t) => t.name) });
    const { format: _a, rmsEps: e1, ...g } = fromGguf;
    const { format: _b, rmsEps: e2, ...h } = fromHf;
    expect(h).toEqual(g);
    expect(e2).toBeCloseTo(e1, 9);
    expect(fromHf).toMatchObject({ slidingWindow: { size: 7, pattern: 6 }, ropeTheta: 1e6, ropeThetaSliding: 10000, qkNorm: true, postNorms: true, ffnActivation: 'gelu', tiedEmbeddings: false });
    // Layers 5 and 11 global.
    expect(Array.from({ length: 13 }, (_, l) => layerWindow(fromHf, l)).map((w, l) => (w === 0 ? l : -1)).filter((l) => l >= 0)).toEqual([5, 11]);

    const sources = safetensorsTensorSources({ files: [st], tensors: st.tensors, totalBytes: 0 }, 'gemma3');
    expect(sources.map((s) => s.name).sort()).toEqual(gguf.tensors.map((t) => t.name).sort());
    expect(sources.filter((s) => s.addend === 1).map((s) => s.name).sort()).toEqual(gguf.tensors.filter((t) => t.name.endsWith('norm.weight')).map((t) => t.name).sort());
    // The HF file holds w (F16), the GGUF 1 + w (F32): equal after the addend.
    for (const name of ['blk.3.post_attention_norm.weight', 'blk.3.ffn_norm.weight', 'blk.0.attn_k_norm.weight', 'output_norm.weight']) {
      const s = sources.find((x) => x.name === name)!;
      const t = gguf.tensors.find((x) => x.name === name)!;
      const w = dequantizeGguf(s.type, await s.source.read(s.offset, s.byteLength));
      const v = dequantizeGguf(t.type, await gguf.source.read(t.offset, t.byteLength));
      expect(s.type).toBe('F16');
      expect(Array.from(w, (x) => x + 1)).toEqual(Array.from(v));
      expect(Math.abs(w.reduce((a, b) => a + b, 0) / w.length)).toBeLessThan(0.1);
    }
    // Without the architecture (the llama table) the names are llama's: post_attention_layernorm becomes ffn_norm.
    expect(ggufNameOfHfTensor('model.layers.2.post_attention_layernorm.weight')).toBe('blk.2.ffn_norm.weight');
    expect(ggufNameOfHfTensor('model.layers.2.post_attention_layernorm.weight', 'gemma3')).toBe('blk.2.post_attention_norm.weight');
    expect(hfNormShift('qwen3', 'blk.0.attn_q_norm.weight')).toBe(0);
  });

  test('the sliding pattern from layer_types or sliding_window_pattern; transformers 5 rope_parameters', async () => {
    const { configJson } = await both({ ...OPTIONS, type: 'F32', layers: 4 });
    const base = { ...configJson };
    delete base.layer_types;
    delete base.sliding_window_pattern;
    expect(modelConfigFromHf(base).slidingWindow).toEqual({ size: 7, pattern: 6 });
    const pattern4 = { ...base, layer_types: ['sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention'] };
    expect(modelConfigFromHf(pattern4).slidingWindow).toEqual({ size: 7, pattern: 4 });
    expect(modelConfigFromHf({ ...base, sliding_window_pattern: 2 }).slidingWindow).toEqual({ size: 7, pattern: 2 });
    expect(() => modelConfigFromHf({ ...base, layer_types: ['full_attention', 'sliding_attention', 'full_attention', 'full_attention'] })).toThrow(/layer_types .* is not a repeating pattern/);
    const v5 = { ...base, rope_theta: undefined, rope_local_base_freq: undefined, rope_parameters: { full_attention: { rope_type: 'default', rope_theta: 500000 }, sliding_attention: { rope_type: 'default', rope_theta: 20000 } } };
    expect(modelConfigFromHf(v5)).toMatchObject({ ropeTheta: 500000, ropeThetaSliding: 20000, ropeScaling: null });
  });

  test('query_pre_attn_scalar sets the attention scale where it is not head_dim (the 27B: 168 for 128)', async () => {
    const { configJson } = await both({ ...OPTIONS, type: 'F32', layers: 2 });
    expect(modelConfigFromHf(configJson).attentionScaleDim).toBeUndefined();
    expect(modelConfigFromHf({ ...configJson, query_pre_attn_scalar: 168 }).attentionScaleDim).toBe(168);
  });

  test('checkpoints the decoder would compute differently are refused, saying why', async () => {
    const { configJson } = await both({ ...OPTIONS, type: 'F32', layers: 2 });
    expect(() => modelConfigFromHf({ ...configJson, query_pre_attn_scalar: 0 })).toThrow(/query_pre_attn_scalar 0 must be positive/);
    expect(() => modelConfigFromHf({ ...configJson, final_logit_softcapping: 30 })).toThrow(/final_logit_softcapping is not supported/);
    expect(() => modelConfigFromHf({ ...configJson, hidden_activation: 'gelu' })).toThrow(/hidden_activation "gelu"/);
    expect(() => modelConfigFromHf({ ...configJson, model_type: 'gemma3', text_config: {} })).toThrow(/multimodal Gemma3ForConditionalGeneration/);
  });
});
