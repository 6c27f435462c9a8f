// Builds the constraint engine's Vocabulary (token id -> the bytes it decodes to) from a tokenizer's vocabulary
// strings, without depending on the tokenizer module: byte-level BPE strings (GPT-2's byte-to-unicode alphabet,
// Llama 3, Qwen, SmolLM), SentencePiece pieces (`▁` for a space, `<0xNN>` byte fallback) or plain UTF-8. Added
// tokens are their literal text (`<tool_call>`, `<think>`), except control tokens, which constrained text never
// contains (the end tokens among them are allowed where the output may end).
import type { Vocabulary } from './token-trie.ts';

export type TokenTextEncoding = 'byte-level' | 'sentencepiece' | 'utf8';

export interface VocabularyInput {
  /** Token id -> its vocabulary string (e.g. the tokenizer's id_to_token), undefined for unused ids. */
  tokenTexts: readonly (string | undefined)[];
  encoding: TokenTextEncoding;
  /** Added tokens: literal text, or control tokens (`special: true` in tokenizer.json). */
  addedTokens?: readonly { id: number; content: string; control: boolean }[];
  /** Tokens that end generation (EOS, end of turn). */
  endTokenIds: readonly number[];
}

/** GPT-2's byte-level alphabet, reversed: the code point that stands for each byte -> the byte. */
const BYTE_OF_CHAR: Map<number, number> = (() => {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const map = new Map<number, number>();
  let extra = 0;
  for (let b = 0; b < 256; b++) map.set(printable(b) ? b : 256 + extra++, b);
  return map;
})();

const encoder = new TextEncoder();

/** The bytes a byte-level BPE token string stands for (null if it uses characters outside the alphabet). */
export function byteLevelTokenBytes(text: string): Uint8Array | null {
  const out: number[] = [];
  for (const ch of text) {
    const b = BYTE_OF_CHAR.get(ch.codePointAt(0)!);
    if (b === undefined) return null;
    out.push(b);
  }
  return Uint8Array.from(out);
}

/** The bytes of a SentencePiece piece: `▁` is a space, `<0xNN>` one byte. */
export function sentencePieceTokenBytes(text: string): Uint8Array {
  const byte = /^<0x([0-9A-Fa-f]{2})>$/.exec(text);
  if (byte) return Uint8Array.of(parseInt(byte[1], 16));
  return encoder.encode(text.replace(/\u2581/g, ' '));
}

/** Which encoding a tokenizer.json's vocabulary strings use, from its decoder/pre-tokenizer sections. */
export function tokenTextEncodingOf(tokenizerJson: Record<string, unknown>): TokenTextEncoding {
  const decoder = JSON.stringify(tokenizerJson.decoder ?? null) + JSON.stringify(tokenizerJson.pre_tokenizer ?? null);
  if (decoder.includes('ByteLevel')) return 'byte-level';
  if (decoder.includes('ByteFallback') || decoder.includes('\u2581') || decoder.includes('Metaspace')) return 'sentencepiece';
  return 'utf8';
}

export function buildVocabulary(input: VocabularyInput): Vocabulary {
  const tokens: (Uint8Array | null)[] = input.tokenTexts.map((text) => {
    if (text === undefined) return null;
    if (input.encoding === 'byte-level') return byteLevelTokenBytes(text);
    if (input.encoding === 'sentencepiece') return sentencePieceTokenBytes(text);
    return encoder.encode(text);
  });
  for (const added of input.addedTokens ?? []) {
    if (added.id < 0) continue;
    while (tokens.length <= added.id) tokens.push(null);
    tokens[added.id] = added.control ? null : encoder.encode(added.content);
  }
  return { tokens, endTokenIds: [...input.endTokenIds] };
}
