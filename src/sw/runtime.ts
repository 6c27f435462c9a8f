// The runtime a service worker (or the dedicated engine worker of src/engine-worker) mounts: one Responses
// handler for all of /v1, over the WebGPU engine, the IndexedDB store and the model manager (its ModelDirectory:
// GET /v1/models and the management routes under /v1/models, all in the handler's one route table). The engine is
// created when a request first needs it, with the models the manager says are usable, and kept (a loaded model
// stays loaded between requests); when that set changes (a download completed, an import, a delete) the next
// request gets a new engine with the new list, and the old one is disposed once the requests it already accepted
// are done. If the engine cannot start, a request that needs it gets a 503 `engine_unavailable` that says why
// (the model routes and stored responses still answer), and the next request tries again.
import { createResponsesHandler } from '../responses/handler';
import { DomainError } from '../common/engine-error';
import { createIndexedDbStore } from '../store/indexeddb-store';
import { createWebGpuEngine, type WebGpuEngine } from '../engine/webgpu-engine';
import type { Engine } from '../engine/types';
import { progressChannelName, type ShimProgress } from './progress-channel';
import { createModelManager, type ModelManager } from '../model-store/model-manager';

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
  let current: { version: number; made: Promise<EngineGeneration> } | null = null;

  async function start(version: number): Promise<EngineGeneration> {
    try {
      const models = await manager.engineSources();
      const engine = createWebGpuEngine({
        models,
        onLoadProgress: (modelId, loaded, total) =>
          progress?.postMessage({ phase: 'loading-model', loaded, total, file: modelId } satisfies ShimProgress),
      });
      return { version, engine };
    } catch (error) {
      throw new DomainError('unavailable', `The in-browser engine could not start: ${(error as Error).message}`, { code: 'engine_unavailable' });
    }
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

  const handler = createResponsesHandler({
    engine: currentEngine(async () => (await generation()).engine),
    store: createIndexedDbStore(),
    models: manager.directory(loadedIds),
    origin: new URL(scope).origin,
  });
  return { handle: handler };
}

/** An Engine whose every call goes to the engine `get` gives now (made, or remade, on demand). */
function currentEngine(get: () => Promise<Engine>): Engine {
  return {
    listModels: async () => (await get()).listModels(),
    tokenizePrompt: async (req) => (await get()).tokenizePrompt(req),
    checkConstraint: async (model, constraint) => (await get()).checkConstraint(model, constraint),
    generate: (req) =>
      (async function* () {
        yield* (await get()).generate(req);
      })(),
  };
}
