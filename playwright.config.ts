// End-to-end tests (test/e2e): the built app served from 127.0.0.1, the system Chromium with WebGPU.
import { defineConfig } from '@playwright/test';
import { chromiumArgs, chromiumPath } from './test/chromium.ts';

export default defineConfig({
  testDir: 'test/e2e',
  testMatch: '**/*.spec.ts',
  timeout: 180_000,
  workers: 1,
  // One retry tells a flaky test from a broken one; test/run-all.mjs fails the run on a flaky test too unless
  // test/e2e/known-flaky.json lists it with a reason.
  retries: 1,
  reporter: [['list'], ['json', { outputFile: '.tmp/test-results/e2e.json' }]],
  outputDir: '.tmp/playwright',
  use: {
    browserName: 'chromium',
    launchOptions: { executablePath: chromiumPath(), args: chromiumArgs() },
    baseURL: 'http://127.0.0.1:4173/',
    trace: 'off',
    screenshot: 'off',
  },
  webServer: {
    command: 'node tools/serve-app.mjs dist/app',
    url: 'http://127.0.0.1:4173/',
    env: { PORT: '4173' },
    reuseExistingServer: false,
    timeout: 30_000,
  },
});
