// The service worker's side of the dedicated-worker fallback: when the service worker has no WebGPU (Safari), gets
// no adapter, or is told to (its script URL carries `?engine=worker`; see src/sw/engine-placement.ts), it does not
// run the engine itself but relays every /v1 request to an engine worker that an open page hosts (src/engine-worker/engine-worker.ts), over a MessagePort
// the page offered. The request goes serialized (body as a Blob); the answer comes back as its status and headers,
// then its body chunk by chunk, streamed to the caller as it arrives; an aborted fetch (or a cancelled body) sends
// an abort that stops the generation in the engine worker. A host that does not acknowledge a request in time is
// dropped (its page closed) and the next one is tried; with none left, the pages are asked to offer one; with no
// page answering, the request gets an OpenAI-shaped 503 instead of hanging. Every answer it gives carries why the
// engine runs in a page (header `fallbackReasonHeader`).
import { DomainError } from '../common/engine-error';
import { errorResponse } from '../responses/errors';
import { fallbackReasonHeader, type EngineFallbackReason } from './engine-placement';
import {
  engineHostWantedType,
  relayHeartbeatMs,
  type EngineHostWanted,
  type RelayAbort,
  type RelayedRequest,
  type RelayReply,
} from './engine-relay-protocol';

declare const self: ServiceWorkerGlobalScope;

export interface EngineRelay {
  /** A page offered a port to its engine worker. */
  addHost(port: MessagePort): void;
  handle(request: Request): Promise<Response>;
}

export interface EngineRelayOptions {
  /** Why the engine runs in a page's worker, and in words (for the 503 when no page hosts it). */
  fallback: { reason: EngineFallbackReason; detail: string };
  /** How long a host has to acknowledge a request before it counts as gone (default 10 s). */
  acceptTimeoutMs?: number;
  /** How long to wait for a page to offer a host when there is none (default 10 s). */
  hostWaitMs?: number;
}

/** Response header on every relayed answer (`page-worker`): which engine answered, for debugging and tests. */
export const relayedHeader = 'x-webgpu-responses-engine';

class HostGone extends Error {}

export function createEngineRelay(scope: string, options: EngineRelayOptions): EngineRelay {
  const { reason, detail } = options.fallback;
  const acceptTimeoutMs = options.acceptTimeoutMs ?? 10_000;
  const hostWaitMs = options.hostWaitMs ?? 10_000;
  /** Offered hosts, newest last (the newest is used first). */
  const hosts: MessagePort[] = [];
  const waiting = new Set<() => void>();

  function dropHost(port: MessagePort): void {
    const index = hosts.indexOf(port);
    if (index >= 0) hosts.splice(index, 1);
    port.close();
  }

  async function askPagesForHost(): Promise<MessagePort | null> {
    const arrived = new Promise<void>((resolve) => waiting.add(resolve));
    const pages = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    for (const page of pages) page.postMessage({ type: engineHostWantedType } satisfies EngineHostWanted);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([arrived, new Promise<void>((resolve) => (timer = setTimeout(resolve, hostWaitMs)))]);
    clearTimeout(timer);
    return hosts.at(-1) ?? null;
  }

  /** Sends the request to one host; resolves with the relayed response, or rejects HostGone if it never answers. */
  function relayTo(port: MessagePort, message: RelayedRequest, signal: AbortSignal): Promise<Response> {
    const channel = new MessageChannel();
    const reply = channel.port1;
    return new Promise<Response>((resolve, reject) => {
      let body: ReadableStreamDefaultController<Uint8Array> | null = null;
      let settled = false;
      const abort = (): void => {
        reply.postMessage({ type: 'abort' } satisfies RelayAbort);
      };
      const timer = setTimeout(() => {
        reply.close();
        reject(new HostGone());
      }, acceptTimeoutMs);
      // A host that goes silent mid-request (its page closed) fails the request instead of leaving it hanging.
      let watchdog: ReturnType<typeof setTimeout> | undefined;
      const finish = (): void => {
        clearTimeout(watchdog);
        signal.removeEventListener('abort', abort);
        reply.close();
      };
      const hostSilent = (): void => {
        const message = 'The page hosting the engine stopped answering (closed?)';
        if (!settled) {
          settled = true;
          resolve(relayError('upstream', message, reason));
        } else {
          try {
            body?.error(new Error(message));
          } catch {
            // Already closed.
          }
        }
        finish();
      };
      signal.addEventListener('abort', abort, { once: true });
      reply.onmessage = (event: MessageEvent<RelayReply>) => {
        const data = event.data;
        clearTimeout(watchdog);
        if (data.type !== 'end' && data.type !== 'error') watchdog = setTimeout(hostSilent, 6 * relayHeartbeatMs);
        if (data.type === 'accepted') {
          clearTimeout(timer);
        } else if (data.type === 'head') {
          settled = true;
          const stream = new ReadableStream<Uint8Array>({
            start(controller) {
              body = controller;
            },
            cancel() {
              abort();
              finish();
            },
          });
          const noBody = data.status === 101 || data.status === 204 || data.status === 304;
          const headers = new Headers(data.headers);
          headers.set(relayedHeader, 'page-worker');
          headers.set(fallbackReasonHeader, reason);
          resolve(new Response(noBody ? null : stream, { status: data.status, statusText: data.statusText, headers }));
        } else if (data.type === 'chunk') {
          try {
            body?.enqueue(data.bytes);
          } catch {
            // The caller went away.
          }
        } else if (data.type === 'end') {
          try {
            body?.close();
          } catch {
            // Already cancelled.
          }
          finish();
        } else if (data.type === 'error') {
          clearTimeout(timer);
          if (!settled) {
            settled = true;
            resolve(relayError('upstream', `The engine worker failed: ${data.message}`, reason));
          } else {
            body?.error(new Error(data.message));
          }
          finish();
        }
      };
      port.postMessage(message, [channel.port2]);
    });
  }

  return {
    addHost(port) {
      hosts.push(port);
      for (const resolve of waiting) resolve();
      waiting.clear();
    },

    async handle(request) {
      const message: RelayedRequest = {
        type: 'request',
        scope,
        url: request.url,
        method: request.method,
        headers: [...request.headers],
        body: request.method === 'GET' || request.method === 'HEAD' ? null : await request.blob(),
      };
      let asked = false;
      for (;;) {
        let host = hosts.at(-1) ?? null;
        if (!host && !asked) {
          asked = true;
          host = await askPagesForHost();
        }
        if (!host) {
          return relayError(
            'unavailable',
            `The engine runs in a page here (${detail}) and no open page of the app is hosting it: open the app in a tab.`,
            reason,
          );
        }
        try {
          return await relayTo(host, message, request.signal);
        } catch (error) {
          if (!(error instanceof HostGone)) throw error;
          dropHost(host);
        }
      }
    },
  };
}

/** The engine host failed (502) or there is none (503): `engine_unavailable`, with the reason in a header. */
function relayError(kind: 'upstream' | 'unavailable', message: string, reason: EngineFallbackReason): Response {
  return errorResponse(new DomainError(kind, message, { code: 'engine_unavailable' }), { [fallbackReasonHeader]: reason });
}
