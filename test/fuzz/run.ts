// `npm run fuzz [-- --runs N --seed S]`: N (default 20,000) generated requests against the handler over the fake
// engine (test/fuzz/cases.ts, runner.ts); prints the figures by category as JSON and exits 1 on any violation.
import { sampleCases } from './cases.ts';
import { runCases } from './runner.ts';

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? Number(process.argv[at + 1]) : fallback;
}

const runs = option('runs', 20_000);
const seed = option('seed', 22_2026);
const generated = performance.now();
const cases = sampleCases(seed, runs);
const generationMs = Math.round(performance.now() - generated);
const report = await runCases(cases, seed, (done) => {
  if (done % 2_000 === 0) process.stderr.write(`fuzz: ${done}/${runs}\n`);
});
const byCategory = Object.fromEntries(
  Object.entries(report.byCategory).map(([name, f]) => [name, { ...f, totalMs: Math.round(f.totalMs), maxMs: Math.round(f.maxMs), meanMs: Number((f.totalMs / f.requests).toFixed(2)) }]),
);
console.log(JSON.stringify({ ...report, generationMs, peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024), byCategory }, null, 2));
process.exit(Object.keys(report.violations).length === 0 ? 0 : 1);
