#!/usr/bin/env node
// Bundles bench/gpu/entry.ts (the engine, the sampler bench, make-test-model) into one ESM file for Node with
// esbuild (a dependency of tsx here): WGSL `?raw` imports become strings; `webgpu` stays external (run.sh puts the
// package beside the bundle).   node bench/gpu/bundle.mjs OUT.mjs
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = resolve(process.argv[2] ?? join(ROOT, '.gpu-carry', 'bench.mjs'));
const { build } = await import('esbuild');
const raw = {
  name: 'raw',
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (args) => ({ path: resolve(args.resolveDir, args.path.slice(0, -'?raw'.length)), namespace: 'raw' }));
    b.onLoad({ filter: /.*/, namespace: 'raw' }, async (args) => ({ contents: `export default ${JSON.stringify(await readFile(args.path, 'utf8'))};`, loader: 'js' }));
  },
};
await build({
  entryPoints: [join(ROOT, 'bench', 'gpu', 'entry.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: out,
  external: ['webgpu'],
  plugins: [raw],
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
  legalComments: 'none',
});
process.stdout.write(`${out}\n`);
