// The command line end to end: `logits` on both backends (Node on Dawn, headless Chromium) equals llama.cpp's
// logits on a generated model; `generate --json` prints tokens, text and timings, the same on both backends,
// from a GGUF file and from the Hugging Face directory of the same weights.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { runLlamaOracle, type LlamaOracleResult } from '../support/llama-oracle.ts';
import { makeTestModel, type TestModel } from '../support/test-models.ts';

const CLI = fileURLToPath(new URL('../../tools/cli.mjs', import.meta.url));
const TOKENS = [11, 300, 42, 7, 99, 250];

function cli(args: string[]): unknown {
  const out = execFileSync(process.execPath, [CLI, ...args, '--json'], { encoding: 'utf8', maxBuffer: 256 << 20, timeout: 120_000 });
  return JSON.parse(out);
}

function maxAbsDiff(a: number[][], b: number[][]): number {
  let max = 0;
  a.forEach((row, r) => row.forEach((v, i) => (max = Math.max(max, Math.abs(v - b[r][i])))));
  return max;
}

describe('webgpu-responses CLI', () => {
  let model: TestModel;
  let oracle: LlamaOracleResult;
  beforeAll(async () => {
    model = await makeTestModel({ arch: 'qwen2', type: 'F32', seed: 21, hidden: 64, heads: 4, kvHeads: 2 });
    [oracle] = runLlamaOracle([{ model: model.ggufPath, tokens: TOKENS }]);
  }, 120_000);

  test.each([['node'], ['chromium']])('logits --backend %s equals llama.cpp', (backend) => {
    const result = cli(['logits', '--model', model.ggufPath, '--tokens', TOKENS.join(','), '--backend', backend]) as { tokens: number[]; logits: number[][] };
    expect(result.tokens).toEqual(TOKENS);
    expect(result.logits).toHaveLength(TOKENS.length);
    expect(result.logits[0]).toHaveLength(model.vocabSize);
    const d = maxAbsDiff(result.logits, oracle.logits);
    console.log(`CLI logits (${backend}) vs llama.cpp: max abs diff ${d.toExponential(2)}`);
    expect(d).toBeLessThan(1e-4);
  }, 120_000);

  test('generate --json: the same tokens on both backends and from GGUF or the HF directory', () => {
    type Generated = { tokens: number[]; text: string; finish_reason: string; usage: { completionTokens: number }; timings: Record<string, number> };
    const args = ['--prompt', 'Tell me about caches.', '--max-tokens', '8'];
    const onNode = cli(['generate', '--model', model.ggufPath, ...args, '--backend', 'node']) as Generated;
    const inChromium = cli(['generate', '--model', model.hfDir, ...args]) as Generated;
    expect(onNode.tokens.length).toBeGreaterThan(0);
    expect(inChromium.tokens).toEqual(onNode.tokens);
    expect(inChromium.text).toBe(onNode.text);
    expect(onNode.usage.completionTokens).toBe(onNode.tokens.length);
    for (const key of ['load_ms', 'prefill_ms', 'decode_ms', 'prefill_tok_s', 'decode_tok_s']) expect(typeof onNode.timings[key]).toBe('number');
  }, 240_000);
});
