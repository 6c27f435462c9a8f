// Vocabulary building: byte-level BPE strings decode to their bytes (all 256), SentencePiece pieces to spaces and
// byte fallbacks, added tokens to their literal text, control tokens to nothing; the result drives a constraint.
import { describe, expect, it } from 'vitest';
import { buildVocabulary, byteLevelTokenBytes, compileConstraint, sentencePieceTokenBytes, tokenTextEncodingOf } from '../../../src/sampling/constraints/index.ts';
import { allowedIds } from './random-walk.ts';

/** GPT-2's byte -> unicode table, built here independently (as the published algorithm describes it). */
function gpt2Alphabet(): string[] {
  const bs: number[] = [];
  for (let b = '!'.charCodeAt(0); b <= '~'.charCodeAt(0); b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const table: string[] = [];
  bs.forEach((b, i) => (table[b] = String.fromCodePoint(cs[i])));
  return table;
}

describe('vocabulary building', () => {
  it('byte-level strings decode to their bytes', () => {
    const alphabet = gpt2Alphabet();
    for (let b = 0; b < 256; b++) expect([...byteLevelTokenBytes(alphabet[b])!]).toEqual([b]);
    const text = ' héllo\n{"';
    const encoded = [...new TextEncoder().encode(text)].map((b) => alphabet[b]).join('');
    expect(new TextDecoder().decode(byteLevelTokenBytes(encoded)!)).toBe(text);
    expect(byteLevelTokenBytes('日')).toBeNull();
  });

  it('SentencePiece pieces and encodings', () => {
    expect(new TextDecoder().decode(sentencePieceTokenBytes('\u2581hello'))).toBe(' hello');
    expect([...sentencePieceTokenBytes('<0x0A>')]).toEqual([10]);
    expect(tokenTextEncodingOf({ decoder: { type: 'ByteLevel' } })).toBe('byte-level');
    expect(tokenTextEncodingOf({ decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '\u2581' } }, { type: 'ByteFallback' }] } })).toBe('sentencepiece');
  });

  it('added tokens are literal text, control tokens nothing, and the vocabulary drives a constraint', () => {
    const alphabet = gpt2Alphabet();
    const bl = (s: string) => [...new TextEncoder().encode(s)].map((b) => alphabet[b]).join('');
    const vocab = buildVocabulary({
      tokenTexts: [bl('{"'), bl('name'), bl('":'), bl(' "'), bl('f'), bl('"}'), bl('hi')],
      encoding: 'byte-level',
      addedTokens: [
        { id: 7, content: '<tool_call>', control: false },
        { id: 8, content: '</tool_call>', control: false },
        { id: 9, content: '<|im_end|>', control: true },
      ],
      endTokenIds: [9],
    });
    expect(vocab.tokens[9]).toBeNull();
    const c = compileConstraint({ kind: 'tools', mode: 'required', tools: [{ type: 'function', name: 'f', parameters: null, strict: false }] }, vocab, { thinking: 'none' });
    expect(allowedIds(c.allowedMask(), 10)).toEqual([7]);
  });
});
