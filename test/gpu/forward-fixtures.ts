// Node side of the forward-pass tests in Chromium: generates the test models (GGUF + Hugging Face dirs) under
// .tmp/forward-fixtures/ (served by Vite to the page) and llama.cpp's logits and greedy tokens for them, in
// index.json. Works as a vitest globalSetup (export `setup`) and as a script:
//   npx tsx test/gpu/forward-fixtures.ts
// Regenerates only when the case list or the generator changed (a hash in index.json).
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLlamaOracle } from '../support/llama-oracle.ts';
import { makeTestModel, type TestModelOptions } from '../support/test-models.ts';
import { FORWARD_CASES, FORWARD_GREEDY, FORWARD_PROMPT, type ForwardFixtureIndex } from './forward-cases.ts';
import { setupQuantMixFixtures } from './quant-mix-fixtures.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURE_DIR = join(ROOT, '.tmp', 'forward-fixtures');
const FIXTURE_VERSION = 1;

export async function setup(): Promise<void> {
  // The llama-quantize mixes (quant-mix.test.ts) have their own folder and index.
  await setupQuantMixFixtures();
  const hash = createHash('sha256')
    .update(JSON.stringify({ v: FIXTURE_VERSION, cases: FORWARD_CASES, prompt: FORWARD_PROMPT, greedy: FORWARD_GREEDY }))
    .digest('hex')
    .slice(0, 16);
  const indexPath = join(FIXTURE_DIR, 'index.json');
  if (existsSync(indexPath)) {
    const index = JSON.parse(readFileSync(indexPath, 'utf8')) as ForwardFixtureIndex;
    if (index.hash === hash) return;
  }
  rmSync(FIXTURE_DIR, { recursive: true, force: true });
  mkdirSync(FIXTURE_DIR, { recursive: true });
  const models = [];
  for (const c of FORWARD_CASES) {
    const m = await makeTestModel(c.options as TestModelOptions);
    const dir = join(FIXTURE_DIR, c.id);
    mkdirSync(dir, { recursive: true });
    cpSync(m.ggufPath, join(dir, 'model.gguf'));
    cpSync(m.hfDir, join(dir, 'hf'), { recursive: true });
    models.push(m);
  }
  const oracle = runLlamaOracle(models.map((m) => ({ model: m.ggufPath, tokens: FORWARD_PROMPT, greedy: FORWARD_GREEDY })));
  const index: ForwardFixtureIndex = {
    hash,
    cases: FORWARD_CASES.map((c, i) => {
      const base = '/' + relative(ROOT, join(FIXTURE_DIR, c.id)).split('\\').join('/');
      return {
        id: c.id,
        gguf: `${base}/model.gguf`,
        hfDir: `${base}/hf`,
        hfFiles: ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors'],
        llama: { logits: [...oracle[i].logits, ...oracle[i].greedyLogits!], greedy: oracle[i].greedy! },
      };
    }),
  };
  writeFileSync(indexPath, JSON.stringify(index));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await setup();
  console.log(`forward fixtures in ${FIXTURE_DIR}`);
}
