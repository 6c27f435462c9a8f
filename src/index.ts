// The embeddable library: what a web IDE or any page imports.
//   installResponsesShim()  registers the service worker so that `fetch(location.origin + '/v1/responses')` and the
//                           `openai` SDK (baseURL: location.origin + '/v1') are answered in the browser;
//   createEngine()          the WebGPU engine for direct use (no service worker), behind the Engine interface;
//   createResponsesHandler  the Responses API as a `(Request) => Promise<Response>` over any engine and store.
export { installResponsesShim, type InstallResponsesShimOptions, type ResponsesShim, type ShimProgress } from './embed/install-responses-shim';
export { createWebGpuEngine as createEngine, type WebGpuEngineOptions as EngineOptions } from './engine/webgpu-engine';
export type { ModelSource } from './model/open-model.ts';
export type { Engine, GenerateRequest, GenerationEvent, ModelInfo, ChatMessage } from './engine/types';
export { createResponsesHandler, type ResponsesHandlerOptions } from './responses/handler';
export { createIndexedDbStore, openIndexedDbStore } from './store/indexeddb-store';
export { createMemoryStore } from './store/memory-store';
export type { ResponseStore, StoredResponse } from './store/types';
export { startEngineWorkerFallback, type EngineWorkerFallback } from './sw/worker-fallback-client';
export { modelEventsChannelName, type ManagedModel, type ModelEvent } from './model-store/model-manager';
