// A tiny GPT-2-style byte-level BPE vocabulary for test models: 256 byte tokens, merges learned
// deterministically from a small built-in corpus, and the chat special tokens. Emits it both as a Hugging
// Face tokenizer.json and as GGUF `tokenizer.ggml.*` metadata (model "gpt2", pre-tokenizer "qwen2").

/** Qwen2's pre-tokenizer split pattern, as tokenizer.json stores it and llama.cpp's "qwen2" pre applies it. */
export const QWEN2_SPLIT_PATTERN =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** The same pattern for JavaScript (no inline case-insensitive group). */
const SPLIT_REGEX =
  /'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

export interface SpecialToken {
  content: string;
  /** Control tokens (special: true) are only parsed when asked; the others are always matched. */
  control: boolean;
}

export const CHAT_SPECIAL_TOKENS: SpecialToken[] = [
  { content: '<|endoftext|>', control: true },
  { content: '<|im_start|>', control: true },
  { content: '<|im_end|>', control: true },
  { content: '<think>', control: false },
  { content: '</think>', control: false },
  { content: '<tool_call>', control: false },
  { content: '</tool_call>', control: false },
];

const TRAINING_CORPUS = `The quick brown fox jumps over the lazy dog. The weather is nice today, and the
assistant answers the question of the user. You are a helpful assistant. What is the capital of France?
The capital of France is Paris. Call the function get_weather with the location argument.
function add(a, b) { return a + b; }
const result = await fetch("/v1/responses", { method: "POST", body: JSON.stringify(input) });
def main():
    print("hello world")
    for i in range(10):
        if i % 2 == 0:
            return i
{"name": "get_weather", "arguments": {"location": "Paris", "unit": "celsius"}}
Le café est très bon. Ça va? Déjà vu, naïve résumé, über straße. El niño está aquí.
The model thinks step by step before it answers. Let me think about this problem carefully.
Numbers: 0 1 2 3 4 5 6 7 8 9 10 100 1000 3.14159 and so on, the end.`;

/** GPT-2's map from bytes to printable unicode characters. */
export function byteToUnicodeMap(): string[] {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const map: string[] = new Array(256);
  let next = 256;
  for (let b = 0; b < 256; b++) map[b] = String.fromCodePoint(printable.includes(b) ? b : next++);
  return map;
}

export interface ByteLevelBpeVocab {
  model: 'gpt2';
  /** Token strings by id (byte-level encoded for normal tokens, raw for special tokens). */
  tokens: string[];
  /** GGUF token types by id: 1 normal, 3 control, 4 user-defined. */
  tokenTypes: number[];
  /** Merges in rank order, each "left right". */
  merges: string[];
  specialTokens: { id: number; content: string; control: boolean }[];
  bosId: number;
  eosId: number;
  padId: number;
}

/** Build the vocabulary with `mergeCount` merges learned from the built-in corpus. */
export function buildByteLevelBpeVocab(mergeCount: number): ByteLevelBpeVocab {
  const byteChars = byteToUnicodeMap();
  const tokens = [...byteChars];
  const encoder = new TextEncoder();
  // Word frequencies over the pre-tokenized corpus, each word a list of symbols.
  const wordCounts = new Map<string, number>();
  for (const m of TRAINING_CORPUS.matchAll(SPLIT_REGEX)) {
    const word = Array.from(encoder.encode(m[0]), (b) => byteChars[b]).join('');
    wordCounts.set(word, (wordCounts.get(word) ?? 0) + 1);
  }
  const words = [...wordCounts.entries()].map(([w, count]) => ({ symbols: Array.from(w), count }));
  const merges: string[] = [];
  const known = new Set(tokens);
  while (merges.length < mergeCount) {
    const pairCounts = new Map<string, number>();
    for (const { symbols, count } of words) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const key = symbols[i] + ' ' + symbols[i + 1];
        pairCounts.set(key, (pairCounts.get(key) ?? 0) + count);
      }
    }
    let best: string | null = null;
    let bestCount = 0;
    for (const [pair, count] of pairCounts) {
      if (count > bestCount || (count === bestCount && best !== null && pair < best)) {
        best = pair;
        bestCount = count;
      }
    }
    if (best === null || bestCount < 2) break;
    const [left, right] = best.split(' ');
    const merged = left + right;
    merges.push(best);
    if (!known.has(merged)) {
      known.add(merged);
      tokens.push(merged);
    }
    for (const w of words) {
      const out: string[] = [];
      for (let i = 0; i < w.symbols.length; i++) {
        if (i + 1 < w.symbols.length && w.symbols[i] === left && w.symbols[i + 1] === right) {
          out.push(merged);
          i++;
        } else out.push(w.symbols[i]);
      }
      w.symbols = out;
    }
  }
  const tokenTypes = tokens.map(() => 1);
  const specialTokens = CHAT_SPECIAL_TOKENS.map((s) => {
    tokens.push(s.content);
    tokenTypes.push(s.control ? 3 : 4);
    return { id: tokens.length - 1, content: s.content, control: s.control };
  });
  const idOf = (content: string) => specialTokens.find((s) => s.content === content)!.id;
  return {
    model: 'gpt2',
    tokens,
    tokenTypes,
    merges,
    specialTokens,
    bosId: idOf('<|endoftext|>'),
    eosId: idOf('<|im_end|>'),
    padId: idOf('<|endoftext|>'),
  };
}

/** The Hugging Face tokenizer.json of the vocabulary (a Qwen2-style byte-level BPE). */
export function tokenizerJson(vocab: ByteLevelBpeVocab): Record<string, unknown> {
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
  const special = new Set(vocab.specialTokens.map((s) => s.id));
  const modelVocab: Record<string, number> = {};
  vocab.tokens.forEach((t, id) => {
    if (!special.has(id)) modelVocab[t] = id;
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: vocab.specialTokens.map((s) => ({
      id: s.id,
      content: s.content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: s.control,
    })),
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: QWEN2_SPLIT_PATTERN }, behavior: 'Isolated', invert: false },
        byteLevel,
      ],
    },
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: modelVocab,
      merges: vocab.merges,
    },
  };
}

/** The Hugging Face tokenizer_config.json with the chat template. */
export function tokenizerConfigJson(vocab: ByteLevelBpeVocab, chatTemplate: string, contextLength: number): Record<string, unknown> {
  const decoder: Record<string, unknown> = {};
  for (const s of vocab.specialTokens) {
    decoder[String(s.id)] = { content: s.content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: s.control };
  }
  return {
    add_bos_token: false,
    add_eos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: decoder,
    bos_token: null,
    chat_template: chatTemplate,
    clean_up_tokenization_spaces: false,
    eos_token: vocab.tokens[vocab.eosId],
    errors: 'replace',
    model_max_length: contextLength,
    pad_token: vocab.tokens[vocab.padId],
    split_special_tokens: false,
    tokenizer_class: 'Qwen2Tokenizer',
    unk_token: null,
  };
}

/** A llama-style SentencePiece vocabulary (GGUF tokenizer.ggml.model "llama"). */
export interface SentencePieceVocab {
  model: 'llama';
  /** Pieces by id: <unk>, <s>, </s>, <0x00>..<0xFF>, text pieces (spaces as ▁), then the chat tokens. */
  tokens: string[];
  /** GGUF token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte. */
  tokenTypes: number[];
  /** Piece scores: higher merges first. */
  scores: number[];
  specialTokens: { id: number; content: string; control: boolean }[];
  unkId: number;
  bosId: number;
  eosId: number;
  padId: number;
}

export type TestVocab = ByteLevelBpeVocab | SentencePieceVocab;

/**
 * The SentencePiece counterpart of a byte-level BPE vocabulary: every merged BPE token that is whole UTF-8
 * becomes a piece (scored by its merge order), plus every character those pieces use and the printable ASCII
 * characters, with byte-fallback tokens for everything else.
 */
export function sentencePieceVocab(bpe: ByteLevelBpeVocab): SentencePieceVocab {
  const unicodeToByte = new Map(byteToUnicodeMap().map((c, b) => [c, b]));
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const special = new Set(bpe.specialTokens.map((t) => t.id));
  const merged: string[] = [];
  for (let id = 256; id < bpe.tokens.length; id++) {
    if (special.has(id)) continue;
    try {
      const bytes = Uint8Array.from(Array.from(bpe.tokens[id], (c) => unicodeToByte.get(c)!));
      merged.push(decoder.decode(bytes).replaceAll(' ', '\u2581'));
    } catch {
      // Not whole UTF-8 characters: no SentencePiece piece.
    }
  }
  const chars = new Set<string>();
  for (let c = 0x21; c < 0x7f; c++) chars.add(String.fromCharCode(c));
  chars.add('\u2581');
  for (const piece of merged) for (const c of piece) chars.add(c);
  const tokens = ['<unk>', '<s>', '</s>'];
  const tokenTypes = [2, 3, 3];
  const scores = [0, 0, 0];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    tokenTypes.push(6);
    scores.push(0);
  }
  const seen = new Set<string>();
  for (const c of [...chars].sort()) {
    seen.add(c);
    tokens.push(c);
    tokenTypes.push(1);
    scores.push(-1e6);
  }
  merged.forEach((piece, rank) => {
    if (seen.has(piece) || Array.from(piece).length < 2) return;
    seen.add(piece);
    tokens.push(piece);
    tokenTypes.push(1);
    scores.push(-rank);
  });
  const specialTokens = CHAT_SPECIAL_TOKENS.filter((s) => s.content !== '<|endoftext|>').map((s) => {
    tokens.push(s.content);
    tokenTypes.push(s.control ? 3 : 4);
    scores.push(0);
    return { id: tokens.length - 1, content: s.content, control: s.control };
  });
  const imEnd = specialTokens.find((s) => s.content === '<|im_end|>')!.id;
  return {
    model: 'llama',
    tokens,
    tokenTypes,
    scores,
    specialTokens: [{ id: 1, content: '<s>', control: true }, { id: 2, content: '</s>', control: true }, ...specialTokens],
    unkId: 0,
    bosId: 1,
    eosId: imEnd,
    padId: 0,
  };
}
