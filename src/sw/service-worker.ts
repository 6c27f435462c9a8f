// The service worker: answers `/v1/*` under its scope with the Responses handler over the WebGPU engine and the
// IndexedDB store, and every other GET of the app from the versioned app-shell cache (offline after first load).
import { createAppShell } from './app-shell';
import { createRuntime } from './runtime';

declare const self: ServiceWorkerGlobalScope;

const scope = self.registration.scope;
const apiPrefix = new URL('v1/', scope).pathname;
const shell = createAppShell(scope);
const runtime = createRuntime(scope);

self.addEventListener('install', (event) => {
  event.waitUntil(shell.install().then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(shell.activate().then(() => self.clients.claim()));
});

self.addEventListener('message', (event) => {
  const data = event.data as { type?: string } | null;
  if (data?.type === 'claim') event.waitUntil(self.clients.claim());
});

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname === apiPrefix.slice(0, -1) || url.pathname.startsWith(apiPrefix)) {
    event.respondWith(runtime.handle(event.request));
    return;
  }
  if (event.request.method === 'GET' && !url.pathname.startsWith(new URL('models/', scope).pathname)) {
    event.respondWith(shell.respond(event.request));
  }
});
