// The fuzz cases against the real engine: the WebGPU engine in Node on Dawn serving the bundled toy model under the
// fake's model ids (`fake`, alias `fake-qwen3`), answers capped at 8 tokens. The same invariants as handler.test.ts
// (runner.ts) must hold when real tokenization, templates, constraints and the GPU decide the output. `npm test` runs
// FUZZ_DAWN_RUNS (default 150) requests; `npm run fuzz:dawn` runs 2,000 and prints the figures.
import { openAsBlob } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebGpuEngine, type WebGpuEngine } from '../../src/engine/webgpu-engine.ts';
import { needDawnAdapter } from '../support/dawn-adapter.ts';
import { dawn, dawnMissing } from '../support/dawn-decoder.ts';
import { sampleCases } from './cases.ts';
import { runCases } from './runner.ts';

const SEED = 31_2026;
const RUNS = Number(process.env.FUZZ_DAWN_RUNS ?? 150);

let engine: WebGpuEngine | null = null;
let missing = '';

beforeAll(async () => {
  missing = await dawnMissing();
  if (missing) return;
  engine = createWebGpuEngine({
    gpu: dawn,
    models: [{ id: 'fake', aliases: ['fake-qwen3'], gguf: await openAsBlob('public/models/toy-qwen3/model.gguf'), contextLength: 1024 }],
  });
});
afterAll(async () => {
  await engine?.dispose();
});

describe(`fuzz: ${RUNS} requests against the WebGPU engine on Dawn`, () => {
  it('no 5xx for client input, one terminal event per stream, nothing stored for a rejected request', async (ctx) => {
    const real = needDawnAdapter(ctx, engine, missing);
    const cases = sampleCases(SEED, RUNS);
    const report = await runCases(cases, SEED, undefined, { engine: real, maxTokens: 8, hangMs: 120_000 });
    if (process.env.FUZZ_DAWN_REPORT) console.log(JSON.stringify({ engine: 'webgpu-dawn', ...report }, null, 2));
    expect(report.firstViolations).toEqual([]);
    expect(report.totals.serverErrorsForClientInput).toBe(0);
    expect(report.totals.streamsWithoutExactlyOneTerminal).toBe(0);
    expect(report.totals.recordsForRejectedRequests).toBe(0);
    // The run reached the real engine: answers were generated and streamed.
    expect(report.totals.status2xx).toBeGreaterThan(RUNS / 10);
    expect(Object.values(report.byCategory).reduce((sum, f) => sum + f.streams, 0)).toBeGreaterThan(RUNS / 20);
  }, 1_800_000);
});
