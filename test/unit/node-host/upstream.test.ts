// The Node host's routing without processes: the app (app.ts) over a stub handler and an upstream whose fetch is
// a function here. Unknown models go upstream with the same bytes, the answer comes back unchanged (an SSE stream
// split anywhere, CRLF frames included) and its final response is stored; the key check comes first; an
// unreachable upstream is a 502; the client's Authorization goes upstream only when this host checks none.
import { describe, expect, it } from 'vitest';
import { createApp } from '../../../src/node-host/app.ts';
import { createUpstream } from '../../../src/node-host/upstream.ts';
import type { ResponsesHandler } from '../../../src/responses/handler.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';

const localHandler: ResponsesHandler = async (request) => Response.json({ local: true, path: new URL(request.url).pathname });

function post(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request('http://127.0.0.1:9/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** A response body that arrives in the given pieces. */
function pieces(parts: string[], type: string): Response {
  const encoder = new TextEncoder();
  let i = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (i < parts.length) controller.enqueue(encoder.encode(parts[i++]!));
        else controller.close();
      },
    }),
    { headers: { 'content-type': type } },
  );
}

describe('node host routing', () => {
  it('forwards an unknown model with the same body bytes, streams the answer back unchanged and stores its final response', async () => {
    const store = createMemoryStore();
    const seen: { url: string; body: string; auth: string | null }[] = [];
    const final = { id: 'resp_up1', object: 'response', created_at: 5, status: 'completed', output: [{ type: 'message', role: 'assistant', content: [] }] };
    const sse = `event: response.created\r\ndata: {"type":"response.created","response":{"id":"resp_up1","status":"in_progress"}}\r\n\r\nevent: response.completed\r\ndata: ${JSON.stringify({ type: 'response.completed', response: final })}\r\n\r\n`;
    const upstream = createUpstream({
      url: 'http://up.test/v1/',
      apiKey: 'up-key',
      store,
      fetch: (async (url: string, init: RequestInit) => {
        seen.push({ url, body: new TextDecoder().decode(init.body as Uint8Array), auth: new Headers(init.headers).get('authorization') });
        // Split mid-frame and mid-line.
        return pieces([sse.slice(0, 30), sse.slice(30, 101), sse.slice(101)], 'text/event-stream');
      }) as typeof fetch,
    });
    const app = createApp({ handler: localHandler, upstream, localModels: async () => new Set(['toy']) });
    const body = { model: 'big', input: 'hi there', stream: true };
    const res = await app(post(body, { authorization: 'Bearer client-key' }), new AbortController().signal);
    expect(await res.text()).toBe(sse);
    expect(seen).toEqual([{ url: 'http://up.test/v1/responses', body: JSON.stringify(body), auth: 'Bearer up-key' }]);
    let stored = await store.get('resp_up1');
    for (let i = 0; i < 20 && stored === undefined; i++) {
      await new Promise((r) => setTimeout(r, 10));
      stored = await store.get('resp_up1');
    }
    expect(stored?.response).toEqual(final);
    expect(stored?.inputItems).toEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi there' }], id: expect.stringMatching(/^msg_/) }]);
    expect(stored?.history).toHaveLength(2);

    // A local model never leaves this host.
    const local = await app(post({ model: 'toy', input: 'x' }), new AbortController().signal);
    expect(await local.json()).toEqual({ local: true, path: '/v1/responses' });
    expect(seen).toHaveLength(1);
  });

  it('store:false upstream answers are not stored; the client key goes upstream only when this host checks none', async () => {
    const store = createMemoryStore();
    const auths: (string | null)[] = [];
    const fetchStub = (async (_url: string, init: RequestInit) => {
      auths.push(new Headers(init.headers).get('authorization'));
      return Response.json({ id: 'resp_nostore', object: 'response', status: 'completed', output: [] });
    }) as typeof fetch;
    const open = createApp({ handler: localHandler, upstream: createUpstream({ url: 'http://up.test', passThroughAuth: true, store, fetch: fetchStub }), localModels: async () => new Set() });
    await (await open(post({ model: 'big', input: 'x', store: false }, { authorization: 'Bearer mine' }), new AbortController().signal)).text();
    const keyed = createApp({
      handler: localHandler,
      apiKey: 'host-key',
      upstream: createUpstream({ url: 'http://up.test', passThroughAuth: false, store, fetch: fetchStub }),
      localModels: async () => new Set(),
    });
    await (await keyed(post({ model: 'big', input: 'x', store: false }, { authorization: 'Bearer host-key' }), new AbortController().signal)).text();
    expect(auths).toEqual(['Bearer mine', null]);
    await new Promise((r) => setTimeout(r, 20));
    expect(await store.get('resp_nostore')).toBeUndefined();
  });

  it('the API key is checked before anything, in the OpenAI error shape', async () => {
    let called = 0;
    const app = createApp({
      handler: async () => {
        called++;
        return new Response('ok');
      },
      apiKey: 'k1',
      localModels: async () => new Set(),
    });
    const wrong = await app(post({ model: 'x' }, { authorization: 'Bearer k2' }), new AbortController().signal);
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
    const missing = await app(post({ model: 'x' }), new AbortController().signal);
    expect(missing.status).toBe(401);
    expect(called).toBe(0);
    expect((await app(post({ model: 'x' }, { authorization: 'Bearer k1' }), new AbortController().signal)).status).toBe(200);
    expect(called).toBe(1);
  });

  it('an unreachable upstream is a 502 naming it; /v1/models lists the upstream models after the local ones', async () => {
    const failing = createUpstream({
      url: 'http://up.test',
      fetch: (async () => {
        throw new TypeError('fetch failed');
      }) as typeof fetch,
      log: () => undefined,
    });
    const app = createApp({ handler: localHandler, upstream: failing, localModels: async () => new Set() });
    const res = await app(post({ model: 'big', input: 'x' }), new AbortController().signal);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_unreachable');

    const listing = createUpstream({
      url: 'http://up.test',
      fetch: (async () => Response.json({ data: [{ id: 'big', created: 3, owned_by: 'them' }, { id: 'toy' }, { nope: 1 }] })) as typeof fetch,
    });
    const models = createApp({
      handler: async () => Response.json({ object: 'list', data: [{ id: 'toy', object: 'model', created: 0, owned_by: 'webgpu-responses' }] }),
      upstream: listing,
      localModels: async () => new Set(['toy']),
    });
    const list = (await (await models(new Request('http://127.0.0.1:9/v1/models'), new AbortController().signal)).json()) as { data: { id: string; owned_by: string }[] };
    expect(list.data.map((m) => [m.id, m.owned_by])).toEqual([
      ['toy', 'webgpu-responses'],
      ['big', 'them'],
    ]);
  });

  it('a body over the bound is a 413 before anything is forwarded', async () => {
    let forwarded = 0;
    const upstream = createUpstream({ url: 'http://up.test', fetch: (async () => (forwarded++, new Response('{}'))) as typeof fetch });
    const app = createApp({ handler: localHandler, upstream, localModels: async () => new Set(), maxBodyBytes: 100 });
    const res = await app(post({ model: 'big', input: 'x'.repeat(200) }), new AbortController().signal);
    expect(res.status).toBe(413);
    expect(forwarded).toBe(0);
  });
});
