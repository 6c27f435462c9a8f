import { defineConfig } from 'vitest/config';
import { playwright } from '@vitest/browser-playwright';
import { existsSync } from 'node:fs';
import { chromiumArgs, chromiumPath } from './test/chromium.ts';

// Node tests on Dawn (*.dawn.test.ts) run over Chromium's SwiftShader Vulkan driver; the loader's path is set here,
// before the test processes start, so that `npx vitest run` works without extra environment (test/run-all.mjs does
// the same for every step).
const swiftshaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';
if (existsSync(swiftshaderIcd) && !process.env.VK_ICD_FILENAMES) {
  process.env.LD_LIBRARY_PATH = ['/usr/lib/chromium', process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  process.env.VK_ICD_FILENAMES = swiftshaderIcd;
}

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/fuzz/**/*.test.ts'],
          environment: 'node',
          // Kernel tests that also run in Node on Dawn (the `webgpu` package) are named *.dawn.test.ts.
          testTimeout: 60_000,
          // Dawn tests compile their pipelines in beforeAll: slow on a shared CPU adapter.
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'browser',
          // Kernels and the forward pass (test/gpu) and browser-only storage (test/browser), in headless Chromium.
          include: ['test/gpu/**/*.test.ts', 'test/browser/**/*.test.ts'],
          // Generated models and llama.cpp's logits for them, made in Node and served to the page.
          globalSetup: ['test/gpu/forward-fixtures.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({
              launchOptions: { executablePath: chromiumPath(), args: chromiumArgs() },
            }),
            instances: [{ browser: 'chromium' }],
            api: { host: '127.0.0.1' },
          },
        },
      },
    ],
  },
});
