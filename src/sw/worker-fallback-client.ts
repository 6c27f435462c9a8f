// The page's side of the dedicated-worker fallback: startEngineWorkerFallback() makes this page a host of the
// engine worker (src/engine-worker/engine-worker.ts) for the service worker. The worker is started and offered
// (a MessagePort to it) when the service worker asks — it asks when it cannot run the engine itself (no WebGPU in
// service workers, as in Safari; no adapter there, as in some browsers and profiles; or registered as
// `sw.js?engine=worker` to force it; see src/sw/engine-placement.ts) and has no host, e.g. after
// a restart — or at once with `eager: true`. Where the service worker runs the engine itself it never asks, so
// calling this on every page costs nothing there: installResponsesShim() can always call it.
import {
  engineHostOfferType,
  engineHostWantedType,
  engineWorkerConnectType,
  type EngineHostOffer,
  type EngineWorkerConnect,
} from './engine-relay-protocol';

export interface EngineWorkerFallback {
  /** The dedicated worker running the engine, once started (null until the service worker asked for it). */
  readonly worker: Worker | null;
  /** Stops offering the worker and terminates it (requests in flight fail; the next page offering takes over). */
  stop(): void;
}

export interface EngineWorkerFallbackOptions {
  /** A different build of the engine worker (default: the one bundled with this module). */
  workerUrl?: string | URL;
  /** Start the worker and offer it now rather than when the service worker asks (default false). */
  eager?: boolean;
}

export function startEngineWorkerFallback(options: EngineWorkerFallbackOptions = {}): EngineWorkerFallback {
  if (!('serviceWorker' in navigator)) throw new Error('Service workers are not available here (they need a secure context).');
  const container = navigator.serviceWorker;
  let worker: Worker | null = null;

  const offer = (target: ServiceWorker | null): void => {
    if (!target) return;
    worker ??= options.workerUrl
      ? new Worker(options.workerUrl, { type: 'module' })
      : new Worker(new URL('../engine-worker/engine-worker.ts', import.meta.url), { type: 'module', name: 'webgpu-responses-engine' });
    const channel = new MessageChannel();
    worker.postMessage({ type: engineWorkerConnectType } satisfies EngineWorkerConnect, [channel.port2]);
    target.postMessage({ type: engineHostOfferType } satisfies EngineHostOffer, [channel.port1]);
  };
  const onMessage = (event: MessageEvent<{ type?: string }>): void => {
    if (event.data?.type === engineHostWantedType && event.source instanceof ServiceWorker) offer(event.source);
  };
  const onControllerChange = (): void => {
    if (options.eager || worker) offer(container.controller);
  };

  container.addEventListener('message', onMessage);
  container.addEventListener('controllerchange', onControllerChange);
  container.startMessages();
  if (options.eager) offer(container.controller);

  return {
    get worker() {
      return worker;
    },
    stop() {
      container.removeEventListener('message', onMessage);
      container.removeEventListener('controllerchange', onControllerChange);
      worker?.terminate();
      worker = null;
    },
  };
}
