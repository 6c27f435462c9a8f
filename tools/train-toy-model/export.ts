// Finishes the bundled toy model after export.py: reads model.safetensors (F32, Qwen3ForCausalLM names, tied
// embeddings) and the trained vocabulary (vocab.json from tokenizer.py), and writes next to it
//   model.gguf             qwen3 arch, F32, tokenizer.ggml.* (gpt2 byte-level BPE, pre qwen2) and the chat template
//   tokenizer.json         Hugging Face tokenizer (byte-level BPE, Qwen2 split regex, added tokens)
//   tokenizer_config.json  with the chat template of tools/make-test-model/chatml-template.ts, eos <|im_end|>
// and public/models/catalog.json. Then checks that @huggingface/tokenizers round-trips the corpus sample.
//
//   npx tsx tools/train-toy-model/export.ts --vocab .tmp/toy/vocab.json --dir public/models/toy-qwen3
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Tokenizer } from '@huggingface/tokenizers';
import { CHATML_TOOLS_TEMPLATE } from '../make-test-model/chatml-template.ts';
import { tokenizerConfigJson, tokenizerJson, type ByteLevelBpeVocab } from '../make-test-model/byte-level-bpe.ts';
import { encodeGguf, gv, type GgufWriteTensor, type GgufWriteValue } from '../make-test-model/gguf-writer.ts';

const { values: args } = parseArgs({
  options: {
    vocab: { type: 'string', default: '.tmp/toy/vocab.json' },
    dir: { type: 'string', default: 'public/models/toy-qwen3' },
    catalog: { type: 'string', default: 'public/models/catalog.json' },
    sample: { type: 'string', default: '.tmp/toy/tok-sample.jsonl' },
  },
});
const dir = args.dir!;
const vocab = JSON.parse(readFileSync(args.vocab!, 'utf8')) as ByteLevelBpeVocab;
const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, number>;

// ---- safetensors (F32) -> GGUF tensors
const st = readFileSync(join(dir, 'model.safetensors'));
const headerLength = Number(st.readBigUInt64LE(0));
const header = JSON.parse(st.subarray(8, 8 + headerLength).toString('utf8')) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
const dataStart = 8 + headerLength;
function hfTensor(name: string): { shape: number[]; data: Uint8Array } {
  const t = header[name];
  if (!t) throw new Error(`model.safetensors has no ${name}`);
  if (t.dtype !== 'F32') throw new Error(`${name}: expected F32, got ${t.dtype}`);
  return { shape: t.shape, data: new Uint8Array(st.subarray(dataStart + t.data_offsets[0], dataStart + t.data_offsets[1])) };
}
const GGML_F32 = 0;
const tensors: GgufWriteTensor[] = [];
const add = (gguf: string, hf: string) => {
  const t = hfTensor(hf);
  tensors.push({ name: gguf, dims: [...t.shape].reverse(), ggmlType: GGML_F32, data: t.data });
};
add('token_embd.weight', 'model.embed_tokens.weight');
add('output_norm.weight', 'model.norm.weight');
for (let l = 0; l < config.num_hidden_layers; l++) {
  const g = `blk.${l}.`;
  const h = `model.layers.${l}.`;
  add(g + 'attn_norm.weight', h + 'input_layernorm.weight');
  add(g + 'attn_q.weight', h + 'self_attn.q_proj.weight');
  add(g + 'attn_k.weight', h + 'self_attn.k_proj.weight');
  add(g + 'attn_v.weight', h + 'self_attn.v_proj.weight');
  add(g + 'attn_q_norm.weight', h + 'self_attn.q_norm.weight');
  add(g + 'attn_k_norm.weight', h + 'self_attn.k_norm.weight');
  add(g + 'attn_output.weight', h + 'self_attn.o_proj.weight');
  add(g + 'ffn_norm.weight', h + 'post_attention_layernorm.weight');
  add(g + 'ffn_gate.weight', h + 'mlp.gate_proj.weight');
  add(g + 'ffn_up.weight', h + 'mlp.up_proj.weight');
  add(g + 'ffn_down.weight', h + 'mlp.down_proj.weight');
}

const a = 'qwen3';
const meta: Record<string, GgufWriteValue> = {
  'general.architecture': gv.str(a),
  'general.name': gv.str('toy-qwen3'),
  'general.license': gv.str('MIT'),
  'general.description': gv.str('A small Qwen3-architecture demonstration model trained by the webgpu-responses project on synthetic tool-calling chats.'),
  'general.file_type': gv.u32(0),
  [`${a}.context_length`]: gv.u32(config.max_position_embeddings),
  [`${a}.embedding_length`]: gv.u32(config.hidden_size),
  [`${a}.block_count`]: gv.u32(config.num_hidden_layers),
  [`${a}.feed_forward_length`]: gv.u32(config.intermediate_size),
  [`${a}.attention.head_count`]: gv.u32(config.num_attention_heads),
  [`${a}.attention.head_count_kv`]: gv.u32(config.num_key_value_heads),
  [`${a}.attention.key_length`]: gv.u32(config.head_dim),
  [`${a}.attention.value_length`]: gv.u32(config.head_dim),
  [`${a}.attention.layer_norm_rms_epsilon`]: gv.f32(config.rms_norm_eps),
  [`${a}.rope.freq_base`]: gv.f32(config.rope_theta),
  [`${a}.rope.dimension_count`]: gv.u32(config.head_dim),
  [`${a}.vocab_size`]: gv.u32(vocab.tokens.length),
  'tokenizer.ggml.model': gv.str('gpt2'),
  'tokenizer.ggml.pre': gv.str('qwen2'),
  'tokenizer.ggml.tokens': gv.strings(vocab.tokens),
  'tokenizer.ggml.token_type': gv.i32s(vocab.tokenTypes),
  'tokenizer.ggml.merges': gv.strings(vocab.merges),
  'tokenizer.ggml.bos_token_id': gv.u32(vocab.bosId),
  'tokenizer.ggml.eos_token_id': gv.u32(vocab.eosId),
  'tokenizer.ggml.padding_token_id': gv.u32(vocab.padId),
  'tokenizer.ggml.add_bos_token': gv.bool(false),
  'tokenizer.ggml.add_eos_token': gv.bool(false),
  'tokenizer.chat_template': gv.str(CHATML_TOOLS_TEMPLATE),
};
const parts = encodeGguf(meta, tensors);
writeFileSync(join(dir, 'model.gguf'), Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength))));

// ---- tokenizer files
const tj = tokenizerJson(vocab);
const tc = tokenizerConfigJson(vocab, CHATML_TOOLS_TEMPLATE, config.max_position_embeddings);
writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tj));
writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(tc, null, 2) + '\n');

// ---- catalog
const bytes = statSync(join(dir, 'model.gguf')).size;
const catalog = [
  {
    id: 'toy-qwen3',
    aliases: ['default'],
    file: 'models/toy-qwen3/model.gguf',
    format: 'gguf',
    bytes,
    license: 'MIT',
    bundled: true,
    description:
      'A tiny Qwen3-architecture demonstration model trained by the project on synthetic chats with the demo\'s and the web IDE\'s tools: it thinks, calls calculator, get_time and apply_patch, and answers quoting the result. Not a general-purpose model.',
  },
];
writeFileSync(args.catalog!, JSON.stringify(catalog, null, 2) + '\n');

// ---- round trip through @huggingface/tokenizers against the Python encoder's ids
const tok = new Tokenizer(tj, tc);
let n = 0;
let bad = 0;
try {
  for (const line of readFileSync(args.sample!, 'utf8').split('\n')) {
    if (!line) continue;
    const { text, ids } = JSON.parse(line) as { text: string; ids: number[] };
    const got = tok.encode(text, { add_special_tokens: false }).ids;
    const back = tok.decode(got, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
    n++;
    if (JSON.stringify(got) !== JSON.stringify(ids) || back !== text) {
      bad++;
      if (bad <= 2) console.error(`sample ${n}: ids or round trip differ`);
    }
  }
} catch (e) {
  console.error(`no tokenizer sample checked: ${(e as Error).message}`);
}
console.log(`wrote ${dir}/model.gguf (${bytes} bytes, ${tensors.length} tensors), tokenizer.json, tokenizer_config.json, ${args.catalog}`);
console.log(`tokenizer: ${n} sample texts, ${bad} differ from the Python encoder or fail to round-trip`);
if (bad) process.exit(1);
