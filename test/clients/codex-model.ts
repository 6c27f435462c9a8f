// A made-up model for the Codex CLI suite: the toy model's tokenizer and chat template (2,048 tokens, ~2.3 bytes
// per token of Codex's prompt, against ~1.4 for make-test-model's small BPE) over one tiny random Qwen3 layer with a
// 16k context, built so that it ends its turn at once: the layer's output projections are zero, every embedding has
// a large first component, and the output head scores only `<|im_end|>` on that component, so whatever the prompt,
// the first token sampled is the end of the turn. The prefill still runs over the whole prompt (attention and all):
// what Codex sees on the wire is a real answer, not a shortcut.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeSafetensors, type SafetensorsWriteTensor } from '../../tools/make-test-model/safetensors-writer.ts';
import { ROOT } from '../../tools/serve-process.ts';

const TOY = join(ROOT, 'public/models/toy-qwen3');
const VOCAB = 2048;
const IM_END = 2043;
const HIDDEN = 64;
const HEADS = 2;
const KV_HEADS = 1;
const HEAD_DIM = 32;
const INTERMEDIATE = 128;

/** Writes the model's Hugging Face directory into `dir` and returns it. */
export function writeEndOfTurnModel(dir: string, contextLength = 16384): string {
  mkdirSync(dir, { recursive: true });
  let seed = 12345;
  const random = (): number => {
    // xorshift32, then Box-Muller: N(0, 1)
    const next = (): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return ((seed >>> 0) + 0.5) / 4294967296;
    };
    return Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
  };
  const tensor = (name: string, shape: number[], fill: (i: number) => number): SafetensorsWriteTensor => {
    const n = shape.reduce((a, b) => a * b, 1);
    const values = new Float32Array(n);
    for (let i = 0; i < n; i++) values[i] = fill(i);
    return { name, dtype: 'F32', shape, data: new Uint8Array(values.buffer) };
  };
  const gauss = (fanIn: number) => () => random() / Math.sqrt(fanIn);
  const layer = 'model.layers.0';
  const tensors = [
    // Column 0 of every embedding is 8: after the final RMSNorm it stays the largest, positive component.
    tensor('model.embed_tokens.weight', [VOCAB, HIDDEN], (i) => (i % HIDDEN === 0 ? 8 : random())),
    tensor(`${layer}.input_layernorm.weight`, [HIDDEN], () => 1),
    tensor(`${layer}.self_attn.q_proj.weight`, [HEADS * HEAD_DIM, HIDDEN], gauss(HIDDEN)),
    tensor(`${layer}.self_attn.k_proj.weight`, [KV_HEADS * HEAD_DIM, HIDDEN], gauss(HIDDEN)),
    tensor(`${layer}.self_attn.v_proj.weight`, [KV_HEADS * HEAD_DIM, HIDDEN], gauss(HIDDEN)),
    tensor(`${layer}.self_attn.q_norm.weight`, [HEAD_DIM], () => 1),
    tensor(`${layer}.self_attn.k_norm.weight`, [HEAD_DIM], () => 1),
    tensor(`${layer}.self_attn.o_proj.weight`, [HIDDEN, HEADS * HEAD_DIM], () => 0),
    tensor(`${layer}.post_attention_layernorm.weight`, [HIDDEN], () => 1),
    tensor(`${layer}.mlp.gate_proj.weight`, [INTERMEDIATE, HIDDEN], gauss(HIDDEN)),
    tensor(`${layer}.mlp.up_proj.weight`, [INTERMEDIATE, HIDDEN], gauss(HIDDEN)),
    tensor(`${layer}.mlp.down_proj.weight`, [HIDDEN, INTERMEDIATE], () => 0),
    tensor('model.norm.weight', [HIDDEN], () => 1),
    // Only <|im_end|> scores, on component 0 (positive for every token): logit ~ 20 * 7, every other logit 0.
    tensor('lm_head.weight', [VOCAB, HIDDEN], (i) => (Math.floor(i / HIDDEN) === IM_END && i % HIDDEN === 0 ? 20 : 0)),
  ];
  const chunks = encodeSafetensors(tensors);
  writeFileSync(join(dir, 'model.safetensors'), Buffer.concat(chunks));
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      architectures: ['Qwen3ForCausalLM'],
      model_type: 'qwen3',
      vocab_size: VOCAB,
      hidden_size: HIDDEN,
      intermediate_size: INTERMEDIATE,
      num_hidden_layers: 1,
      num_attention_heads: HEADS,
      num_key_value_heads: KV_HEADS,
      head_dim: HEAD_DIM,
      hidden_act: 'silu',
      max_position_embeddings: contextLength,
      rms_norm_eps: 1e-6,
      rope_theta: 10000.0,
      rope_scaling: null,
      attention_bias: false,
      tie_word_embeddings: false,
      bos_token_id: 2041,
      eos_token_id: IM_END,
      torch_dtype: 'float32',
    }),
  );
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) copyFileSync(join(TOY, f), join(dir, f));
  return dir;
}
