// The runtime a service worker (or the dedicated engine worker of src/engine-worker) mounts: the model routes of
// the model manager (GET /v1/models and /v1/models/*) and the Responses handler over the WebGPU engine and the
// IndexedDB store for everything else under /v1. The engine is created on the first request with the models the
// manager says are usable and kept (a loaded model stays loaded between requests); when that set changes (a
// download completed, an import, a delete) the next request gets a new engine with the new list, and the old one
// is disposed once the requests it already accepted are done. If the engine cannot start, every /v1 request gets
// an OpenAI-shaped 503 that says why, and the next request tries again.
import { createResponsesHandler, type ResponsesHandler } from '../responses/handler';
import { DomainError } from '../common/engine-error';
import { errorResponse } from '../responses/errors';
import { guardRequest } from '../responses/request-guard';
import { createIndexedDbStore } from '../store/indexeddb-store';
import { createWebGpuEngine, type WebGpuEngine } from '../engine/webgpu-engine';
import type { ResponseStore } from '../store/types';
import { progressChannelName, type ShimProgress } from './progress-channel';
import { createModelManager, type ModelManager } from './model-manager';

export interface Runtime {
  handle(request: Request): Promise<Response>;
}

export interface RuntimeOptions {
  /** Size of the stored parts of model files (default 4 MiB). */
  partBytes?: number;
}

interface EngineGeneration {
  version: number;
  engine: WebGpuEngine;
  handler: ResponsesHandler;
}

export function createRuntime(scope: string, options: RuntimeOptions = {}): Runtime {
  const progress = typeof BroadcastChannel === 'function' ? new BroadcastChannel(progressChannelName) : null;
  const manager: ModelManager = createModelManager(scope, {
    partBytes: options.partBytes,
    // Model file downloads also show as the shim's `loading-model` progress (bytes of the file).
    onEvent: (event) => {
      if (event.type === 'model.download.progress') {
        progress?.postMessage({ phase: 'loading-model', loaded: event.loaded, total: event.total, file: event.file } satisfies ShimProgress);
      }
    },
  });
  let store: ResponseStore | null = null;
  const origin = new URL(scope).origin;
  let current: { version: number; made: Promise<EngineGeneration> } | null = null;

  async function start(version: number): Promise<EngineGeneration> {
    const models = await manager.engineSources();
    const engine = createWebGpuEngine({
      models,
      onLoadProgress: (modelId, loaded, total) =>
        progress?.postMessage({ phase: 'loading-model', loaded, total, file: modelId } satisfies ShimProgress),
    });
    store ??= createIndexedDbStore();
    return { version, engine, handler: createResponsesHandler({ engine, store, origin }) };
  }

  /** The engine for the current set of models (a new one when the set changed since the last was made). */
  function generation(): Promise<EngineGeneration> {
    const version = manager.version;
    if (!current || current.version !== version) {
      const old = current;
      const made = start(version);
      current = { version, made };
      made.catch(() => {
        if (current?.made === made) current = null;
      });
      // The old engine finishes what it accepted (its queue), then frees the GPU.
      if (old) void old.made.then((g) => g.engine.dispose()).catch(() => {});
    }
    return current.made;
  }

  async function loadedIds(): Promise<Set<string>> {
    const existing = await current?.made.catch(() => null);
    if (!existing) return new Set();
    return new Set((await existing.engine.listModels().catch(() => [])).filter((m) => m.loaded).map((m) => m.id));
  }

  return {
    async handle(request) {
      // Who may call, before any route (a model download or import starts only from a request that passes).
      const refused = guardRequest(request, { origin });
      if (refused) return errorResponse(refused);
      let managed: Response | null;
      try {
        managed = await manager.route(request, loadedIds);
      } catch (e) {
        return engineUnavailable(e);
      }
      if (managed) return managed;
      let h: EngineGeneration;
      try {
        h = await generation();
      } catch (e) {
        return engineUnavailable(e);
      }
      return h.handler(request);
    },
  };
}

function engineUnavailable(error: unknown): Response {
  return errorResponse(new DomainError('unavailable', `The in-browser engine could not start: ${(error as Error).message}`, { code: 'engine_unavailable' }));
}
