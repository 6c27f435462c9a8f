// The versioned app-shell cache: at install the service worker fetches every file the build listed in
// precache-manifest.json into a cache named after the build's content hash; at activate it deletes the caches of
// older builds. Every same-origin GET of the app is then answered cache-first, so the demo loads with no network.
// A page it answers carries the app's Content-Security-Policy header (frame-ancestors can only be a header).
import { appContentSecurityPolicy } from '../model-store/remote-catalog';

const shellPrefix = 'webgpu-responses-shell-';

interface PrecacheManifest {
  version: string;
  files: string[];
}

export interface AppShell {
  install(): Promise<void>;
  activate(): Promise<void>;
  /** Cache first, then network (and a plain 503 text when both fail). */
  respond(request: Request): Promise<Response>;
}

export function createAppShell(scope: string): AppShell {
  let cacheName: Promise<string> | null = null;
  const manifestUrl = new URL('precache-manifest.json', scope).href;

  async function readManifest(): Promise<PrecacheManifest> {
    const response = await fetch(manifestUrl, { cache: 'no-store' });
    if (!response.ok) throw new Error(`precache manifest: HTTP ${response.status}`);
    return (await response.json()) as PrecacheManifest;
  }

  /** The cache of the build this worker belongs to: recorded at install in a tiny meta cache entry. */
  function currentCacheName(): Promise<string> {
    cacheName ??= (async () => {
      const meta = await caches.open(`${shellPrefix}meta`);
      const hit = await meta.match(manifestUrl);
      if (hit) return `${shellPrefix}${((await hit.json()) as PrecacheManifest).version}`;
      return `${shellPrefix}${(await readManifest()).version}`;
    })();
    return cacheName;
  }

  return {
    async install() {
      const manifest = await readManifest();
      const name = `${shellPrefix}${manifest.version}`;
      const cache = await caches.open(name);
      await cache.addAll(manifest.files.map((f) => new URL(f, scope).href));
      const meta = await caches.open(`${shellPrefix}meta`);
      await meta.put(manifestUrl, new Response(JSON.stringify(manifest), { headers: { 'content-type': 'application/json' } }));
      cacheName = Promise.resolve(name);
    },
    async activate() {
      const keep = await currentCacheName();
      for (const key of await caches.keys()) {
        if (key.startsWith(shellPrefix) && key !== keep && key !== `${shellPrefix}meta`) await caches.delete(key);
      }
    },
    async respond(request) {
      const cache = await caches.open(await currentCacheName());
      const url = new URL(request.url);
      // A folder's page is its own index.html (/examples/web-ide/ is the web IDE, not the demo at the root).
      const hit = (await cache.match(request, { ignoreSearch: true })) ?? (url.pathname.endsWith('/') ? await cache.match(new URL('index.html', url).href) : undefined);
      if (hit) return withPageHeaders(hit);
      // A folder's page asked without its slash (/examples/web-ide): redirect to the slash form, where its relative
      // asset URLs resolve, as the servers do; offline too, since the page is in the cache.
      if (!url.pathname.endsWith('/') && !/\.[^/]*$/.test(url.pathname)) {
        const slash = new URL(`${url.pathname}/${url.search}`, url);
        if (await cache.match(new URL('index.html', slash).href)) return Response.redirect(slash.href, 301);
      }
      try {
        return withPageHeaders(await fetch(request));
      } catch {
        return new Response(`Offline and not cached: ${url.pathname}`, { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8' } });
      }
    },
  };
}

/** An HTML page with the app's CSP header (the <meta> policy plus frame-ancestors 'self'); anything else as is. */
function withPageHeaders(response: Response): Response {
  if (response.type === 'opaque' || response.type === 'opaqueredirect' || !(response.headers.get('content-type') ?? '').includes('text/html')) return response;
  const headers = new Headers(response.headers);
  headers.set('content-security-policy', appContentSecurityPolicy({ header: true }));
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
