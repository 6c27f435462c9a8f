// A real model's tokenizer (Hugging Face tokenizer.json + tokenizer_config.json) as the `tokenizer.ggml.*`
// metadata llama.cpp's converter (convert_hf_to_gguf.py) writes for it, so that a generated test model can carry
// a real vocabulary: byte-level BPE vocabularies (Qwen, Llama 3, Mistral tekken, GPT-2, gpt-oss) become GGUF
// model "gpt2" with their `pre` name and merges; SentencePiece-style BPE with byte fallback (Llama 2, Gemma 3)
// becomes model "llama" with scores and byte tokens, as the converter writes it from tokenizer.model. Pure (no
// Node APIs). The chat template of tokenizer_config.json goes to `tokenizer.chat_template`.

import { gv, type GgufWriteValue } from './gguf-writer.ts';

/** GGUF token types (llama.cpp's llama_token_type / SentencePiece's piece types). */
export const GGUF_TOKEN_TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 } as const;

export interface RealTokenizerOptions {
  /** llama.cpp pre-tokenizer name (`tokenizer.ggml.pre`); default: recognized from the split pattern. */
  pre?: string;
  /** Vocabulary rows (config.json's vocab_size): ids past the tokenizer's are `[PAD<id>]` unused tokens. */
  vocabSize?: number;
}

/** What build.ts needs of a vocabulary, plus the metadata and files to write. */
export interface RealTokenizerVocab {
  model: 'real';
  ggufModel: 'gpt2' | 'llama';
  pre: string;
  tokens: string[];
  tokenTypes: number[];
  bosId: number;
  eosId: number;
  padId: number;
  specialTokens: { id: number; content: string; control: boolean }[];
  addBos: boolean;
  chatTemplate: string | null;
  /** `tokenizer.ggml.*` and `tokenizer.chat_template` as llama.cpp's converter writes them. */
  gguf: Record<string, GgufWriteValue>;
  /** The Hugging Face files, unchanged (for `hf/`). */
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
}

interface AddedToken {
  id: number;
  content: string;
  special?: boolean;
  normalized?: boolean;
}

const QWEN2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const LLAMA3 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const TEKKEN =
  '[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';
const GPT4O =
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** The `tokenizer.ggml.pre` llama.cpp's converter picks for this pre-tokenizer (it hashes an encoding; we match the pattern). */
export function detectPre(tokenizerJson: Record<string, unknown>): string {
  const pre = tokenizerJson.pre_tokenizer as Record<string, unknown> | null;
  const parts = (pre?.type === 'Sequence' ? (pre.pretokenizers as Record<string, unknown>[]) : pre ? [pre] : []) ?? [];
  const regex = parts.map((p) => (p.type === 'Split' ? ((p.pattern as { Regex?: string }).Regex ?? null) : null)).find((r) => r);
  const byteLevel = parts.find((p) => p.type === 'ByteLevel');
  const digits = parts.find((p) => p.type === 'Digits');
  if (regex === QWEN2) return 'qwen2';
  if (regex === LLAMA3) return 'llama-bpe';
  if (regex === TEKKEN) return 'tekken';
  if (regex === GPT4O) return 'gpt-4o';
  if (digits && byteLevel?.use_regex) return 'smollm';
  if (!regex && byteLevel?.use_regex) return 'gpt-2';
  if (!byteLevel) return 'default';
  throw new Error(`real-tokenizer: unknown pre-tokenizer ${JSON.stringify(pre).slice(0, 200)}: pass options.pre`);
}

/** convert_hf_to_gguf.py's does_token_look_special. */
function looksSpecial(token: string): boolean {
  return (
    ['<pad>', '<mask>', '<2mass>', '[@BOS@]'].includes(token) ||
    (token.startsWith('<|') && token.endsWith('|>')) ||
    (token.startsWith('<｜') && token.endsWith('｜>')) ||
    (token.startsWith('<unused') && token.endsWith('>'))
  );
}

function tokenContent(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string') return (v as { content: string }).content;
  return null;
}

/** Whether the tokenizer adds BOS: tokenizer_config's add_bos_token, else a TemplateProcessing that starts with a special token. */
function addsBos(tokenizerJson: Record<string, unknown>, config: Record<string, unknown>): boolean {
  if (typeof config.add_bos_token === 'boolean') return config.add_bos_token;
  const post = tokenizerJson.post_processor as Record<string, unknown> | null;
  const processors = post?.type === 'Sequence' ? (post.processors as Record<string, unknown>[]) : post ? [post] : [];
  const template = processors.find((p) => p.type === 'TemplateProcessing');
  const single = template?.single as Record<string, unknown>[] | undefined;
  return !!single && single.length > 0 && 'SpecialToken' in single[0];
}

/** The GGUF vocabulary and metadata of a Hugging Face tokenizer, as llama.cpp's converter writes them. */
export function realTokenizerVocab(
  tokenizerJson: Record<string, unknown>,
  tokenizerConfig: Record<string, unknown>,
  options: RealTokenizerOptions = {},
): RealTokenizerVocab {
  const model = tokenizerJson.model as { type: string; vocab: Record<string, number>; merges?: (string | [string, string])[]; byte_fallback?: boolean };
  if (!model || model.type !== 'BPE') throw new Error(`real-tokenizer: only BPE tokenizer.json models are supported (got ${model?.type})`);
  const added = (tokenizerJson.added_tokens ?? []) as AddedToken[];
  const addedById = new Map(added.map((t) => [t.id, t]));
  let maxId = -1;
  for (const id of Object.values(model.vocab)) maxId = Math.max(maxId, id);
  for (const t of added) maxId = Math.max(maxId, t.id);
  const vocabSize = Math.max(options.vocabSize ?? 0, maxId + 1);
  const reverse: (string | undefined)[] = new Array(vocabSize);
  for (const [token, id] of Object.entries(model.vocab)) reverse[id] = token;
  for (const t of added) reverse[t.id] = t.content;
  const spm = model.byte_fallback === true;
  const pre = options.pre ?? (spm ? 'default' : detectPre(tokenizerJson));

  const tokens: string[] = [];
  const tokenTypes: number[] = [];
  const scores: number[] = [];
  // SentencePiece scores: tokenizer.json's merges are the pieces ordered by score (the HF converter sorts them so),
  // so a piece scores minus the rank of the first merge that makes it; pieces no merge makes rank after all merges.
  const mergeRank = new Map<string, number>();
  if (spm) {
    (model.merges ?? []).forEach((m, rank) => {
      const [left, right] = typeof m === 'string' ? m.split(' ', 2) : m;
      const piece = left + right;
      if (!mergeRank.has(piece)) mergeRank.set(piece, rank);
    });
  }
  const mergeCount = model.merges?.length ?? 0;
  for (let id = 0; id < vocabSize; id++) {
    const token = reverse[id];
    const a = addedById.get(id);
    if (token === undefined) {
      tokens.push(`[PAD${id}]`);
      tokenTypes.push(GGUF_TOKEN_TYPE.UNUSED);
      scores.push(-1000);
    } else if (a) {
      // Added tokens: control when special or special-looking, else user-defined with ▁ pre-normalized to a space.
      const control = a.special === true || looksSpecial(token);
      tokens.push(control ? token : token.replaceAll('\u2581', ' '));
      tokenTypes.push(control ? GGUF_TOKEN_TYPE.CONTROL : GGUF_TOKEN_TYPE.USER_DEFINED);
      scores.push(-1000);
    } else if (spm && /^<0x[0-9A-F]{2}>$/.test(token)) {
      tokens.push(token);
      tokenTypes.push(GGUF_TOKEN_TYPE.BYTE);
      scores.push(0);
    } else {
      tokens.push(token);
      tokenTypes.push(GGUF_TOKEN_TYPE.NORMAL);
      scores.push(-(mergeRank.get(token) ?? mergeCount + id));
    }
  }

  const idOf = (key: string): number | null => {
    const content = tokenContent(tokenizerConfig[key]);
    if (content === null) return null;
    const id = tokens.indexOf(content);
    return id < 0 ? null : id;
  };
  const bosId = idOf('bos_token');
  const eosId = idOf('eos_token');
  const unkId = idOf('unk_token') ?? (spm && typeof (tokenizerJson.model as { unk_token?: unknown }).unk_token === 'string' ? tokens.indexOf((tokenizerJson.model as { unk_token: string }).unk_token) : null);
  const padId = idOf('pad_token');
  const addBos = addsBos(tokenizerJson, tokenizerConfig);
  const addEos = tokenizerConfig.add_eos_token === true;
  const chatTemplate = typeof tokenizerConfig.chat_template === 'string' ? tokenizerConfig.chat_template : null;

  const gguf: Record<string, GgufWriteValue> = {
    'tokenizer.ggml.model': gv.str(spm ? 'llama' : 'gpt2'),
    'tokenizer.ggml.pre': gv.str(pre),
    'tokenizer.ggml.tokens': gv.strings(tokens),
  };
  if (spm) {
    gguf['tokenizer.ggml.scores'] = gv.f32s(scores);
    gguf['tokenizer.ggml.token_type'] = gv.i32s(tokenTypes);
    // add_dummy_prefix of the SentencePiece model: a Prepend('▁') normalizer in tokenizer.json.
    gguf['tokenizer.ggml.add_space_prefix'] = gv.bool(JSON.stringify(tokenizerJson.normalizer ?? null).includes('"Prepend"'));
  } else {
    gguf['tokenizer.ggml.token_type'] = gv.i32s(tokenTypes);
    gguf['tokenizer.ggml.merges'] = gv.strings((model.merges ?? []).map((m) => (typeof m === 'string' ? m : `${m[0]} ${m[1]}`)));
  }
  if (bosId !== null) gguf['tokenizer.ggml.bos_token_id'] = gv.u32(bosId);
  if (eosId !== null) gguf['tokenizer.ggml.eos_token_id'] = gv.u32(eosId);
  if (unkId !== null && unkId >= 0) gguf['tokenizer.ggml.unknown_token_id'] = gv.u32(unkId);
  if (padId !== null) gguf['tokenizer.ggml.padding_token_id'] = gv.u32(padId);
  gguf['tokenizer.ggml.add_bos_token'] = gv.bool(addBos);
  gguf['tokenizer.ggml.add_eos_token'] = gv.bool(addEos);
  if (chatTemplate !== null) gguf['tokenizer.chat_template'] = gv.str(chatTemplate);

  const specialTokens = added.map((t) => ({ id: t.id, content: t.content, control: tokenTypes[t.id] === GGUF_TOKEN_TYPE.CONTROL }));
  const fallbackId = bosId ?? eosId ?? 0;
  return {
    model: 'real',
    ggufModel: spm ? 'llama' : 'gpt2',
    pre,
    tokens,
    tokenTypes,
    bosId: bosId ?? fallbackId,
    eosId: eosId ?? fallbackId,
    padId: padId ?? eosId ?? fallbackId,
    specialTokens,
    addBos,
    chatTemplate,
    gguf,
    tokenizerJson,
    tokenizerConfig,
  };
}
