// Node tests on Dawn (the `webgpu` package) need a Vulkan driver: `npm test` points Dawn at Chromium's SwiftShader
// (LD_LIBRARY_PATH and VK_ICD_FILENAMES, see test/run-all.mjs). Without an adapter these tests fail, so that a
// machine missing the driver cannot pass `npm test` silently; set WEBGPU_RESPONSES_SKIP_DAWN=1 to skip them on purpose.

export function needDawnAdapter<T>(ctx: { skip: (note?: string) => void }, value: T | null | undefined, missing: string): T {
  if (value) return value;
  if (process.env.WEBGPU_RESPONSES_SKIP_DAWN === '1') ctx.skip(`${missing} (WEBGPU_RESPONSES_SKIP_DAWN=1)`);
  throw new Error(`${missing}. Set WEBGPU_RESPONSES_SKIP_DAWN=1 to skip the Dawn tests on a machine without a Vulkan driver.`);
}
