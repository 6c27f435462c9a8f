// A model file's host failing (an HTTP error, no size, a short answer, a connection cut short) is a DomainError of
// kind `upstream` (502 model_download_failed), so the model registry tells it from a fault of the file by kind, not
// by message: an unreachable file is not remembered as a bad one, a corrupt one is.
import { beforeEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/common/engine-error.ts';
import { forgetOpenFailures, openModel } from '../../../src/model/open-model.ts';
import { UrlSource } from '../../../src/model/byte-source.ts';
import { toApiError } from '../../../src/responses/errors.ts';
import { tinyModelWithTemplate } from '../../../tools/make-hostile-gguf/hostile.ts';

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

/** A fetch over `bytes` answering Range requests; `fault(n)` may answer request n (0-based) instead. */
function rangeServer(bytes: Uint8Array, fault: (n: number) => Response | null = () => null): typeof fetch & { calls: number } {
  const server = async (_input: RequestInfo | URL, init?: RequestInit) => {
    const n = server.calls++;
    const faulty = fault(n);
    if (faulty) return faulty;
    const range = /bytes=(\d+)-(\d+)/.exec(new Headers(init?.headers).get('range') ?? '');
    if (!range) return new Response(bytes.slice(), { status: 200, headers: { 'content-length': String(bytes.length) } });
    const start = Number(range[1]);
    const end = Math.min(Number(range[2]), bytes.length - 1);
    if (start >= bytes.length) return new Response(null, { status: 416 });
    return new Response(bytes.slice(start, end + 1), { status: 206, headers: { 'content-range': `bytes ${start}-${end}/${bytes.length}` } });
  };
  server.calls = 0;
  return server as typeof fetch & { calls: number };
}

function expectUpstream(error: unknown, message: RegExp): void {
  expect(error).toBeInstanceOf(DomainError);
  expect(error).toMatchObject({ kind: 'upstream', code: 'model_download_failed' });
  expect((error as Error).message).toMatch(message);
  expect(toApiError(error)).toMatchObject({ status: 502, body: { error: { type: 'server_error', code: 'model_download_failed' } } });
}

beforeEach(() => forgetOpenFailures());

describe('UrlSource failures are kinded', () => {
  const bytes = new Uint8Array(1000).map((_, i) => i & 0xff);

  it('an HTTP error status is upstream', async () => {
    const source = new UrlSource('http://files.test/m.gguf', rangeServer(bytes, () => new Response('no', { status: 503, statusText: 'Busy' })));
    expectUpstream(await failureOf(source.size()), /HTTP 503/);
  });

  it('a server that gives no size is upstream', async () => {
    const source = new UrlSource('http://files.test/m.gguf', rangeServer(bytes, () => new Response(new ReadableStream(), { status: 200 })));
    expectUpstream(await failureOf(source.size()), /no file size/);
  });

  it('a 206 shorter than the range asked is upstream', async () => {
    const short = (n: number) => (n === 1 ? new Response(bytes.slice(0, 10), { status: 206, headers: { 'content-range': 'bytes 0-9/1000' } }) : null);
    const source = new UrlSource('http://files.test/m.gguf', rangeServer(bytes, short));
    expectUpstream(await failureOf(source.read(0, 100)), /asked bytes 0\+100, got 10/);
  });

  it('a connection cut short while streaming is upstream', async () => {
    const cut = (n: number) => (n === 1 ? new Response(bytes.slice(0, 50), { status: 206, headers: { 'content-range': 'bytes 0-99/1000' } }) : null);
    const source = new UrlSource('http://files.test/m.gguf', rangeServer(bytes, cut));
    const error = await failureOf(
      (async () => {
        for await (const _chunk of source.stream(0, 100)) void _chunk;
      })(),
    );
    expectUpstream(error, /connection ended after 50 of 100/);
  });

  it('a range past the end is still a fault of the file (not upstream)', async () => {
    const source = new UrlSource('http://files.test/m.gguf', rangeServer(bytes));
    const error = await failureOf(source.read(990, 20));
    expect(error).not.toBeInstanceOf(DomainError);
    expect((error as Error).message).toMatch(/truncated file/);
  });
});

describe('openModel over a URL', () => {
  it('a host failing mid-open is an upstream error and is not remembered: the next open reads the file', async () => {
    const good = await tinyModelWithTemplate('{{ messages[0].content }}');
    let failing = true;
    // The fingerprint's reads (size, head, tail) answer; every later request fails while `failing`.
    const fetchImpl = rangeServer(good, (n) => (failing && n >= 3 ? new Response('gone', { status: 502, statusText: 'Bad Gateway' }) : null));
    const source = new UrlSource('http://files.test/tiny.gguf', fetchImpl);
    const error = await failureOf(openModel({ id: 'tiny', gguf: source }));
    expectUpstream(error, /HTTP 502/);
    failing = false;
    const opened = await openModel({ id: 'tiny', gguf: source });
    expect(opened.config.vocabSize).toBeGreaterThan(256);
  });

  it('a corrupt file is remembered: the next open fails at once with the same error', async () => {
    const bad = await tinyModelWithTemplate('{{ messages[0].content }}');
    bad.set([0x58, 0x58, 0x58, 0x58], 0);
    const fetchImpl = rangeServer(bad);
    const source = new UrlSource('http://files.test/bad.gguf', fetchImpl);
    const first = await failureOf(openModel({ id: 'bad', gguf: source }));
    expect(first).not.toBeInstanceOf(DomainError);
    const again = await failureOf(openModel({ id: 'bad', gguf: source }));
    expect(again).toBe(first);
  });
});
