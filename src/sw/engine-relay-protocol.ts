// The messages between the service worker, the page and the dedicated engine worker when the engine runs in a
// dedicated worker (the fallback for browsers without WebGPU in service workers, src/sw/engine-relay.ts).
//   page -> service worker   EngineHostOffer with a MessagePort whose other end is the page's engine worker
//   service worker -> pages  EngineHostWanted (after a restart the worker has no port: the pages offer again)
//   page -> engine worker    EngineWorkerConnect with that other end
//   service worker -> port   RelayedRequest with a reply port; on the reply port the host answers RelayReply
//                            messages (accepted, alive..., head, chunk..., end | error) and the service worker may
//                            send RelayAbort.

export const engineHostOfferType = 'webgpu-responses.engine-host-offer';
export const engineHostWantedType = 'webgpu-responses.engine-host-wanted';
export const engineWorkerConnectType = 'webgpu-responses.engine-worker-connect';

export interface EngineHostOffer {
  type: typeof engineHostOfferType;
}

export interface EngineHostWanted {
  type: typeof engineHostWantedType;
}

export interface EngineWorkerConnect {
  type: typeof engineWorkerConnectType;
}

/** A /v1 request, serialized (the body as a Blob: structured-cloneable everywhere and kept off the JS heap). */
export interface RelayedRequest {
  type: 'request';
  /** The service worker's scope: where the app (models/catalog.json) lives. */
  scope: string;
  url: string;
  method: string;
  headers: [string, string][];
  body: Blob | null;
}

/** How often a host says it is still working on a request (the relay gives up on a host silent for 6 of these). */
export const relayHeartbeatMs = 5_000;

export type RelayReply =
  | { type: 'accepted' }
  /** Sent every relayHeartbeatMs while the request is served (a closed page stops sending: the relay then fails it). */
  | { type: 'alive' }
  | { type: 'head'; status: number; statusText: string; headers: [string, string][] }
  | { type: 'chunk'; bytes: Uint8Array }
  | { type: 'end' }
  | { type: 'error'; message: string };

export interface RelayAbort {
  type: 'abort';
}
