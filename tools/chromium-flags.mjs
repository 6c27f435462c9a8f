// Chromium flags for WebGPU in headless Chromium on machines like these (README.md, "GPU facts on these machines"); shared by the tools and
// by test/chromium.ts.
export function chromiumArgs(extra = []) {
  return [
    '--enable-unsafe-webgpu',
    '--no-sandbox',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    ...extra,
  ];
}
