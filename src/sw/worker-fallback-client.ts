// The page's side of the dedicated-worker fallback: startEngineWorkerFallback() starts the engine worker
// (src/engine-worker/engine-worker.ts) in this page and offers it to the service worker, now and whenever the
// service worker asks (after a restart it has lost its ports) or changes. Call it before (or together with)
// installResponsesShim() on pages that should host the engine when the service worker cannot (no WebGPU in
// service workers, as in Safari, or a service worker registered with `?engine=worker` to force it). Offering a
// host is harmless where the service worker runs the engine itself: it then never relays.
import {
  engineHostOfferType,
  engineHostWantedType,
  engineWorkerConnectType,
  type EngineHostOffer,
  type EngineWorkerConnect,
} from './engine-relay-protocol';

export interface EngineWorkerFallback {
  /** The dedicated worker running the engine. */
  worker: Worker;
  /** Stops offering the worker and terminates it (requests in flight fail; the next page offering takes over). */
  stop(): void;
}

export interface EngineWorkerFallbackOptions {
  /** A different build of the engine worker (default: the one bundled with this module). */
  workerUrl?: string | URL;
}

export function startEngineWorkerFallback(options: EngineWorkerFallbackOptions = {}): EngineWorkerFallback {
  if (!('serviceWorker' in navigator)) throw new Error('Service workers are not available here (they need a secure context).');
  const worker = options.workerUrl
    ? new Worker(options.workerUrl, { type: 'module' })
    : new Worker(new URL('../engine-worker/engine-worker.ts', import.meta.url), { type: 'module', name: 'webgpu-responses-engine' });
  const container = navigator.serviceWorker;

  const offer = (target: ServiceWorker | null): void => {
    if (!target) return;
    const channel = new MessageChannel();
    worker.postMessage({ type: engineWorkerConnectType } satisfies EngineWorkerConnect, [channel.port2]);
    target.postMessage({ type: engineHostOfferType } satisfies EngineHostOffer, [channel.port1]);
  };
  const onMessage = (event: MessageEvent<{ type?: string }>): void => {
    if (event.data?.type === engineHostWantedType && event.source instanceof ServiceWorker) offer(event.source);
  };
  const onControllerChange = (): void => offer(container.controller);

  container.addEventListener('message', onMessage);
  container.addEventListener('controllerchange', onControllerChange);
  container.startMessages();
  offer(container.controller);

  return {
    worker,
    stop() {
      container.removeEventListener('message', onMessage);
      container.removeEventListener('controllerchange', onControllerChange);
      worker.terminate();
    },
  };
}
