// The runtime a service worker (or a page, or a Node host) mounts: the Responses handler over the WebGPU engine and
// the IndexedDB store, created on the first /v1 request and kept for the worker's life. If the engine cannot
// start (no WebGPU, no adapter, a bad model file) every /v1 request gets an OpenAI-shaped 503 that says why,
// and the next request tries again.
import { createResponsesHandler } from '../responses/handler';
import { createIndexedDbStore } from '../store/indexeddb-store';
import { createWebGpuEngine } from '../engine/webgpu-engine';
import { progressChannelName, type ShimProgress } from '../embed/install-responses-shim';
import { CachedModelFileSource } from './model-cache';
import { readModelCatalog } from './model-catalog';

export interface Runtime {
  handle(request: Request): Promise<Response>;
}

export function createRuntime(scope: string): Runtime {
  let handler: Promise<(request: Request) => Promise<Response>> | null = null;
  const progress = typeof BroadcastChannel === 'function' ? new BroadcastChannel(progressChannelName) : null;

  async function start() {
    const catalog = await readModelCatalog(scope);
    const models = catalog.filter((m) => m.bundled);
    const engine = createWebGpuEngine({
      models: models.map((m) => ({
        id: m.id,
        aliases: m.aliases,
        gguf: new CachedModelFileSource(new URL(m.file, scope).href, (p) =>
          progress?.postMessage({ phase: 'loading-model', loaded: p.loaded, total: p.total, file: m.file } satisfies ShimProgress),
        ),
      })),
    });
    const store = createIndexedDbStore();
    return createResponsesHandler({ engine, store });
  }

  return {
    async handle(request) {
      handler ??= start();
      let h: (request: Request) => Promise<Response>;
      try {
        h = await handler;
      } catch (e) {
        handler = null;
        return Response.json(
          { error: { message: `The in-browser engine could not start: ${(e as Error).message}`, type: 'server_error', param: null, code: 'engine_unavailable' } },
          { status: 503 },
        );
      }
      return h(request);
    },
  };
}
