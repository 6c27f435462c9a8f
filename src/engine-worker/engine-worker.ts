// The dedicated engine worker: the same runtime as the service worker's (model manager + Responses handler over
// the WebGPU engine and the IndexedDB store), run in a dedicated worker that an open page owns. Browsers with
// WebGPU in pages and dedicated workers but not in service workers (Safari) use it: the service worker relays
// each /v1 request here over a MessagePort (src/sw/engine-relay.ts) and streams the answer back chunk by chunk.
// Started by startEngineWorkerFallback() (src/sw/worker-fallback-client.ts).
import { createRuntime, type Runtime } from '../sw/runtime';
import {
  engineWorkerConnectType,
  relayHeartbeatMs,
  type EngineWorkerConnect,
  type RelayAbort,
  type RelayedRequest,
  type RelayReply,
} from '../sw/engine-relay-protocol';

declare const self: DedicatedWorkerGlobalScope;

const runtimes = new Map<string, Runtime>();

function runtimeFor(scope: string): Runtime {
  let runtime = runtimes.get(scope);
  if (!runtime) {
    runtime = createRuntime(scope);
    runtimes.set(scope, runtime);
  }
  return runtime;
}

async function serve(request: RelayedRequest, reply: MessagePort): Promise<void> {
  const send = (message: RelayReply, transfer: Transferable[] = []): void => reply.postMessage(message, transfer);
  const controller = new AbortController();
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  reply.onmessage = (event: MessageEvent<RelayAbort>) => {
    if (event.data?.type !== 'abort') return;
    controller.abort();
    void reader?.cancel().catch(() => {});
  };
  send({ type: 'accepted' });
  const heartbeat = setInterval(() => send({ type: 'alive' }), relayHeartbeatMs);
  try {
    const response = await runtimeFor(request.scope).handle(
      new Request(request.url, { method: request.method, headers: request.headers, body: request.body, signal: controller.signal }),
    );
    send({ type: 'head', status: response.status, statusText: response.statusText, headers: [...response.headers] });
    if (response.body) {
      reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const bytes = value.slice();
        send({ type: 'chunk', bytes }, [bytes.buffer]);
      }
    }
    send({ type: 'end' });
  } catch (error) {
    send({ type: 'error', message: (error as Error).message ?? String(error) });
  } finally {
    clearInterval(heartbeat);
    reply.onmessage = null;
    setTimeout(() => reply.close(), 0);
  }
}

function listen(port: MessagePort): void {
  port.onmessage = (event: MessageEvent<RelayedRequest>) => {
    const [reply] = event.ports;
    if (event.data?.type === 'request' && reply) void serve(event.data, reply);
  };
}

self.onmessage = (event: MessageEvent<EngineWorkerConnect>) => {
  const [port] = event.ports;
  if (event.data?.type === engineWorkerConnectType && port) listen(port);
};
