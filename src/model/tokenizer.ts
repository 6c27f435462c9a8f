// The model tokenizer: @huggingface/tokenizers over a tokenizer.json (+ tokenizer_config.json), or over the
// equivalent tokenizer.json built in memory from a GGUF file's own vocabulary (`tokenizer.ggml.*`: gpt2-style
// byte-level BPE, or llama SentencePiece as BPE with byte fallback), so a GGUF needs no other file.

import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import type { GgufMetadataValue } from './gguf.ts';

/** A token the tokenizer matches as a whole in text (chat markers and the like). */
export interface SpecialTokenInfo {
  id: number;
  content: string;
  /** Control tokens (`special` in tokenizer.json); user-defined ones like `<think>` are false. */
  control: boolean;
}

export interface TokenizerSource {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
}

/** Token ids from text and text from token ids. */
export class ModelTokenizer {
  private readonly hf: HfTokenizer;
  readonly specialTokens: SpecialTokenInfo[];
  readonly bosToken: string | null;
  readonly eosToken: string | null;
  readonly bosTokenId: number | null;
  readonly eosTokenId: number | null;
  readonly vocabSize: number;
  /** Whether the tokenizer puts BOS before a text (add_bos_token / its post-processor), as llama.cpp's add_bos. */
  readonly addsBos: boolean;
  /** The chat template the files carry, if any (a string, or named templates). */
  readonly chatTemplate: string | Record<string, string> | null;

  constructor(readonly source: TokenizerSource) {
    this.hf = new HfTokenizer(source.tokenizerJson, source.tokenizerConfig);
    const added = (source.tokenizerJson.added_tokens ?? []) as { id: number; content: string; special?: boolean }[];
    this.specialTokens = added.map((t) => ({ id: t.id, content: t.content, control: t.special === true }));
    const tokenText = (v: unknown): string | null =>
      typeof v === 'string' ? v : v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string' ? (v as { content: string }).content : null;
    this.bosToken = tokenText(source.tokenizerConfig.bos_token);
    this.eosToken = tokenText(source.tokenizerConfig.eos_token);
    this.bosTokenId = this.bosToken === null ? null : (this.hf.token_to_id(this.bosToken) ?? null);
    this.eosTokenId = this.eosToken === null ? null : (this.hf.token_to_id(this.eosToken) ?? null);
    let maxId = -1;
    for (const id of this.hf.get_vocab(true).values()) maxId = Math.max(maxId, id);
    this.vocabSize = maxId + 1;
    this.addsBos =
      this.bosTokenId !== null && source.tokenizerConfig.add_bos_token !== false && this.hf.encode('a', { add_special_tokens: true }).ids[0] === this.bosTokenId;
    this.chatTemplate = parseChatTemplateField(source.tokenizerConfig.chat_template);
  }

  /** From tokenizer.json and tokenizer_config.json (parsed). */
  static fromJson(tokenizerJson: Record<string, unknown>, tokenizerConfig: Record<string, unknown> = {}): ModelTokenizer {
    if (!tokenizerJson || typeof tokenizerJson !== 'object' || !('model' in tokenizerJson)) {
      throw new Error('tokenizer.json: has no "model" section: not a Hugging Face tokenizer file');
    }
    return new ModelTokenizer({ tokenizerJson: withUnicodeDigits(tokenizerJson), tokenizerConfig });
  }

  /** From a GGUF file's metadata alone. */
  static fromGguf(metadata: Record<string, GgufMetadataValue>): ModelTokenizer {
    return new ModelTokenizer(tokenizerSourceFromGguf(metadata));
  }

  /**
   * Token ids of `text`. Special tokens written in the text are matched (as Hugging Face tokenizers and
   * llama.cpp with parse_special do). `addSpecialTokens` adds what the tokenizer's post-processor adds (BOS).
   * Encode a rendered chat prompt with addSpecialTokens false: the template writes its own markers.
   */
  encode(text: string, options: { addSpecialTokens?: boolean } = {}): number[] {
    // Lone surrogates (valid in a JS string, e.g. from JSON "\ud800") become U+FFFD, as UTF-8 has them (llama.cpp).
    return this.hf.encode(wellFormed(text), { add_special_tokens: options.addSpecialTokens ?? false }).ids;
  }

  /**
   * Token ids of a rendered chat prompt, as llama.cpp's server makes them: special tokens parsed, and BOS first
   * when the tokenizer adds one: the template's own BOS is kept (not doubled), a template that writes none gets it.
   */
  encodePrompt(text: string): number[] {
    const ids = this.encode(text);
    if (this.addsBos && ids[0] !== this.bosTokenId) ids.unshift(this.bosTokenId!);
    return ids;
  }

  /** Text of token ids (may contain U+FFFD where the ids end inside a UTF-8 character). */
  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    // Ids with no token (unused rows of the embedding) decode to nothing, as in llama.cpp (not to the unknown token).
    const known = ids.filter((id) => this.hf.id_to_token(id) !== undefined);
    if (known.length === 0) return '';
    return this.hf.decode(known, { skip_special_tokens: options.skipSpecialTokens ?? false, clean_up_tokenization_spaces: false });
  }

  /** The id of a token given its text (e.g. "<|im_end|>"), or undefined. */
  tokenId(token: string): number | undefined {
    return this.hf.token_to_id(token);
  }

  /** The vocabulary string of a token id, or undefined. */
  tokenText(id: number): string | undefined {
    return this.hf.id_to_token(id);
  }
}

/**
 * tokenizer.json with each `Digits` pre-tokenizer as the equivalent Split on \p{N}: @huggingface/tokenizers' JS
 * Digits matches ASCII \d only, the Rust one (and llama.cpp) any numeric character ("١٢٣", "１２３", "²"): SmolLM's.
 */
function withUnicodeDigits(tokenizerJson: Record<string, unknown>): Record<string, unknown> {
  const rewrite = (p: unknown): unknown => {
    if (!p || typeof p !== 'object') return p;
    const node = p as Record<string, unknown>;
    if (node.type === 'Digits') return { type: 'Split', pattern: { Regex: node.individual_digits ? '\\p{N}' : '\\p{N}+' }, behavior: 'Isolated', invert: false };
    if (node.type === 'Sequence' && Array.isArray(node.pretokenizers)) return { ...node, pretokenizers: node.pretokenizers.map(rewrite) };
    return p;
  };
  const pre = rewrite(tokenizerJson.pre_tokenizer);
  return pre === tokenizerJson.pre_tokenizer ? tokenizerJson : { ...tokenizerJson, pre_tokenizer: pre };
}

/** `text` with each lone surrogate replaced by U+FFFD (String.prototype.toWellFormed). */
export function wellFormed(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

function parseChatTemplateField(value: unknown): string | Record<string, string> | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const named: Record<string, string> = {};
    for (const entry of value) {
      if (entry && typeof entry.name === 'string' && typeof entry.template === 'string') named[entry.name] = entry.template;
    }
    return Object.keys(named).length ? named : null;
  }
  if (value && typeof value === 'object') return value as Record<string, string>;
  return null;
}

// ---- tokenizer.json from GGUF metadata -------------------------------------------------------------

const GPT2_SPLIT = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
const LLAMA3_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Tekken (Mistral Nemo and later) and gpt-4o (gpt-oss, o200k): llama.cpp's adaptation of the tokenizer.json
// patterns ("a letter that is not a-z" for \p{Lu}..., marks not letters), which is what a GGUF is tokenized with.
const TEKKEN_SPLIT =
  "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const GPT4O_SPLIT =
  "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** llama.cpp pre-tokenizer names whose vocabulary tries a whole pre-token before merging (ignore_merges). */
const IGNORE_MERGES_PRE = new Set(['llama3', 'llama-v3', 'llama-bpe', 'falcon3', 'falcon-h1', 'pixtral', 'midm-2.0', 'lfm2', 'tekken']);
/** llama.cpp pre-tokenizer names that add BOS when the GGUF has no tokenizer.ggml.add_bos_token. */
const ADD_BOS_PRE = new Set([...IGNORE_MERGES_PRE, 'chameleon']);

/** Pre-tokenizer of each llama.cpp `tokenizer.ggml.pre` name this runtime knows (others: GPT-2's). */
function bpePreTokenizer(pre: string): Record<string, unknown> {
  const byteLevel = (useRegex: boolean) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: useRegex });
  const split = (pattern: string) => ({ type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false });
  switch (pre) {
    case 'qwen2':
    case 'deepseek-r1-qwen':
    case 'kormo':
    case 'megrez':
    case 'stablelm2':
      return { type: 'Sequence', pretokenizers: [split(QWEN2_SPLIT), byteLevel(false)] };
    case 'llama3':
    case 'llama-v3':
    case 'llama-bpe':
    case 'falcon3':
    case 'falcon-h1':
    case 'pixtral':
    case 'midm-2.0':
    case 'lfm2':
    case 'smaug-bpe':
    case 'dbrx':
      return { type: 'Sequence', pretokenizers: [split(LLAMA3_SPLIT), byteLevel(false)] };
    case 'tekken':
      return { type: 'Sequence', pretokenizers: [split(TEKKEN_SPLIT), byteLevel(false)] };
    case 'gpt-4o':
    case 'llama4':
    case 'minimax-m2':
      return { type: 'Sequence', pretokenizers: [split(GPT4O_SPLIT), byteLevel(false)] };
    case 'smollm':
      return { type: 'Sequence', pretokenizers: [split('\\p{N}'), byteLevel(true)] };
    default:
      return { type: 'Sequence', pretokenizers: [split(GPT2_SPLIT), byteLevel(false)] };
  }
}

function stringArray(metadata: Record<string, GgufMetadataValue>, key: string): string[] {
  const v = metadata[key];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error(`GGUF metadata key "${key}" is missing or not a string array`);
  return v as string[];
}

function numberArray(metadata: Record<string, GgufMetadataValue>, key: string): number[] | null {
  const v = metadata[key];
  if (v === undefined) return null;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) throw new Error(`GGUF metadata key "${key}" is not a number array`);
  return v as number[];
}

const TOKEN_TYPE = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 } as const;

/** A GGUF vocabulary as tokenizer.json's parts: added tokens (control and user-defined) and the vocabulary map. */
interface GgufVocab {
  tokens: string[];
  types: number[];
  addedTokens: Record<string, unknown>[];
  vocab: Record<string, number>;
}

function ggufVocab(metadata: Record<string, GgufMetadataValue>): GgufVocab {
  const tokens = stringArray(metadata, 'tokenizer.ggml.tokens');
  const types = numberArray(metadata, 'tokenizer.ggml.token_type') ?? tokens.map(() => TOKEN_TYPE.NORMAL);
  const addedTokens = tokens.flatMap((content, tokenId) => {
    const t = types[tokenId];
    const special = t === TOKEN_TYPE.CONTROL || t === TOKEN_TYPE.UNKNOWN;
    if (!special && t !== TOKEN_TYPE.USER_DEFINED) return [];
    return [{ id: tokenId, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special }];
  });
  const addedIds = new Set(addedTokens.map((t) => t.id));
  const vocab: Record<string, number> = {};
  // Unused ids (`[PAD<id>]` rows past the real vocabulary) are no text: llama.cpp decodes them to nothing.
  tokens.forEach((t, i) => {
    if (!addedIds.has(i) && types[i] !== TOKEN_TYPE.UNUSED && !(t in vocab)) vocab[t] = i;
  });
  return { tokens, types, addedTokens, vocab };
}

/** GGUF model "gpt2": byte-level BPE with the pre-tokenizer of its `pre` name. */
function byteLevelBpeJson(metadata: Record<string, GgufMetadataValue>, v: GgufVocab, pre: string): Record<string, unknown> {
  return {
    version: '1.0',
    added_tokens: v.addedTokens,
    normalizer: null,
    pre_tokenizer: bpePreTokenizer(pre),
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '',
      fuse_unk: false, byte_fallback: false, ignore_merges: IGNORE_MERGES_PRE.has(pre),
      vocab: v.vocab, merges: stringArray(metadata, 'tokenizer.ggml.merges'),
    },
  };
}

/** GGUF model "llama": SentencePiece as BPE with byte fallback, merges ranked by the pieces' scores. */
function sentencePieceJson(metadata: Record<string, GgufMetadataValue>, v: GgufVocab, unkId: number | null): Record<string, unknown> {
  const scores = numberArray(metadata, 'tokenizer.ggml.scores') ?? v.tokens.map(() => 0);
  const addSpacePrefix = metadata['tokenizer.ggml.add_space_prefix'] !== false;
  return {
    version: '1.0',
    added_tokens: v.addedTokens,
    normalizer: {
      type: 'Sequence',
      normalizers: [
        ...(addSpacePrefix ? [{ type: 'Prepend', prepend: '▁' }] : []),
        { type: 'Replace', pattern: { String: ' ' }, content: '▁' },
      ],
    },
    pre_tokenizer: null,
    post_processor: null,
    decoder: {
      type: 'Sequence',
      decoders: [
        { type: 'Replace', pattern: { String: '▁' }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        ...(addSpacePrefix ? [{ type: 'Strip', content: ' ', start: 1, stop: 0 }] : []),
      ],
    },
    model: {
      type: 'BPE', dropout: null, unk_token: unkId === null ? null : v.tokens[unkId], continuing_subword_prefix: null,
      end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, ignore_merges: false,
      vocab: v.vocab, merges: sentencePieceMerges(v.tokens, scores, v.types),
    },
  };
}

/** The tokenizer.json + tokenizer_config.json equivalent to a GGUF's `tokenizer.ggml.*` metadata. */
export function tokenizerSourceFromGguf(metadata: Record<string, GgufMetadataValue>): TokenizerSource {
  const model = metadata['tokenizer.ggml.model'];
  if (typeof model !== 'string') throw new Error('GGUF metadata key "tokenizer.ggml.model" is missing: the file has no tokenizer');
  const v = ggufVocab(metadata);
  const tokens = v.tokens;
  const id = (key: string): number | null => (typeof metadata[key] === 'number' ? (metadata[key] as number) : null);
  const bosId = id('tokenizer.ggml.bos_token_id');
  const eosId = id('tokenizer.ggml.eos_token_id');
  const unkId = id('tokenizer.ggml.unknown_token_id');
  const padId = id('tokenizer.ggml.padding_token_id');
  let addBos = metadata['tokenizer.ggml.add_bos_token'];
  let tokenizerJson: Record<string, unknown>;
  if (model === 'gpt2') {
    const pre = typeof metadata['tokenizer.ggml.pre'] === 'string' ? (metadata['tokenizer.ggml.pre'] as string) : 'default';
    addBos ??= ADD_BOS_PRE.has(pre);
    tokenizerJson = byteLevelBpeJson(metadata, v, pre);
  } else if (model === 'llama') {
    addBos ??= true;
    tokenizerJson = sentencePieceJson(metadata, v, unkId);
  } else {
    throw new Error(`Unsupported GGUF tokenizer model "${model}" in tokenizer.ggml.model (supported: gpt2, llama)`);
  }
  if (addBos === true && bosId !== null) {
    const bos = tokens[bosId];
    tokenizerJson.post_processor = {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { [bos]: { id: bos, ids: [bosId], tokens: [bos] } },
    };
  }
  const chatTemplate = metadata['tokenizer.chat_template'];
  const tokenizerConfig: Record<string, unknown> = {
    add_bos_token: addBos === true,
    add_eos_token: metadata['tokenizer.ggml.add_eos_token'] === true,
    bos_token: bosId === null ? null : tokens[bosId],
    eos_token: eosId === null ? null : tokens[eosId],
    unk_token: unkId === null ? null : tokens[unkId],
    pad_token: padId === null ? null : tokens[padId],
    chat_template: typeof chatTemplate === 'string' ? chatTemplate : null,
    clean_up_tokenization_spaces: false,
  };
  return { tokenizerJson, tokenizerConfig };
}

/**
 * SentencePiece (BPE-style) vocabulary to ranked merges: every split of a piece into two pieces of the
 * vocabulary is a merge, ranked by the score of the merged piece (highest first), as llama.cpp merges.
 */
function sentencePieceMerges(tokens: string[], scores: number[], types: number[]): string[][] {
  const ids = new Map<string, number>();
  tokens.forEach((t, i) => {
    if (types[i] === TOKEN_TYPE.NORMAL && !ids.has(t)) ids.set(t, i);
  });
  // Columns rather than objects, and splits at code point boundaries without arrays of characters: a 262k
  // vocabulary (Gemma 3) has half a million merges.
  const lefts: string[] = [];
  const rights: string[] = [];
  const mergeScores: number[] = [];
  const mergedIds: number[] = [];
  const leftIds: number[] = [];
  for (const [piece, id] of ids) {
    for (let i = 1; i < piece.length; i++) {
      const unit = piece.charCodeAt(i);
      if (unit >= 0xdc00 && unit <= 0xdfff) continue; // inside a surrogate pair
      const left = piece.slice(0, i);
      const leftId = ids.get(left);
      if (leftId === undefined) continue;
      const right = piece.slice(i);
      if (!ids.has(right)) continue;
      lefts.push(left);
      rights.push(right);
      mergeScores.push(scores[id]);
      mergedIds.push(id);
      leftIds.push(leftId);
    }
  }
  const order = Array.from(lefts, (_, k) => k);
  order.sort((a, b) => mergeScores[b] - mergeScores[a] || mergedIds[a] - mergedIds[b] || leftIds[a] - leftIds[b]);
  return order.map((k) => [lefts[k], rights[k]]);
}
