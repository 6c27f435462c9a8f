// The service worker: answers `/v1/*` under its scope, and every other GET of the app from the versioned app-shell
// cache (offline after first load). /v1 goes to the runtime (model routes + Responses handler over the WebGPU
// engine and the IndexedDB store) when this worker has WebGPU; without it (Safari), or when its script URL carries
// `?engine=worker` (to force it, e.g. in tests), /v1 is relayed to an engine worker that an open page hosts
// (src/sw/engine-relay.ts; pages start it with startEngineWorkerFallback()).
// Messages it takes: { type: 'claim' } (take control of pages loaded without it) and the engine-host offers of
// src/sw/engine-relay-protocol.ts.
import { createAppShell } from './app-shell';
import { createRuntime } from './runtime';
import { createEngineRelay } from './engine-relay';
import { engineHostOfferType } from './engine-relay-protocol';

declare const self: ServiceWorkerGlobalScope;

const scope = self.registration.scope;
const apiPrefix = new URL('v1/', scope).pathname;
const shell = createAppShell(scope);
const engineInPages = new URL(self.location.href).searchParams.get('engine') === 'worker' || !('gpu' in navigator);
const relay = engineInPages ? createEngineRelay(scope) : null;
const api = relay ?? createRuntime(scope);

self.addEventListener('install', (event) => {
  event.waitUntil(shell.install().then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(shell.activate().then(() => self.clients.claim()));
});

self.addEventListener('message', (event) => {
  const data = event.data as { type?: string } | null;
  if (data?.type === 'claim') event.waitUntil(self.clients.claim());
  const [port] = event.ports;
  if (data?.type === engineHostOfferType && port) relay?.addHost(port);
});

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname === apiPrefix.slice(0, -1) || url.pathname.startsWith(apiPrefix)) {
    event.respondWith(api.handle(event.request));
    return;
  }
  if (event.request.method === 'GET' && !url.pathname.startsWith(new URL('models/', scope).pathname)) {
    event.respondWith(shell.respond(event.request));
  }
});
