// Three builds from one config, chosen by --mode:
//   (default) the demo page (index.html + src/demo) into dist/app, with a precache manifest for the service worker;
//   sw        the service worker (src/sw/service-worker.ts) as one classic script, dist/app/sw.js, served from the
//             root so that its scope covers /v1/;
//   lib       the embeddable library (src/index.ts) into dist/lib.
import { defineConfig, type Plugin } from 'vite';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const appOut = 'dist/app';

/** Lists every file of the built app (but the service worker itself and model weights) with a content hash. */
function precacheManifest(): Plugin {
  return {
    name: 'precache-manifest',
    apply: 'build',
    closeBundle() {
      const files: string[] = [];
      const walk = (dir: string) => {
        for (const name of readdirSync(dir)) {
          const path = join(dir, name);
          if (statSync(path).isDirectory()) walk(path);
          else files.push(relative(appOut, path).split('\\').join('/'));
        }
      };
      walk(appOut);
      const shell = files
        .filter((f) => f !== 'sw.js' && f !== 'precache-manifest.json' && !f.startsWith('models/'))
        .sort();
      const hash = createHash('sha256');
      for (const f of shell) hash.update(f).update(readFileSync(join(appOut, f)));
      const manifest = { version: hash.digest('hex').slice(0, 16), files: ['./', ...shell] };
      writeFileSync(join(appOut, 'precache-manifest.json'), JSON.stringify(manifest, null, 2));
    },
  };
}

export default defineConfig(({ mode }) => {
  if (mode === 'sw') {
    return {
      publicDir: false,
      build: {
        outDir: appOut,
        emptyOutDir: false,
        target: 'es2022',
        lib: { entry: 'src/sw/service-worker.ts', formats: ['iife'], name: 'webgpuResponsesServiceWorker', fileName: () => 'sw.js' },
      },
    };
  }
  if (mode === 'lib') {
    return {
      // Relative asset URLs, so the engine worker chunk is found next to the library wherever it is served.
      base: './',
      publicDir: false,
      build: {
        outDir: 'dist/lib',
        target: 'es2022',
        lib: { entry: 'src/index.ts', formats: ['es'], fileName: () => 'index.js' },
        rolldownOptions: { external: ['@huggingface/tokenizers', '@huggingface/jinja', 'zod', 'idb'] },
      },
    };
  }
  return {
    base: './',
    build: {
      outDir: appOut,
      target: 'es2022',
      rolldownOptions: { input: { main: 'index.html', 'web-ide': 'examples/web-ide/index.html' } },
    },
    plugins: [precacheManifest()],
    server: { host: '127.0.0.1' },
    preview: { host: '127.0.0.1' },
  };
});
