// Node side of the quant-mix tests (quant-mix.test.ts): writes F32 test models, quantizes each with llama.cpp's
// own llama_model_quantize (test/support/ggml-oracle.ts) to every mix of quant-mix-cases.ts, and records
// llama.cpp's logits and greedy tokens and node-llama-cpp's view of the tensor types, under
// .tmp/quant-mix-fixtures/ (served by Vite). Runs from the browser project's globalSetup (forward-fixtures.ts) and as
//   npx tsx test/gpu/quant-mix-fixtures.ts
// Regenerates only when the cases change (a hash in index.json); nothing needs the network.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { llamaQuantize } from '../support/ggml-oracle.ts';
import { llamaTensorTypes, runLlamaOracle } from '../support/llama-oracle.ts';
import { makeTestModel } from '../support/test-models.ts';
import { QUANT_MIX_CASES, QUANT_MIX_GREEDY, QUANT_MIX_PROMPT, type QuantMixFixtureIndex } from './quant-mix-cases.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const QUANT_MIX_FIXTURE_DIR = join(ROOT, '.tmp', 'quant-mix-fixtures');
const FIXTURE_VERSION = 1;

export async function setupQuantMixFixtures(): Promise<void> {
  const hash = createHash('sha256')
    .update(JSON.stringify({ v: FIXTURE_VERSION, cases: QUANT_MIX_CASES, prompt: QUANT_MIX_PROMPT, greedy: QUANT_MIX_GREEDY }))
    .digest('hex')
    .slice(0, 16);
  const indexPath = join(QUANT_MIX_FIXTURE_DIR, 'index.json');
  if (existsSync(indexPath) && (JSON.parse(readFileSync(indexPath, 'utf8')) as QuantMixFixtureIndex).hash === hash) return;
  rmSync(QUANT_MIX_FIXTURE_DIR, { recursive: true, force: true });
  mkdirSync(QUANT_MIX_FIXTURE_DIR, { recursive: true });
  const files: string[] = [];
  for (const c of QUANT_MIX_CASES) {
    const s = c.shape;
    const source = await makeTestModel({
      arch: s.arch, type: 'F32', seed: s.seed, hidden: s.hidden, intermediate: s.intermediate, heads: s.heads, kvHeads: s.kvHeads, headDim: s.headDim, layers: s.layers,
    });
    const quantized = llamaQuantize(source.ggufPath, c.ftype);
    const file = join(QUANT_MIX_FIXTURE_DIR, `${c.id}.gguf`);
    cpSync(quantized, file);
    files.push(file);
  }
  const oracle = runLlamaOracle(files.map((model) => ({ model, tokens: QUANT_MIX_PROMPT, greedy: QUANT_MIX_GREEDY })));
  const cases: QuantMixFixtureIndex['cases'] = [];
  for (const [i, c] of QUANT_MIX_CASES.entries()) {
    cases.push({
      id: c.id,
      gguf: '/' + relative(ROOT, files[i]).split('\\').join('/'),
      llamaTypes: await llamaTensorTypes(files[i]),
      llama: { logits: [...oracle[i].logits, ...oracle[i].greedyLogits!], greedy: oracle[i].greedy! },
    });
  }
  writeFileSync(indexPath, JSON.stringify({ hash, cases } satisfies QuantMixFixtureIndex));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await setupQuantMixFixtures();
  console.log(`quant-mix fixtures in ${QUANT_MIX_FIXTURE_DIR}`);
}
