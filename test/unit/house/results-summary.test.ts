// npm test's summary (test/results-summary.mjs) over reporter files made here: counts, and every failed test named
// with its first error line, which is what the tail of a CI log keeps.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module of the test runner, without types
import { summarizeResults } from '../../results-summary.mjs';

function vitestFile(failures: { file: string; name: string; message: string }[], extra: object[] = []) {
  return {
    numPassedTests: 10,
    numFailedTests: failures.length,
    numPendingTests: 1,
    numTodoTests: 0,
    testResults: [
      ...failures.map((f) => ({
        name: join(process.cwd(), f.file),
        status: 'failed',
        assertionResults: [{ status: 'passed', fullName: 'fine' }, { status: 'failed', fullName: f.name, failureMessages: [`${f.message}\n    at somewhere`] }],
      })),
      ...extra,
    ],
  };
}

function dirWith(files: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), 'summary-'));
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(body));
  return dir;
}

const e2e = (tests: { title: string; status: string; error?: string }[]) => ({
  stats: { expected: 5, unexpected: tests.filter((t) => t.status === 'unexpected').length, skipped: 0 },
  suites: [{ title: 'a.spec.ts', specs: tests.map((t) => ({ title: t.title, tests: [{ status: t.status, results: [{ error: t.error ? { message: t.error } : undefined }] }] })), suites: [] }],
});

describe('npm test summary', () => {
  it('names each failed vitest, client and e2e test with its first error line', () => {
    const dir = dirWith({
      'vitest.json': vitestFile([{ file: 'test/unit/x.test.ts', name: 'suite case', message: 'AssertionError: expected 2 to be 1' }]),
      'clients.json': vitestFile([], [{ name: join(process.cwd(), 'test/clients/y.test.ts'), status: 'failed', message: 'Error: Cannot find module z\nstack', assertionResults: [] }]),
      'e2e.json': e2e([{ title: 'ok one', status: 'expected' }, { title: 'broken', status: 'unexpected', error: 'Timeout 30000ms exceeded.\nlog' }]),
      'known.json': {},
    });
    const s = summarizeResults(dir, true, join(dir, 'known.json'));
    expect(s.failedNames).toEqual([
      'test/unit/x.test.ts > suite case: AssertionError: expected 2 to be 1',
      'test/clients/y.test.ts: Error: Cannot find module z',
      'a.spec.ts > broken: Timeout 30000ms exceeded.',
    ]);
    expect([s.passed, s.failed, s.skipped]).toEqual([25, 2, 2]);
  });

  it('fails an e2e test that passed only on a retry unless known-flaky.json lists it with a reason', () => {
    const dir = dirWith({
      'vitest.json': vitestFile([]),
      'clients.json': vitestFile([]),
      'e2e.json': e2e([{ title: 'listed', status: 'flaky' }, { title: 'unlisted', status: 'flaky' }]),
      'known.json': { 'a.spec.ts > listed': 'a reason' },
    });
    const s = summarizeResults(dir, true, join(dir, 'known.json'));
    expect(s.notes).toEqual(['flaky (listed: a reason): a.spec.ts > listed']);
    expect(s.failedNames).toEqual(['a.spec.ts > unlisted: passed only on a retry, and test/e2e/known-flaky.json does not list it']);
    expect(s.failed).toBe(1);
  });

  it('counts a missing reporter file as a failure, and e2e only when the build ran', () => {
    const dir = dirWith({ 'vitest.json': vitestFile([]) });
    const notBuilt = summarizeResults(dir, false);
    expect(notBuilt.failed).toBe(1);
    expect(notBuilt.failedNames[0]).toMatch(/^clients\.json unreadable/);
    expect(summarizeResults(dir, true).failed).toBe(2);
  });
});
