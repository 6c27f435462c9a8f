// Runs bench/constraints/sampler.bench-run.ts under vitest (Vite resolves the shaders' `?raw` imports), in Node on
// Dawn: `npx vitest run --config bench/constraints/vitest.sampler.config.ts` (with the Dawn env of sampler.ts).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { include: ['bench/constraints/sampler.bench-run.ts'], environment: 'node', testTimeout: 600_000 },
});
