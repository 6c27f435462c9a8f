// node:http around a web-style app: each IncomingMessage becomes a Request (its body streamed, an AbortSignal
// that fires when the client goes away before the answer is finished) and each Response goes back to the
// ServerResponse as its body streams out, chunk by chunk (SSE events reach the client as they are made; Nagle is
// off). Shutdown stops accepting, aborts what is running, and waits for it to end.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { DomainError, toApiError } from '../responses/errors.ts';
import type { App } from './app.ts';

export interface ListenOptions {
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
}

export interface NodeServer {
  readonly server: Server;
  /** `http://host:port` as bound (the port chosen when 0 was asked for). */
  readonly origin: string;
  /** Other origins this server is addressed as (`http://localhost:port` for a loopback address). */
  readonly aliases: string[];
  /** Requests whose answer has not finished. */
  readonly inFlight: number;
  /**
   * Stops accepting connections, aborts every running request (generations end, recorded as cancelled), waits up
   * to `graceMs` for their answers to finish, then closes what is left.
   */
  close(graceMs?: number): Promise<void>;
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'http2-settings']);

/** What the request handler knows of the server once it listens: its app, its origin, whether it is on loopback. */
interface Site {
  app: App | null;
  origin: string;
  loopback: boolean;
}

/** The answers in flight, each with its abort and its end (close() aborts them and waits for them). */
type Running = Map<ServerResponse, { controller: AbortController; done: Promise<void> }>;

/** Binds `app` to a port; resolves once it listens. `app` comes from `makeApp`, told the origins it is served as. */
export async function listen(options: ListenOptions, makeApp: (site: { origin: string; aliases: string[] }) => App): Promise<NodeServer> {
  const running: Running = new Map();
  const site: Site = { app: null, origin: '', loopback: false };
  const server = createServer((req, res) => {
    const controller = new AbortController();
    const done = serve(site, req, res, controller).finally(() => running.delete(res));
    running.set(res, { controller, done });
  });
  server.keepAliveTimeout = 5_000;
  // A prefill of a long prompt can take minutes before the first byte of a non-streamed answer.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  const address = await bind(server, options.port, options.host ?? '127.0.0.1');
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `http://${shown}:${address.port}`;
  site.origin = origin;
  site.loopback = /^127\.|^::1$/.test(address.address);
  const aliases = site.loopback ? LOOPBACK_NAMES.map((n) => `http://${n}:${address.port}`).filter((o) => o !== origin) : [];
  site.app = makeApp({ origin, aliases });
  return {
    server,
    origin,
    aliases,
    get inFlight() {
      return running.size;
    },
    close: (graceMs = 5_000) => closeServer(server, running, graceMs),
  };
}

function bind(server: Server, port: number | undefined, host: string): Promise<AddressInfo> {
  return new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

async function serve(site: Site, req: IncomingMessage, res: ServerResponse, controller: AbortController): Promise<void> {
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(new DOMException('The client closed the connection.', 'AbortError'));
  });
  req.socket.setNoDelay(true);
  try {
    const url = requestUrl(site, req);
    if (url === null) {
      sendError(res, new DomainError('misdirected', `This server does not answer for host '${String(req.headers.host).slice(0, 100)}'.`));
      return;
    }
    const request = toRequest(req, url, controller.signal);
    const response = await site.app!(request, controller.signal);
    await sendResponse(response, res);
  } catch (error) {
    if (!res.headersSent) {
      sendError(res, new DomainError('internal', `The server failed: ${error instanceof Error ? error.message : String(error)}`));
    } else res.destroy();
  }
}

/** The request's URL on this server's origin; null when a loopback server is addressed by another name (DNS rebinding). */
function requestUrl(site: Site, req: IncomingMessage): string | null {
  const path = req.url ?? '/';
  const hostHeader = req.headers.host;
  if (hostHeader === undefined) return `${site.origin}${path}`;
  const name = hostHeader.replace(/:\d+$/, '').toLowerCase();
  if (site.loopback && !LOOPBACK_NAMES.includes(name)) return null;
  return `http://${hostHeader}${path}`;
}

/** Stops listening, aborts the answers in flight, waits up to `graceMs` for them, then drops every connection. */
async function closeServer(server: Server, running: Running, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  for (const { controller } of running.values()) controller.abort(new DOMException('The server is shutting down.', 'AbortError'));
  server.closeIdleConnections();
  const answered = Promise.all([...running.values()].map((r) => r.done));
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([answered, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
  clearTimeout(timer);
  server.closeAllConnections();
  await closed;
}

function toRequest(req: IncomingMessage, url: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const method = (req.method ?? 'GET').toUpperCase();
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(url, {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>) : undefined,
    signal,
    // @ts-expect-error `duplex` is needed by Node's fetch for a streamed body and is missing from the DOM types
    duplex: 'half',
  });
}

/** Streams `response` out; a client that goes away cancels its body (for SSE: the handler aborts the generation). */
async function sendResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  if (response.statusText) res.statusMessage = response.statusText;
  response.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name)) res.setHeader(name, value);
  });
  if (response.headers.has('set-cookie')) res.setHeader('set-cookie', response.headers.getSetCookie());
  if (response.body === null) {
    res.end();
    return;
  }
  res.flushHeaders();
  const reader = response.body.getReader();
  const stop = (): void => {
    if (!res.writableFinished) void reader.cancel(new DOMException('The client closed the connection.', 'AbortError')).catch(() => undefined);
  };
  res.on('close', stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) return;
      if (!res.write(value)) {
        await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    res.off('close', stop);
  }
}

/** An error as the one error edge answers it (the same body every host gives). */
function sendError(res: ServerResponse, error: unknown): void {
  const { status, body } = toApiError(error);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}
