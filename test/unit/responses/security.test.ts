// Issue 22, the wire-level cases: who may call (cross-site requests, non-JSON bodies), bounded JSON nesting,
// malformed percent-encoding in ids, the request's signal held for the whole run (an abort after the Request was
// garbage-collected), client input quoted short in errors, the body limit counted while reading, and every
// encrypted_content verified. Each test sends what an attacker or a fuzzer sent and checks that nothing was
// generated or stored where the request was refused.
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createResponsesHandler } from '../../../src/responses/handler.ts';
import { guardRequest } from '../../../src/responses/request-guard.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import type { ResponseStore } from '../../../src/store/types.ts';
import { FakeEngine, type FakeScript } from '../../support/fake-engine.ts';
import { call, countingIds, NOW, post, setup, streamEvents } from './harness.ts';

type Json = Record<string, any>;

async function json(response: Response, status: number): Promise<Json> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return (await response.json()) as Json;
}

/** A memory store that counts its writes (a refused request must make none). */
function countingStore(): ResponseStore & { writes: number } {
  const inner = createMemoryStore();
  const counted = Object.create(inner) as ResponseStore & { writes: number };
  counted.writes = 0;
  counted.put = async (record) => {
    counted.writes++;
    return inner.put(record);
  };
  counted.updateResponse = async (id, response) => {
    counted.writes++;
    return inner.updateResponse(id, response);
  };
  return counted;
}

function guarded(scripts: FakeScript[] = [{ tokens: ['Hi.'] }], options: { allowedOrigins?: string[] } = {}) {
  const engine = new FakeEngine(scripts);
  const store = countingStore();
  const handler = createResponsesHandler({ engine, store, now: () => NOW, ids: countingIds(), keepAliveMs: 60_000, ...options });
  return { engine, store, handler };
}

const url = 'http://local/v1/responses';

describe('who may call (item 1)', () => {
  // The body an auto-submitted <form enctype=text/plain> sends: name=value, which is JSON when the name is.
  const formBody = '{"input":"hi","pad":"=x"}';

  it('a text/plain body (what a cross-site form posts) is a 415; nothing is generated or stored', async () => {
    const { engine, store, handler } = guarded();
    const body = await json(await handler(new Request(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: formBody })), 415);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_media_type', param: null });
    expect(body.error.message).toMatch(/must be JSON/);
    expect(engine.requests).toHaveLength(0);
    expect(store.writes).toBe(0);
  });

  it('form-urlencoded, multipart and a body without any type are 415s too; application/json with a charset passes', async () => {
    const { engine, handler } = guarded([{ tokens: ['ok'] }]);
    for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
      await json(await handler(new Request(url, { method: 'POST', headers: { 'content-type': type }, body: formBody })), 415);
    }
    // A Uint8Array body gets no Content-Type of its own.
    const untyped = new Request(url, { method: 'POST', body: new TextEncoder().encode(formBody) });
    expect(untyped.headers.get('content-type')).toBeNull();
    await json(await handler(untyped), 415);
    expect(engine.requests).toHaveLength(0);
    const ok = await handler(new Request(url, { method: 'POST', headers: { 'content-type': 'Application/JSON; charset=utf-8' }, body: formBody }));
    expect(ok.status).toBe(200);
  });

  it('on a Node host an Origin of another origin, or Sec-Fetch-Site cross-site, is a 403; nothing is generated or stored', async () => {
    const { engine, store, handler } = guarded();
    const requests: Record<string, string>[] = [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { origin: 'http://local:8080' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of requests) {
      const body = await json(await post(handler, '/responses', { input: 'hi', stream: true }, { headers: { 'content-type': 'application/json', ...headers } }), 403);
      expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'cross_site_request', param: null });
    }
    // Every route, not only creation.
    await json(await handler(new Request('http://local/v1/responses/resp_1', { headers: { origin: 'http://evil.example' } })), 403);
    await json(await handler(new Request('http://local/v1/models', { headers: { 'sec-fetch-site': 'cross-site' } })), 403);
    expect(engine.requests).toHaveLength(0);
    expect(store.writes).toBe(0);
  });

  it('its own origin, same-origin fetch metadata, an allowed origin and no Origin at all (the SDK on Node) pass', async () => {
    const { handler } = guarded([{ tokens: ['a'] }, { tokens: ['b'] }, { tokens: ['c'] }], { allowedOrigins: ['http://ide.example'] });
    const passing: Record<string, string>[] = [{ origin: 'http://local', 'sec-fetch-site': 'same-origin' }, { origin: 'http://ide.example', 'sec-fetch-site': 'cross-site' }, {}];
    for (const headers of passing) {
      const response = await post(handler, '/responses', { input: 'hi' }, { headers: { 'content-type': 'application/json', ...headers } });
      expect(response.status).toBe(200);
    }
  });

  it('the guard refuses a navigation and a client or referrer of another origin (what the service worker passes it)', () => {
    const request = new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const own = { origin: 'http://local' };
    expect(guardRequest(request, own)).toBeNull();
    expect(guardRequest(request, { ...own, isNavigation: true })?.kind).toBe('forbidden');
    expect(guardRequest(request, { ...own, clientUrl: 'http://evil.example/page.html' })?.kind).toBe('forbidden');
    expect(guardRequest(request, { ...own, clientUrl: 'http://local/index.html' })).toBeNull();
    // A referrer as a service worker's FetchEvent carries it (Node's Request keeps only same-origin referrers).
    const referred = { ...request, mode: 'cors', referrer: 'http://evil.example/form.html', headers: request.headers, method: 'POST', url } as unknown as Request;
    expect(guardRequest(referred, own)?.code).toBe('cross_site_request');
    const navigation = { mode: 'navigate', referrer: '', headers: new Headers(), method: 'GET', url } as unknown as Request;
    expect(guardRequest(navigation, own)?.kind).toBe('forbidden');
    // The model import route takes the raw file.
    expect(guardRequest(new Request('http://local/v1/models/import?name=a.gguf', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'GGUF' }), own)).toBeNull();
  });
});

describe('JSON nesting depth (item 4)', () => {
  const deep = (levels: number, leaf: unknown = 1): unknown => {
    let value = leaf;
    for (let i = 0; i < levels; i++) value = { type: 'object', properties: { a: value } };
    return value;
  };
  /** Nesting built as text (a value too deep for JSON.stringify to write). */
  const deepText = (levels: number): string => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

  it('deep tools[].parameters, text.format.schema, tool_choice and input are 400s naming the field, streamed or not', async () => {
    const cases: [string, string][] = [
      [`{"input":"x","tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"a":${deepText(100_000)}}}}]}`, 'tools[0].parameters'],
      [`{"input":"x","text":{"format":{"type":"json_schema","name":"s","schema":{"type":"array","items":${deepText(100_000)}}}}}`, 'text.format.schema'],
      [`{"input":"x","tool_choice":{"type":"function","name":${deepText(100_000)}}}`, 'tool_choice'],
      [`{"input":[{"role":"user","content":"x"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}","x":${deepText(100_000)}}]}`, 'input[1]'],
    ];
    for (const stream of [false, true]) {
      for (const [text, param] of cases) {
        const { engine, store, handler } = guarded();
        const body = text.replace(/^\{/, `{"stream":${stream},`);
        const error = (await json(await post(handler, '/responses', body), 400)).error;
        expect(error).toMatchObject({ type: 'invalid_request_error', param, code: 'json_too_deep' });
        expect(engine.requests).toHaveLength(0);
        expect(store.writes).toBe(0);
      }
    }
  });

  it('a schema within the bound is served; one level over it is refused', async () => {
    const { handler } = guarded([{ tokens: ['{"a":1}'] }]);
    // Body (1) > tools (2) > tool (3) > parameters (4): 30 schema levels of two containers each end at depth 63, plus the leaf object.
    const within = { input: 'x', tools: [{ type: 'function', name: 'f', parameters: deep(30, {}) }] };
    expect((await post(handler, '/responses', within)).status).toBe(200);
    const over = { input: 'x', tools: [{ type: 'function', name: 'f', parameters: deep(31, {}) }] };
    expect((await json(await post(handler, '/responses', over), 400)).error.param).toBe('tools[0].parameters');
  });

  it('function_call arguments (JSON in a string, parsed for the template) are bounded too', async () => {
    const { engine, handler } = guarded();
    const input = [
      { role: 'user', content: 'x' },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: deepText(100_000) },
      { type: 'function_call_output', call_id: 'c1', output: 'ok' },
    ];
    const error = (await json(await post(handler, '/responses', { input }), 400)).error;
    expect(error).toMatchObject({ param: 'input[1].arguments', code: 'json_too_deep' });
    expect(engine.requests).toHaveLength(0);
  });

  it('input_tokens and compact check it as well', async () => {
    const { handler } = guarded();
    for (const path of ['/responses/input_tokens', '/responses/compact']) {
      const error = (await json(await post(handler, path, `{"input":"x","tools":[{"type":"function","name":"f","parameters":${deepText(5_000)}}]}`), 400)).error;
      expect(error.param).toBe('tools[0].parameters');
    }
  });
});

describe('percent-encoding in ids (item 5)', () => {
  it('a malformed escape in any id route is a 400 naming response_id, never a 500', async () => {
    const { handler, store } = guarded();
    for (const [method, path] of [
      ['GET', '/responses/resp_%ZZ'],
      ['DELETE', '/responses/resp_%ZZ'],
      ['POST', '/responses/resp_%E0%A4%A/cancel'],
      ['GET', '/responses/%/input_items'],
    ] as const) {
      const error = (await json(await call(handler, method, path), 400)).error;
      expect(error).toMatchObject({ type: 'invalid_request_error', param: 'response_id' });
    }
    expect(store.writes).toBe(0);
  });
});

describe('the request signal is held for the whole run (item 7)', () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const collect = async (): Promise<void> => {
    for (let i = 0; i < 6; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  for (const stream of [true, false]) {
    it(`a host abort stops a ${stream ? 'streamed' : 'non-streamed'} generation after the Request object was garbage-collected`, async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const { engine, store, handler } = guarded([{ tokens: Array.from({ length: 20 }, (_, i) => `t${i} `), gate }]);
      const host = new AbortController();
      // What a Node server does: a Request per incoming message, following the connection's signal; it keeps only
      // the Response (streamed) or the pending promise (not streamed), not the Request.
      const answered = ((): Promise<Response> =>
        handler(new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'long', stream }), signal: host.signal })))();
      let reading: Promise<string> | null = null;
      if (stream) {
        const response = await answered;
        reading = response.text().catch(() => '');
      } else {
        while (engine.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await collect();
      host.abort();
      await new Promise((resolve) => setTimeout(resolve, 20));
      // Without the abort reaching the engine, the gate opens and all 20 tokens are generated.
      release();
      if (stream) await reading;
      else await answered;
      expect(engine.requests[0]!.signal?.aborted).toBe(true);
      let record = await store.get('resp_000001');
      for (let i = 0; i < 200 && record === undefined; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        record = await store.get('resp_000001');
      }
      expect(record?.response.status).toBe('cancelled');
      expect(engine.tokensYielded).toBe(0);
    });
  }
});

describe('client input quoted short in errors (item 9)', () => {
  const huge = 'm'.repeat(1024 * 1024);

  it('a 1 MiB model name, tool name, unknown route, item id and value come back as at most ~200 characters', async () => {
    const { handler } = guarded();
    const answers = [
      await post(handler, '/responses', { model: huge, input: 'x' }),
      await post(handler, '/responses', { input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: huge } }),
      await post(handler, '/responses', { input: [{ type: huge }] }),
      await post(handler, '/responses', { input: 'x', previous_response_id: `resp_${huge}` }),
      await post(handler, '/responses', { input: [{ role: 'user', content: 'x' }, { type: 'function_call_output', call_id: huge, output: 'ok' }] }),
      await call(handler, 'GET', `/${huge}`),
      await call(handler, 'GET', `/responses/resp_${huge}`),
    ];
    for (const answer of answers) {
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      const text = await answer.text();
      expect(text.length).toBeLessThan(1_000);
      expect(text).not.toContain('m'.repeat(201));
      expect((JSON.parse(text) as Json).error.message).toMatch(/more characters/);
    }
  });

  it('a long object key in a field path is bounded in param and message', async () => {
    const { handler } = guarded();
    const answer = await post(handler, '/responses', { input: 'x', metadata: { [huge]: 5 } });
    const text = await answer.text();
    expect(answer.status).toBe(400);
    expect(text.length).toBeLessThan(2_000);
  });
});

describe('body limit and encrypted content (item 10)', () => {
  it('a body with no content-length is cut off at 8 MB while it streams in', async () => {
    const { engine, store, handler } = guarded();
    let pulled = 0;
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 64 * 1024 * 1024) return controller.close();
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const request = new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);
    expect(request.headers.get('content-length')).toBeNull();
    const error = (await json(await handler(request), 400)).error;
    expect(error).toMatchObject({ code: 'input_too_large' });
    expect(pulled).toBeLessThanOrEqual(10 * 1024 * 1024);
    expect(engine.requests).toHaveLength(0);
    expect(store.writes).toBe(0);
  });

  async function sealed(): Promise<{ handler: ReturnType<typeof setup>['handler']; item: Json }> {
    const { handler } = setup([{ tokens: ['<think>secret plan</think>', 'ok'] }, { tokens: ['ok'] }]);
    const first = (await (await post(handler, '/responses', { input: 'x', include: ['reasoning.encrypted_content'], store: false })).json()) as Json;
    return { handler, item: first.output[0] as Json };
  }

  it('an empty encrypted_content is a 400 naming the item', async () => {
    const { handler, item } = await sealed();
    for (const withText of [false, true]) {
      const reasoning = { ...item, content: withText ? [{ type: 'reasoning_text', text: 'plan' }] : [], encrypted_content: '' };
      const error = (await json(await post(handler, '/responses', { input: [{ role: 'user', content: 'x' }, reasoning, { role: 'user', content: 'y' }], store: false }), 400)).error;
      expect(error).toMatchObject({ param: 'input[1].encrypted_content', code: 'invalid_encrypted_content' });
    }
  });

  it('a tampered encrypted_content is a 400 even when the item carries its reasoning text; the intact one passes', async () => {
    const { handler, item } = await sealed();
    const blob = item.encrypted_content as string;
    const at = Math.floor(blob.length / 2);
    const tampered = blob.slice(0, at) + (blob[at] === 'A' ? 'B' : 'A') + blob.slice(at + 1);
    expect(item.content).toEqual([{ type: 'reasoning_text', text: 'secret plan' }]);
    const input = (encrypted: string) => [{ role: 'user', content: 'x' }, { ...item, encrypted_content: encrypted }, { role: 'user', content: 'y' }];
    const error = (await json(await post(handler, '/responses', { input: input(tampered), store: false }), 400)).error;
    expect(error).toMatchObject({ param: 'input[1].encrypted_content', code: 'invalid_encrypted_content' });
    expect(error.message).toMatch(/could not be decrypted/);
    expect((await post(handler, '/responses', { input: input(blob), store: false })).status).toBe(200);
  });
});

describe('streamed requests refused before the stream', () => {
  it('a deep streamed request is a JSON 400, never a 200 stream with a bare error event (item 4)', async () => {
    const { handler } = guarded();
    const refused = await post(handler, '/responses', `{"stream":true,"input":"x","tools":[{"type":"function","name":"f","parameters":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}]}`);
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).not.toMatch(/event-stream/);
    const ok = await post(handler, '/responses', { stream: true, input: 'x' });
    expect(streamEvents(await ok.text()).at(-1)?.type).toBe('response.completed');
  });
});
