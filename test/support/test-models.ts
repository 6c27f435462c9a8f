// Generated test models for tests: makeTestModel(options) writes a model (GGUF + Hugging Face directory,
// see tools/make-test-model) into a temporary folder once per parameter set and returns its paths.
// Node only (tests in test/unit, or globalSetup of browser tests that then serve the files).

import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveTestModelOptions, writeTestModel, type TestModel, type TestModelOptions } from '../../tools/make-test-model/index.ts';

export type { TestModel, TestModelOptions } from '../../tools/make-test-model/index.ts';

/** Bump when the generator's output changes, so stale cached models are not reused. */
const GENERATOR_VERSION = 3;

/** Where generated models are cached (override with WEBGPU_RESPONSES_TEST_MODELS). */
export function testModelCacheDir(): string {
  return process.env.WEBGPU_RESPONSES_TEST_MODELS ?? join(tmpdir(), 'webgpu-responses-test-models');
}

/**
 * The generated model for these options, written on first use and cached (per parameter set) under
 * testModelCacheDir(). Safe when several test workers ask for the same model at once.
 */
export async function makeTestModel(options: TestModelOptions): Promise<TestModel> {
  const resolved = resolveTestModelOptions(options);
  const key = createHash('sha256').update(JSON.stringify({ v: GENERATOR_VERSION, ...resolved })).digest('hex').slice(0, 16);
  const name = `${resolved.arch}-${resolved.type.toLowerCase()}-s${resolved.seed}-${key}`;
  const root = testModelCacheDir();
  const dir = join(root, name);
  const summary = join(dir, 'test-model.json');
  if (existsSync(summary)) return JSON.parse(readFileSync(summary, 'utf8')) as TestModel;
  mkdirSync(root, { recursive: true });
  const staging = join(root, `.${name}-${process.pid}-${Date.now()}`);
  const written = writeTestModel(resolved, staging);
  try {
    renameSync(staging, dir);
  } catch {
    // Another worker finished first: use its copy.
    rmSync(staging, { recursive: true, force: true });
    if (existsSync(summary)) return JSON.parse(readFileSync(summary, 'utf8')) as TestModel;
    throw new Error(`Could not place the generated test model at ${dir}`);
  }
  const model: TestModel = { ...written, ggufPath: join(dir, 'model.gguf'), hfDir: join(dir, 'hf') };
  writeFileSync(summary, JSON.stringify(model, null, 2));
  return model;
}
