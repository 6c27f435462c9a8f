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
  return new Relay(scope, options);
}

/** The offered hosts (newest last: the newest is used first) and the requests waiting for one. */
class Relay implements EngineRelay {
  private readonly hosts: MessagePort[] = [];
  private readonly waiting = new Set<() => void>();
  private readonly acceptTimeoutMs: number;
  private readonly hostWaitMs: number;

  constructor(
    private readonly scope: string,
    private readonly options: EngineRelayOptions,
  ) {
    this.acceptTimeoutMs = options.acceptTimeoutMs ?? 10_000;
    this.hostWaitMs = options.hostWaitMs ?? 10_000;
  }

  addHost(port: MessagePort): void {
    this.hosts.push(port);
    for (const resolve of this.waiting) resolve();
    this.waiting.clear();
  }

  async handle(request: Request): Promise<Response> {
    const { reason, detail } = this.options.fallback;
    const message: RelayedRequest = {
      type: 'request',
      scope: this.scope,
      url: request.url,
      method: request.method,
      headers: [...request.headers],
      body: request.method === 'GET' || request.method === 'HEAD' ? null : await request.blob(),
    };
    let asked = false;
    for (;;) {
      let host = this.hosts.at(-1) ?? null;
      if (!host && !asked) {
        asked = true;
        host = await this.askPagesForHost();
      }
      if (!host) {
        return relayError('unavailable', `The engine runs in a page here (${detail}) and no open page of the app is hosting it: open the app in a tab.`, reason);
      }
      try {
        return await new RelayedCall(host, message, request.signal, reason, this.acceptTimeoutMs).answer;
      } catch (error) {
        if (!(error instanceof HostGone)) throw error;
        this.dropHost(host);
      }
    }
  }

  private dropHost(port: MessagePort): void {
    const index = this.hosts.indexOf(port);
    if (index >= 0) this.hosts.splice(index, 1);
    port.close();
  }

  private async askPagesForHost(): Promise<MessagePort | null> {
    const arrived = new Promise<void>((resolve) => this.waiting.add(resolve));
    const pages = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    for (const page of pages) page.postMessage({ type: engineHostWantedType } satisfies EngineHostWanted);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([arrived, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.hostWaitMs)))]);
    clearTimeout(timer);
    return this.hosts.at(-1) ?? null;
  }
}

/**
 * One request sent to one host: `answer` resolves with the relayed response (its body streamed as the chunks
 * arrive), or rejects HostGone if the host does not acknowledge it in time.
 */
class RelayedCall {
  readonly answer: Promise<Response>;
  private readonly reply: MessagePort;
  private resolve!: (response: Response) => void;
  private body: ReadableStreamDefaultController<Uint8Array> | null = null;
  private settled = false;
  private readonly acceptTimer: ReturnType<typeof setTimeout>;
  /** A host that goes silent mid-request (its page closed) fails the request instead of leaving it hanging. */
  private watchdog: ReturnType<typeof setTimeout> | undefined;
  private readonly abort = (): void => this.reply.postMessage({ type: 'abort' } satisfies RelayAbort);

  constructor(
    port: MessagePort,
    message: RelayedRequest,
    private readonly signal: AbortSignal,
    private readonly reason: EngineFallbackReason,
    acceptTimeoutMs: number,
  ) {
    const channel = new MessageChannel();
    this.reply = channel.port1;
    let reject!: (error: unknown) => void;
    this.answer = new Promise<Response>((resolve, rejectAnswer) => {
      this.resolve = resolve;
      reject = rejectAnswer;
    });
    this.acceptTimer = setTimeout(() => {
      this.reply.close();
      reject(new HostGone());
    }, acceptTimeoutMs);
    signal.addEventListener('abort', this.abort, { once: true });
    this.reply.onmessage = (event: MessageEvent<RelayReply>) => this.onReply(event.data);
    port.postMessage(message, [channel.port2]);
  }

  private onReply(data: RelayReply): void {
    clearTimeout(this.watchdog);
    if (data.type !== 'end' && data.type !== 'error') this.watchdog = setTimeout(() => this.hostSilent(), 6 * relayHeartbeatMs);
    if (data.type === 'accepted') clearTimeout(this.acceptTimer);
    else if (data.type === 'head') this.onHead(data);
    else if (data.type === 'chunk') {
      try {
        this.body?.enqueue(data.bytes);
      } catch {
        // The caller went away.
      }
    } else if (data.type === 'end') {
      try {
        this.body?.close();
      } catch {
        // Already cancelled.
      }
      this.finish();
    } else if (data.type === 'error') {
      clearTimeout(this.acceptTimer);
      this.fail(`The engine worker failed: ${data.message}`, data.message);
    }
  }

  private onHead(data: Extract<RelayReply, { type: 'head' }>): void {
    this.settled = true;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.body = controller;
      },
      cancel: () => {
        this.abort();
        this.finish();
      },
    });
    const noBody = data.status === 101 || data.status === 204 || data.status === 304;
    const headers = new Headers(data.headers);
    headers.set(relayedHeader, 'page-worker');
    headers.set(fallbackReasonHeader, this.reason);
    this.resolve(new Response(noBody ? null : stream, { status: data.status, statusText: data.statusText, headers }));
  }

  private hostSilent(): void {
    const message = 'The page hosting the engine stopped answering (closed?)';
    this.fail(message, message);
  }

  /** Before the head: answer a 502 saying `message`; after it: error the body stream with `streamMessage`. */
  private fail(message: string, streamMessage: string): void {
    if (!this.settled) {
      this.settled = true;
      this.resolve(relayError('upstream', message, this.reason));
    } else {
      try {
        this.body?.error(new Error(streamMessage));
      } catch {
        // Already closed.
      }
    }
    this.finish();
  }

  private finish(): void {
    clearTimeout(this.watchdog);
    this.signal.removeEventListener('abort', this.abort);
    this.reply.close();
  }
}

/** The engine host failed (502) or there is none (503): `engine_unavailable`, with the reason in a header. */
function relayError(kind: 'upstream' | 'unavailable', message: string, reason: EngineFallbackReason): Response {
  return errorResponse(new DomainError(kind, message, { code: 'engine_unavailable' }), { [fallbackReasonHeader]: reason });
}
