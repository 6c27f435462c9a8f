// Vitest wrapper of the sampler benchmark (see sampler.ts): prints the JSON to stdout.
import { test } from 'vitest';
import { runSamplerBench } from './sampler.ts';

test('sampler bench', async () => {
  console.log(JSON.stringify(await runSamplerBench(Number(process.env.BENCH_VOCAB ?? 151936), Number(process.env.BENCH_STEPS ?? 7)), null, 2));
});
