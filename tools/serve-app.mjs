// A small static server for the built app (dist/app): correct MIME types, HTTP Range requests (model files are
// read in ranges and downloads resume), no caching surprises, and the `Service-Worker-Allowed` header. HTML pages
// get their Content-Security-Policy as a header too (the one their <meta> tag states, plus `frame-ancestors
// 'self'`, which a <meta> policy cannot set); scripts get none (the service worker's downloads are not the page's).
// Used by `npm run demo` and by the end-to-end tests, always on 127.0.0.1.
import http from 'node:http';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, resolve } from 'node:path';

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wgsl': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webmanifest': 'application/manifest+json',
  '.gguf': 'application/octet-stream',
  '.safetensors': 'application/octet-stream',
};

/**
 * @param {{ root?: string, port?: number, host?: string, onRequest?: (req: http.IncomingMessage) => void }} options
 * @returns {Promise<{ url: string, server: http.Server, close: () => Promise<void> }>}
 */
export async function serveApp({ root = 'dist/app', port = 0, host = '127.0.0.1', onRequest } = {}) {
  const base = resolve(root);
  const server = http.createServer((req, res) => {
    onRequest?.(req);
    const url = new URL(req.url ?? '/', 'http://localhost');
    let path = normalize(join(base, decodeURIComponent(url.pathname)));
    if (!path.startsWith(base)) return send(res, 403, 'forbidden');
    if (existsSync(path) && statSync(path).isDirectory()) {
      // A folder's page lives at its slash form: relative asset URLs resolve against it.
      if (!url.pathname.endsWith('/')) {
        res.writeHead(301, { location: `${url.pathname}/${url.search}`, 'content-length': 0 });
        return res.end();
      }
      path = join(path, 'index.html');
    }
    if (!existsSync(path)) return send(res, 404, 'not found');
    const size = statSync(path).size;
    const headers = {
      'content-type': types[extname(path)] ?? 'application/octet-stream',
      'accept-ranges': 'bytes',
      'cache-control': 'no-cache',
      'service-worker-allowed': '/',
    };
    if (extname(path) === '.html') headers['content-security-policy'] = pageContentSecurityPolicy(readFileSync(path, 'utf8'));
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (range) {
      const start = range[1] === '' ? Math.max(0, size - Number(range[2])) : Number(range[1]);
      const end = range[1] === '' || range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
      if (start > end || start >= size) {
        res.writeHead(416, { 'content-range': `bytes */${size}` });
        return res.end();
      }
      res.writeHead(206, { ...headers, 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${size}` });
      if (req.method === 'HEAD') return res.end();
      return createReadStream(path, { start, end }).pipe(res);
    }
    res.writeHead(200, { ...headers, 'content-length': size });
    if (req.method === 'HEAD') return res.end();
    createReadStream(path).pipe(res);
  });
  await new Promise((ok) => server.listen(port, host, ok));
  const address = server.address();
  const url = `http://${host}:${typeof address === 'object' && address ? address.port : port}/`;
  return {
    url,
    server,
    close: () =>
      new Promise((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/**
 * The header form of an HTML page's Content-Security-Policy: its <meta http-equiv> policy with `frame-ancestors
 * 'self'` added (only 'self' may frame the app). Also used by vite.config.ts for the dev and preview servers.
 * @param {string} html
 */
export function pageContentSecurityPolicy(html) {
  const meta = /<meta\s+http-equiv=["']Content-Security-Policy["']\s+content="([^"]*)"/i.exec(html)?.[1];
  return meta ? `${meta.replace(/;\s*$/, '')}; frame-ancestors 'self'` : "frame-ancestors 'self'";
}

function send(res, status, text) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.env.PORT ?? 4173);
  const { url } = await serveApp({ root: process.argv[2] ?? 'dist/app', port });
  console.log(`serving ${process.argv[2] ?? 'dist/app'} at ${url}`);
}
