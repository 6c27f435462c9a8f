// The real-client suites (`npm run test:clients`): the AI SDK, the Agents SDK and Codex CLI against
// `webgpu-responses serve` started as a process. Apart from `npm test`'s unit project because each file starts its
// own server (a model load, pipelines compiled on SwiftShader) and Codex's turn prefills an 11k-token prompt.
import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Dawn in the serve processes runs over Chromium's SwiftShader Vulkan driver when no other ICD is set.
const swiftshaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';
if (existsSync(swiftshaderIcd) && !process.env.VK_ICD_FILENAMES) {
  process.env.LD_LIBRARY_PATH = ['/usr/lib/chromium', process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  process.env.VK_ICD_FILENAMES = swiftshaderIcd;
}

export default defineConfig({
  test: {
    name: 'clients',
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/clients/**/*.test.ts'],
    environment: 'node',
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // One serve process at a time: the 2-core machine and one GPU queue.
    fileParallelism: false,
  },
});
