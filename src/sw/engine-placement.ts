// Where the service worker's /v1 engine runs: in the service worker itself, or in a dedicated worker that an open
// page hosts (the relay of src/sw/engine-relay.ts). The service worker decides once per worker life, on its first
// /v1 request or engine-host offer, and keeps the answer: it runs the engine itself only when it has WebGPU *and*
// `navigator.gpu.requestAdapter()` gives it an adapter (some browsers and profiles give pages an adapter but not
// service workers); otherwise, or when its script URL carries `?engine=worker`, the engine runs in a page's worker,
// and the reason is reported (a console line, and a response header on every relayed answer).

export type EngineFallbackReason =
  /** The script URL asked for it (`sw.js?engine=worker`, installResponsesShim's forceWorkerFallback). */
  | 'forced'
  /** No `navigator.gpu` in the service worker (Safari). */
  | 'no-webgpu'
  /** `navigator.gpu.requestAdapter()` returned null, or threw, in the service worker. */
  | 'no-adapter';

export type EnginePlacement =
  | { where: 'service-worker' }
  | { where: 'page-worker'; reason: EngineFallbackReason; detail: string };

/** Response header on every relayed answer: why the engine runs in a page's worker (an EngineFallbackReason). */
export const fallbackReasonHeader = 'x-webgpu-responses-engine-fallback';

/**
 * Decides where the engine runs, asking `gpu` for an adapter once (the adapter itself is dropped: the engine asks
 * again when it starts). `scriptUrl` is the service worker's own URL (`self.location.href`).
 */
export async function decideEnginePlacement(scriptUrl: string, gpu: GPU | undefined): Promise<EnginePlacement> {
  if (new URL(scriptUrl).searchParams.get('engine') === 'worker') {
    return { where: 'page-worker', reason: 'forced', detail: 'the service worker was registered with ?engine=worker' };
  }
  if (!gpu) {
    return { where: 'page-worker', reason: 'no-webgpu', detail: 'this browser has no WebGPU (navigator.gpu) in service workers' };
  }
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu.requestAdapter();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { where: 'page-worker', reason: 'no-adapter', detail: `navigator.gpu.requestAdapter() failed in the service worker: ${message}` };
  }
  if (!adapter) {
    return { where: 'page-worker', reason: 'no-adapter', detail: 'navigator.gpu.requestAdapter() returned null in the service worker' };
  }
  return { where: 'service-worker' };
}
