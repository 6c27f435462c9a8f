// Gemma 3 from a Hugging Face folder (Gemma3ForCausalLM as transformers stores it: tools/make-test-model --arch
// gemma3 writes hf/ beside model.gguf with the same weights) on the WebGPU decoder (Node, Dawn): the folder's config
// is the GGUF's (sliding window and pattern from layer_types, the two RoPE bases, GeGLU, embedding scale, q/k norms,
// post norms), its tensors map onto the GGUF names (post_attention_layernorm is the attention output's norm,
// pre_feedforward_layernorm the feed-forward's input norm) and its norms, stored as w, load as the 1 + w that
// llama.cpp's converter writes; the logits then equal the GGUF's and llama.cpp's. Each broken conversion (one norm
// kind without its + 1, or post_attention_layernorm read as the feed-forward's norm as in llama) must miss the GGUF's logits.
// Both forwards use the runtime's GELU (llama.cpp's f16-table GELU, DecoderOptions.geluF16), as gemma3.dawn.test.ts.
// Dawn needs a Vulkan driver (LD_LIBRARY_PATH / VK_ICD_FILENAMES, see vitest.config.ts); without an adapter these
// tests fail, saying why.
import { openAsBlob, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openModel } from '../../../src/model/open-model.ts';
import { readGguf } from '../../../src/model/gguf.ts';
import { BlobSource } from '../../../src/model/byte-source.ts';
import { modelConfigFromGguf } from '../../../src/model/model-config.ts';
import { ggufTensorSources, type TensorSource } from '../../../src/model/weight-loader.ts';
import type { LlamaOracleResult } from '../../support/llama-oracle.ts';
import type { TestModel, TestModelOptions } from '../../support/test-models.ts';
import { maxAbsDiff } from '../../support/logit-diff.ts';
import { acquireDawn, decoderLogits, modelsWithOracle, type DawnDevice } from '../../support/dawn-decoder.ts';

const TOLERANCE: Record<string, number> = { F32: 2e-3, F16: 1e-2 };
/** HF and GGUF hold the same numbers (the norms' 1 + w computed in f32 both ways): the same forward. */
const HF_TOLERANCE = 1e-5;
/** What a broken conversion must miss the GGUF's logits by. */
const BROKEN_MIN = 0.05;
const PROMPT = [11, 300, 42, 7, 99, 250, 3, 180, 64, 12, 77, 201, 5, 140, 33, 260, 18, 91];
const GREEDY = 4;
const NORM_KINDS = ['attn_norm', 'attn_q_norm', 'attn_k_norm', 'post_attention_norm', 'ffn_norm', 'post_ffw_norm', 'output_norm'];

interface Case {
  name: string;
  options: TestModelOptions;
}

const CASES: Case[] = [
  {
    name: 'gemma3 HF F32, 7 layers (5 global), window 6, 4:2 GQA, tied',
    options: { arch: 'gemma3', type: 'F32', seed: 61, hidden: 64, heads: 4, kvHeads: 2, layers: 7, window: 6, ropeTheta: 1e6, tiedEmbeddings: true },
  },
  {
    name: 'gemma3 HF F16, 96 wide, 3 heads of 32, 1 KV head, 8 layers, window 4, untied',
    options: { arch: 'gemma3', type: 'F16', seed: 62, hidden: 96, heads: 3, kvHeads: 1, headDim: 32, intermediate: 160, layers: 8, window: 4, ropeTheta: 1e6 },
  },
];

let device: DawnDevice = { gpu: null, pipelines: null, missing: 'not set up' };
let models = new Map<string, { model: TestModel; oracle: LlamaOracleResult }>();

beforeAll(async () => {
  models = await modelsWithOracle(CASES, (m) => ({ model: m.ggufPath, tokens: PROMPT, greedy: GREEDY }));
  device = await acquireDawn('gemma3 HF tests');
}, 600_000);
afterAll(() => device.gpu?.destroy());

async function hfFolder(dir: string) {
  return Object.fromEntries(await Promise.all(readdirSync(dir).map(async (n) => [n, await openAsBlob(join(dir, n))] as const)));
}

describe.each(CASES)('$name', (c) => {
  test("the HF folder loads to the GGUF's config and logits (and llama.cpp's); broken conversions do not", async () => {
    const { model, oracle } = models.get(c.name)!;
    const file = await readGguf(new BlobSource(await openAsBlob(model.ggufPath), 'model.gguf'));
    const config = modelConfigFromGguf(file);
    const sources = ggufTensorSources(file);
    const opened = await openModel({ id: `hf-${c.name}`, hfDir: await hfFolder(model.hfDir) });

    const { format: _g, rmsEps: ggufEps, ...ggufRest } = config;
    const { format: _h, rmsEps: hfEps, ...hfRest } = opened.config;
    expect(opened.config.format).toBe('safetensors');
    expect(hfRest).toEqual(ggufRest);
    expect(hfEps).toBeCloseTo(ggufEps, 9);
    expect(opened.tensors.map((t) => t.name).sort()).toEqual(sources.map((t) => t.name).sort());
    // Exactly the norms get the + 1.
    expect(opened.tensors.filter((t) => t.addend === 1).map((t) => t.name).sort()).toEqual(sources.filter((t) => t.name.endsWith('norm.weight')).map((t) => t.name).sort());
    expect(opened.tensors.every((t) => t.addend === undefined || t.addend === 1)).toBe(true);

    const sequence = [...PROMPT, ...oracle.greedy!.slice(0, -1)];
    const theirs = [...oracle.logits, ...oracle.greedyLogits!];
    // One token, then decode steps (the matvec kernels and decode attention; gemma3.dawn.test.ts covers prefill).
    const run = { prefill: 1 };
    const logitsOf = (s: TensorSource[]) => decoderLogits(device, opened.config, s, sequence, run);
    const gguf = await decoderLogits(device, config, sources, sequence, run);
    const hf = await logitsOf(opened.tensors);
    const hfDiff = maxAbsDiff(hf, gguf);
    const llamaDiff = maxAbsDiff(hf, theirs);
    const ggufLlamaDiff = maxAbsDiff(gguf, theirs);

    const broken: Record<string, number> = {};
    for (const kind of NORM_KINDS) {
      const withoutOne = opened.tensors.map((t) => (t.name === kind + '.weight' || t.name.endsWith(`.${kind}.weight`) ? { ...t, addend: undefined } : t));
      broken[`${kind} without + 1`] = maxAbsDiff(await logitsOf(withoutOne), gguf);
    }
    // The llama table's reading of post_attention_layernorm (the norm before the feed-forward): the two norms swapped.
    const swap: Record<string, string> = { post_attention_norm: 'ffn_norm', ffn_norm: 'post_attention_norm' };
    broken['post_attention_layernorm as ffn_norm'] = maxAbsDiff(await logitsOf(opened.tensors.map((t) => {
      const m = /^(blk\.\d+\.)(post_attention_norm|ffn_norm)\.weight$/.exec(t.name);
      return m ? { ...t, name: `${m[1]}${swap[m[2]!]}.weight` } : t;
    })), gguf);

    console.log(
      `${c.name}: max |HF - GGUF| = ${hfDiff.toExponential(2)}, |HF - llama.cpp| = ${llamaDiff.toExponential(2)} (GGUF ${ggufLlamaDiff.toExponential(2)}) over ${sequence.length} positions; broken: ` +
        Object.entries(broken).map(([w, d]) => `${w} ${d.toFixed(3)}`).join(', '),
    );
    expect(hfDiff).toBeLessThan(HF_TOLERANCE);
    expect(llamaDiff).toBeLessThan(TOLERANCE[c.options.type]!);
    for (const [what, d] of Object.entries(broken)) expect(d, what).toBeGreaterThan(BROKEN_MIN);
  }, 300_000);
});
