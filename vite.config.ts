// Four builds from one config, chosen by --mode:
//   (default) the demo page (index.html + src/demo) into dist/app, with a precache manifest for the service worker;
//   sw        the service worker (src/sw/service-worker.ts) as one classic script, dist/app/sw.js, served from the
//             root so that its scope covers /v1/;
//   lib       the embeddable library (src/index.ts) into dist/lib;
//   node      the Node host of `webgpu-responses serve` (src/node-host/serve-main.ts) into dist/node/serve-main.js.
import { defineConfig, type Plugin } from 'vite';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const appOut = 'dist/app';

/**
 * The dev and preview servers send each HTML page's Content-Security-Policy as a header as well: the page's
 * <meta> policy plus `frame-ancestors 'self'` (which a <meta> policy cannot set), as tools/serve-app.mjs does.
 * Only HTML gets it: scripts (the service worker's downloads among them) are not held to a page's policy.
 */
function pageCspHeaders(): Plugin {
  const policyOf = (html: string) => {
    const meta = /<meta\s+http-equiv=["']Content-Security-Policy["']\s+content="([^"]*)"/i.exec(html)?.[1];
    return meta ? `${meta.replace(/;\s*$/, '')}; frame-ancestors 'self'` : "frame-ancestors 'self'";
  };
  type Res = import('node:http').ServerResponse;
  const addHeader = (_req: unknown, res: Res, next: () => void) => {
    // The policy comes from the page's own text, so wrap the body writes and set the header before the first.
    const end = res.end.bind(res) as (...args: unknown[]) => Res;
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      const type = String(res.getHeader('content-type') ?? '');
      if (!res.headersSent && type.includes('text/html') && (typeof chunk === 'string' || chunk instanceof Uint8Array)) {
        res.setHeader('content-security-policy', policyOf(typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk)));
      }
      return end(chunk, ...rest);
    }) as Res['end'];
    next();
  };
  return {
    name: 'page-csp-headers',
    // Dev: vite answers a page with one res.end(html) after transforming it.
    configureServer(server) {
      server.middlewares.use(addHeader);
    },
    // Preview: the built pages are streamed from the output folder, so read the page the URL names.
    configurePreviewServer(server) {
      const root = server.config.build.outDir;
      server.middlewares.use((req, res, next) => {
        const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
        const file = join(root, path.endsWith('/') ? `${path}index.html` : path);
        if (file.endsWith('.html') && !relative(root, file).startsWith('..')) {
          try {
            res.setHeader('content-security-policy', policyOf(readFileSync(file, 'utf8')));
          } catch {
            // Not a file: whatever answers it sets no page policy.
          }
        }
        next();
      });
    },
  };
}

/**
 * `/examples/web-ide` (a folder with an index.html, asked without its slash) redirects to `/examples/web-ide/`, as
 * tools/serve-app.mjs and the service worker do: the page's relative asset URLs resolve only against the slash form.
 */
function folderSlashRedirect(): Plugin {
  type Req = import('node:http').IncomingMessage;
  type Res = import('node:http').ServerResponse;
  const redirect = (root: () => string) => (req: Req, res: Res, next: () => void) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = decodeURIComponent(url.pathname);
    const folder = join(root(), path);
    if (!path.endsWith('/') && !relative(root(), folder).startsWith('..')) {
      try {
        if (statSync(folder).isDirectory() && statSync(join(folder, 'index.html')).isFile()) {
          res.writeHead(301, { location: `${url.pathname}/${url.search}`, 'content-length': 0 });
          return res.end();
        }
      } catch {
        // Not a folder with a page: vite answers it.
      }
    }
    next();
  };
  return {
    name: 'folder-slash-redirect',
    configureServer(server) {
      server.middlewares.use(redirect(() => server.config.root));
    },
    configurePreviewServer(server) {
      server.middlewares.use(redirect(() => server.config.build.outDir));
    },
  };
}

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
  if (mode === 'node') {
    // `webgpu-responses serve` for the published package: the Node host as one ES module with the shaders
    // inlined; its dependencies stay imports (runtime dependencies only; tools/cli.mjs loads it).
    return {
      publicDir: false,
      build: {
        ssr: 'src/node-host/serve-main.ts',
        outDir: process.env.WEBGPU_RESPONSES_NODE_OUT_DIR ?? 'dist/node',
        emptyOutDir: true,
        target: 'node20',
        rolldownOptions: { output: { entryFileNames: 'serve-main.js' } },
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
    plugins: [precacheManifest(), pageCspHeaders(), folderSlashRedirect()],
    server: { host: '127.0.0.1' },
    preview: { host: '127.0.0.1' },
  };
});
