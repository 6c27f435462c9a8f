// The seeded fuzz run of `npm test`: 2,000 generated requests (test/fuzz/cases.ts) against the handler over the
// fake engine and the memory store; every invariant of runner.ts must hold for every one. `npm run fuzz` runs
// 20,000+ and prints the figures.
import { describe, expect, it } from 'vitest';
import { sampleCases } from './cases.ts';
import { runCases } from './runner.ts';

const SEED = 22_2026;

describe('fuzz: 2,000 requests against the handler', () => {
  it('no 5xx for client input, one terminal event per stream, nothing stored for a rejected request', async () => {
    const cases = sampleCases(SEED, 2_000);
    const report = await runCases(cases, SEED);
    // The first violations, with the request that caused each, make a failure readable.
    expect(report.firstViolations).toEqual([]);
    expect(report.totals.serverErrorsForClientInput).toBe(0);
    expect(report.totals.streamsWithoutExactlyOneTerminal).toBe(0);
    expect(report.totals.recordsForRejectedRequests).toBe(0);
    // The run is worth something only if it reached every category and both outcomes.
    expect(Object.keys(report.byCategory).sort()).toEqual(['deep', 'encrypted', 'engine-fault', 'headers', 'mutated', 'not-an-object', 'routes', 'valid']);
    expect(report.totals.status2xx).toBeGreaterThan(300);
    expect(report.totals.status4xx).toBeGreaterThan(300);
    expect(Object.values(report.byCategory).reduce((sum, f) => sum + f.streams, 0)).toBeGreaterThan(100);
  }, 120_000);
});
