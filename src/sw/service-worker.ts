// The service worker: answers `/v1/*` under its scope, and every other GET of the app from the versioned app-shell
// cache (offline after first load). /v1 goes to the runtime (model routes + Responses handler over the WebGPU
// engine and the IndexedDB store) when this worker has WebGPU and gets an adapter; without WebGPU (Safari), with
// no adapter (requestAdapter() gives null here while pages get one, in some browsers and profiles), or when its
// script URL carries `?engine=worker` (to force it, e.g. in tests), /v1 is relayed to an engine worker that an open
// page hosts (src/sw/engine-relay.ts; pages start it with startEngineWorkerFallback()). Which one is decided once
// per worker life, on the first /v1 request or host offer (src/sw/engine-placement.ts), and logged.
// Messages it takes: { type: 'claim' } (take control of pages loaded without it) and the engine-host offers of
// src/sw/engine-relay-protocol.ts.
import { createAppShell } from './app-shell';
import { createRuntime } from './runtime';
import { createEngineRelay, type EngineRelay } from './engine-relay';
import { engineHostOfferType } from './engine-relay-protocol';
import { decideEnginePlacement } from './engine-placement';
import { guardRequest } from '../responses/request-guard';
import { errorResponse } from '../responses/errors';

declare const self: ServiceWorkerGlobalScope;

const scope = self.registration.scope;
const apiPrefix = new URL('v1/', scope).pathname;
const shell = createAppShell(scope);

/** Where /v1 goes: the runtime here, or the relay to a page's engine worker (then `relay` takes the host offers). */
interface V1Api {
  handle(request: Request): Promise<Response>;
  relay: EngineRelay | null;
}

let v1: Promise<V1Api> | null = null;

/** Decided on first use and kept for this worker's life (requestAdapter() is not asked again per request). */
function v1Api(): Promise<V1Api> {
  v1 ??= decideEnginePlacement(self.location.href, 'gpu' in navigator ? navigator.gpu : undefined).then((placement): V1Api => {
    if (placement.where === 'service-worker') {
      const runtime = createRuntime(scope);
      return { handle: (request) => runtime.handle(request), relay: null };
    }
    console.info(`webgpu-responses: the engine runs in a dedicated worker of an open page (${placement.reason}: ${placement.detail}).`);
    const relay = createEngineRelay(scope, { fallback: placement });
    return { handle: (request) => relay.handle(request), relay };
  });
  return v1;
}

/**
 * /v1 for pages of this origin only (request-guard.ts), checked here where the navigation flag and the client
 * are known, before the runtime or the relay sees the request: a navigation (an auto-submitted cross-site form is
 * one) or a request made by a client of another origin is a 403, a non-JSON POST body a 415.
 */
async function answerV1(event: FetchEvent): Promise<Response> {
  const request = event.request;
  const client = event.clientId ? await self.clients.get(event.clientId).catch(() => undefined) : undefined;
  const refused = guardRequest(request, { origin: self.location.origin, isNavigation: request.mode === 'navigate', clientUrl: client?.url ?? null });
  if (refused) return errorResponse(refused);
  return (await v1Api()).handle(request);
}

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
  if (data?.type === engineHostOfferType && port) {
    event.waitUntil(v1Api().then(({ relay }) => (relay ? relay.addHost(port) : port.close())));
  }
});

self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (url.origin !== self.location.origin) return;
  if (url.pathname === apiPrefix.slice(0, -1) || url.pathname.startsWith(apiPrefix)) {
    event.respondWith(answerV1(event));
    return;
  }
  if (event.request.method === 'GET' && !url.pathname.startsWith(new URL('models/', scope).pathname)) {
    event.respondWith(shell.respond(event.request));
  }
});
