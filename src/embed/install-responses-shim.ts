// installResponsesShim(): what a page (the demo, a web IDE) calls to get `/v1/*` answered by the in-browser runtime.
// It registers the service worker, waits until the worker controls this page, reports model-load progress that the
// worker broadcasts, and resolves once `GET /v1/models` answers from the worker. Where the service worker has no
// WebGPU (Safari) or no adapter (src/sw/engine-placement.ts), it asks this page to host the engine in a dedicated
// worker and relays /v1 to it.
import { progressChannelName, type ShimProgress } from '../sw/progress-channel';
import { startEngineWorkerFallback, type EngineWorkerFallback } from '../sw/worker-fallback-client';

export interface InstallResponsesShimOptions {
  /** URL of the built service worker (default `sw.js` next to the page's base). */
  serviceWorkerUrl?: string | URL;
  /** Scope; must cover `/v1/` (default: the service worker's folder). */
  scope?: string;
  onProgress?: (progress: ShimProgress) => void;
  /** Give up after this long (default 60 s). */
  timeoutMs?: number;
  /**
   * Run the engine in a dedicated worker of this page and relay /v1 to it even where the service worker has WebGPU
   * (a worker without WebGPU or without an adapter needs no option: it asks the page).
   */
  forceWorkerFallback?: boolean;
}

export interface ResponsesShim {
  registration: ServiceWorkerRegistration;
  /** `location.origin + '/v1'` adjusted to the scope: pass it as the `openai` SDK's `baseURL`. */
  baseURL: string;
  models: { id: string }[];
  /** The page's side of the dedicated-worker fallback (idle unless the service worker asks for it). */
  engineWorker: EngineWorkerFallback;
}

export type { ShimProgress };

export async function installResponsesShim(options: InstallResponsesShimOptions = {}): Promise<ResponsesShim> {
  if (!('serviceWorker' in navigator)) {
    throw new Error('Service workers are not available here (they need a secure context: https, localhost or 127.0.0.1).');
  }
  const report = options.onProgress ?? (() => {});
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(progressChannelName) : null;
  if (channel) channel.onmessage = (e: MessageEvent<ShimProgress>) => report(e.data);
  try {
    report({ phase: 'registering' });
    // Ask the browser not to evict stored responses and cached models when disk runs low (it may say no).
    void navigator.storage?.persist?.().catch(() => false);
    const engineWorker = startEngineWorkerFallback();
    const swUrl = new URL(options.serviceWorkerUrl ?? 'sw.js', document.baseURI);
    if (options.forceWorkerFallback) swUrl.searchParams.set('engine', 'worker');
    const registration = await navigator.serviceWorker.register(swUrl, options.scope ? { scope: options.scope } : undefined);
    report({ phase: 'activating' });
    if (!navigator.serviceWorker.controller) {
      const controlled = new Promise<void>((resolve) =>
        navigator.serviceWorker.addEventListener('controllerchange', () => resolve(), { once: true }),
      );
      // A worker that is already active does not claim pages loaded without it (a hard reload): ask it to.
      (await navigator.serviceWorker.ready).active?.postMessage({ type: 'claim' });
      await controlled;
    }
    const baseURL = new URL('v1', registration.scope).href;
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const response = await fetch(`${baseURL}/models`).catch(() => null);
      if (response?.ok) {
        const body = (await response.json()) as { data: { id: string }[] };
        report({ phase: 'ready' });
        return { registration, baseURL, models: body.data, engineWorker };
      }
      if (Date.now() > deadline) {
        const detail = response ? await response.text() : 'no answer';
        throw new Error(`The service worker did not answer /v1/models in time: ${detail}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    channel?.close();
  }
}
