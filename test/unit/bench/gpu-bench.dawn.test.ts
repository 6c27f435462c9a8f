// bench/gpu/bench.ts as a lent GPU machine runs it (its `main`, here in-process on Dawn's SwiftShader with --tiny):
// the run a device session gets once must not fail on anything a CPU can find first. The adapter report, the floors,
// the sampler, a dense model and gpt-oss-20b's shape (experts repeated) each with their row, and a variant run
// after them, all without an error and with numbers in them.
import { expect, test } from 'vitest';
import { main } from '../../../bench/gpu/bench.ts';

interface Report {
  adapter: { found: boolean };
  floor: { read_gb_s?: number; dispatch_chain?: { us_per_dispatch: number }[]; error?: string };
  sampling: { rows?: { median_ms: number }[]; error?: string };
  models: { id: string; error?: string; decode_tok_s?: number; prefill_tok_s?: number; measured_read_fraction?: number; variants?: { name: string; error?: string; decode_tok_s?: number }[] }[];
  skipped: string[];
}

test('bench/gpu --tiny: adapter, floors, sampler, a dense and a mixture-of-experts row, a variant; no errors', async () => {
  const variant = { name: 'attention per invocation', engine: { shapes: { forward: { attention: { WORKGROUP_SIZE: 4, SPLIT_POSITIONS: 64 } } } } };
  const report = (await main(['--tiny', '--models', 'qwen2.5-0.5b-q4_0,gpt-oss-20b-mxfp4', '--decode', '4', '--long-prefill', '0', '--variants', JSON.stringify([variant])])) as unknown as Report;
  expect(report.adapter.found).toBe(true);
  expect(report.floor.error).toBeUndefined();
  expect(report.floor.read_gb_s).toBeGreaterThan(0);
  expect(report.floor.dispatch_chain).toHaveLength(4);
  expect(report.sampling.error).toBeUndefined();
  expect(report.sampling.rows!.length).toBeGreaterThan(3);
  expect(report.skipped).toEqual([]);
  expect(report.models.map((m) => m.id)).toEqual(['qwen2.5-0.5b-q4_0', 'gpt-oss-20b-mxfp4']);
  for (const m of report.models) {
    expect(m.error, m.id).toBeUndefined();
    expect(m.decode_tok_s, m.id).toBeGreaterThan(0);
    expect(m.prefill_tok_s, m.id).toBeGreaterThan(0);
    expect(m.measured_read_fraction, m.id).toBeGreaterThan(0);
    expect(m.variants?.map((v) => [v.name, v.error, (v.decode_tok_s ?? 0) > 0]), m.id).toEqual([[variant.name, undefined, true]]);
  }
}, 600_000);
