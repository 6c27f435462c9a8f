// The test-model generator for Node: builds a model (build.ts) and writes it to a folder as
// <outDir>/model.gguf and <outDir>/hf/. Browser code imports build.ts instead.

import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildTestModel, type TestModel, type TestModelOptions } from './build.ts';

export * from './build.ts';

/** Generate a model into `outDir` (created): `<outDir>/model.gguf` and `<outDir>/hf/`. */
export function writeTestModel(options: TestModelOptions, outDir: string): TestModel {
  const { info, files } = buildTestModel(options);
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
