// State through the handler: store true/false, GET/DELETE by id (with malformed and unknown ids), input_items
// paging, background responses (queued, polled, cancelled), compaction, and a store that fails.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import { StoreError, type ResponseStore } from '../../../src/store/types.ts';
import { call, post, setup, streamEvents } from './harness.ts';
import { FAKE_MODEL } from '../../support/fake-engine.ts';

type Json = Record<string, unknown>;

async function json(response: Response, status = 200): Promise<Json> {
  expect(response.status).toBe(status);
  return (await response.json()) as Json;
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await probe();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('condition never held');
}

describe('store', () => {
  it('store:true keeps the response, GET returns it as created', async () => {
    const { handler, client } = setup([{ tokens: ['Hi.'] }]);
    const created = await json(await post(handler, '/responses', { input: 'hello', metadata: { k: 'v' } }));
    const fetched = await client.responses.retrieve(created.id as string);
    expect(JSON.parse(JSON.stringify({ ...fetched, output_text: undefined }))).toEqual(created);
    expect(created).toMatchObject({ store: true, status: 'completed', metadata: { k: 'v' }, previous_response_id: null });
  });

  it('store:false writes nothing', async () => {
    const { handler, store } = setup([{ tokens: ['Hi.'] }]);
    const created = await json(await post(handler, '/responses', { input: 'hello', store: false }));
    expect(created.store).toBe(false);
    expect(await store.get(created.id as string)).toBeUndefined();
    await json(await call(handler, 'GET', `/responses/${created.id as string}`), 404);
  });

  it('a malformed id is a 400 and an unknown one a 404', async () => {
    const { handler } = setup();
    for (const method of ['GET', 'DELETE']) {
      const bad = await json(await call(handler, method, '/responses/abc'), 400);
      expect(bad.error).toEqual({ message: "Invalid 'response_id': 'abc'. Response ids start with 'resp_'.", type: 'invalid_request_error', param: 'response_id', code: null });
      const unknown = await json(await call(handler, method, '/responses/resp_nope'), 404);
      expect(unknown.error).toMatchObject({ message: "Response with id 'resp_nope' not found.", param: 'response_id', type: 'invalid_request_error' });
    }
    await json(await call(handler, 'POST', '/responses/abc/cancel'), 400);
    await json(await call(handler, 'GET', '/responses/resp_nope/input_items'), 404);
  });

  it('DELETE removes the response and its history', async () => {
    const { handler, client, store } = setup([{ tokens: ['One.'] }]);
    const created = await json(await post(handler, '/responses', { input: 'hello' }));
    const id = created.id as string;
    await client.responses.delete(id);
    expect(await store.get(id)).toBeUndefined();
    await json(await call(handler, 'GET', `/responses/${id}`), 404);
    const continued = await json(await post(handler, '/responses', { input: 'again', previous_response_id: id }), 404);
    expect(continued.error).toMatchObject({ param: 'previous_response_id' });
    await json(await call(handler, 'DELETE', `/responses/${id}`), 404);
  });

  it('DELETE answers {id, object, deleted}', async () => {
    const { handler } = setup([{ tokens: ['One.'] }]);
    const created = await json(await post(handler, '/responses', { input: 'hello' }));
    expect(await json(await call(handler, 'DELETE', `/responses/${created.id as string}`))).toEqual({ id: created.id, object: 'response', deleted: true });
  });

  it('the stored history holds the chain: input of every turn and complete output items', async () => {
    const { handler, store } = setup([{ tokens: ['<think>hmm</think>', 'One.'] }, { tokens: ['Two.'] }]);
    const first = await json(await post(handler, '/responses', { input: 'a' }));
    const second = await json(await post(handler, '/responses', { input: 'b', previous_response_id: first.id }));
    const history = (await store.get(second.id as string))!.history as Json[];
    expect(history.map((i) => [i.type, i.role ?? null])).toEqual([
      ['message', 'user'],
      ['reasoning', null],
      ['message', 'assistant'],
      ['message', 'user'],
      ['message', 'assistant'],
    ]);
    expect(history[1]).toMatchObject({ content: [{ type: 'reasoning_text', text: 'hmm' }] });
  });
});

describe('input_items', () => {
  it('lists the items of this request with ids, with cursor paging', async () => {
    const { handler, client } = setup([{ tokens: ['ok'] }]);
    const input = ['one', 'two', 'three', 'four', 'five'].map((text) => ({ role: 'user', content: text }));
    const created = await json(await post(handler, '/responses', { input }));
    const id = created.id as string;

    const firstPage = await json(await call(handler, 'GET', `/responses/${id}/input_items?limit=2&order=asc`));
    const data = firstPage.data as Json[];
    expect(data.map((i) => (i.content as Json[])[0]!.text)).toEqual(['one', 'two']);
    expect(firstPage).toMatchObject({ object: 'list', first_id: data[0]!.id, last_id: data[1]!.id, has_more: true });
    const next = await json(await call(handler, 'GET', `/responses/${id}/input_items?limit=2&order=asc&after=${data[1]!.id as string}`));
    expect((next.data as Json[]).map((i) => (i.content as Json[])[0]!.text)).toEqual(['three', 'four']);

    // Default order is newest first; the SDK pages through all of it.
    const all = [];
    for await (const item of client.responses.inputItems.list(id, { limit: 2 })) all.push(item);
    expect(all.map((i) => i.type === 'message' && (i.content[0] as { text: string }).text)).toEqual(['five', 'four', 'three', 'two', 'one']);

    const bad = await json(await call(handler, 'GET', `/responses/${id}/input_items?limit=500`), 400);
    expect(bad.error).toMatchObject({ param: 'limit' });
  });
});

describe('background', () => {
  it('returns queued at once, runs, and GET polls it to completed', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { handler } = setup([{ tokens: ['Done', ' later.'], gate }]);
    const queued = await json(await post(handler, '/responses', { input: 'work', background: true }));
    expect(queued).toMatchObject({ status: 'queued', background: true, output: [] });
    const id = queued.id as string;
    const running = await until(() => call(handler, 'GET', `/responses/${id}`).then((r) => r.json() as Promise<Json>), (r) => r.status === 'in_progress');
    expect(running.status).toBe('in_progress');
    release();
    const done = await until(() => call(handler, 'GET', `/responses/${id}`).then((r) => r.json() as Promise<Json>), (r) => r.status === 'completed');
    expect((done.output as Json[])[0]).toMatchObject({ content: [{ text: 'Done later.' }] });
    // Cancelling a finished response is a 400.
    const late = await json(await call(handler, 'POST', `/responses/${id}/cancel`), 400);
    expect(late.error).toMatchObject({ message: "Cannot cancel a response with status 'completed'.", type: 'invalid_request_error' });
  });

  it('cancel stops generation and the response ends cancelled', async () => {
    const gate = new Promise<void>(() => {}); // never opens: only the cancel ends this generation
    const { handler, client, engine } = setup([{ tokens: ['never'], gate }]);
    const queued = await json(await post(handler, '/responses', { input: 'work', background: true }));
    await until(async () => engine.requests.length, (n) => n === 1);
    const cancelled = await client.responses.cancel(queued.id as string);
    expect(cancelled.status).toBe('cancelled');
    expect(engine.requests[0]!.signal!.aborted).toBe(true);
    expect(await json(await call(handler, 'GET', `/responses/${queued.id as string}`))).toMatchObject({ status: 'cancelled', output: [] });
    const again = await json(await call(handler, 'POST', `/responses/${queued.id as string}/cancel`), 400);
    expect(again.error).toMatchObject({ message: "Cannot cancel a response with status 'cancelled'." });
  });

  it('cancel of a response that is not background is a 400; background needs store', async () => {
    const { handler } = setup([{ tokens: ['ok'] }]);
    const created = await json(await post(handler, '/responses', { input: 'x' }));
    const error = await json(await call(handler, 'POST', `/responses/${created.id as string}/cancel`), 400);
    expect(error.error).toMatchObject({ message: 'Only background responses can be cancelled.', param: 'response_id' });
    const unstored = await json(await post(handler, '/responses', { input: 'x', background: true, store: false }), 400);
    expect(unstored.error).toMatchObject({ param: 'background', message: 'Background responses must be stored: set store to true.' });
  });
});

describe('compaction', () => {
  it('returns one compaction item that replays as a shorter prompt keeping user messages and tool results', async () => {
    const longOutput = 'line of tool output\n'.repeat(500);
    // The uncompacted history is longer than the fake model's 4096-token context: this model takes it.
    const { handler, engine } = setup([{ tokens: ['ok'] }, { tokens: ['ok'] }], { models: [{ ...FAKE_MODEL, contextLength: 32_768 }] });
    const history = [
      { role: 'user', content: 'Fix the bug in main.ts' },
      { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'thinking '.repeat(300) }] },
      { role: 'assistant', content: 'Let me look.', phase: 'commentary' },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"main.ts"}' },
      { type: 'function_call_output', call_id: 'call_1', output: longOutput },
      { role: 'assistant', content: 'Fixed it.', phase: 'final_answer' },
    ];
    const compacted = await json(await post(handler, '/responses/compact', { model: 'fake', input: history }));
    expect(compacted).toMatchObject({ object: 'response.compaction', created_at: expect.any(Number) });
    const output = compacted.output as Json[];
    expect(output).toHaveLength(1);
    expect(output[0]).toMatchObject({ type: 'compaction', id: expect.stringMatching(/^cmp_/) });
    expect(output[0]!.encrypted_content).not.toContain('main.ts');

    await json(await post(handler, '/responses', { input: [...history, { role: 'user', content: 'Thanks' }], store: false }));
    await json(await post(handler, '/responses', { input: [output[0], { role: 'user', content: 'Thanks' }], store: false }));
    const [full, short] = engine.requests;
    const fullTokens = await engine.tokenizePrompt(full!);
    const shortTokens = await engine.tokenizePrompt(short!);
    expect(shortTokens.length).toBeLessThan(fullTokens.length / 2);
    expect((compacted.usage as Json).input_tokens).toBeGreaterThan(shortTokens.length);
    const roles = short!.messages.map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(short!.messages[0]!.content).toBe('Fix the bug in main.ts');
    expect(short!.messages[1]!.tool_calls![0]!.function.name).toBe('read_file');
    expect(short!.messages[2]!.content).toMatch(/characters left out/);
    expect(JSON.stringify(short!.messages)).not.toContain('thinking thinking');
  });

  it('a tampered compaction is a 400 naming the item', async () => {
    const { handler } = setup([{ tokens: ['ok'] }]);
    const compacted = await json(await post(handler, '/responses/compact', { input: 'hello' }));
    const item = (compacted.output as Json[])[0]!;
    const blob = item.encrypted_content as string;
    const tampered = `${blob.slice(0, 20)}${blob[20] === 'A' ? 'B' : 'A'}${blob.slice(21)}`;
    const error = await json(await post(handler, '/responses', { input: [{ ...item, encrypted_content: tampered }] }), 400);
    expect(error.error).toMatchObject({ param: 'input[0].encrypted_content', code: 'invalid_encrypted_content' });
  });
});

describe('a store that fails', () => {
  function failingStore(): ResponseStore {
    const inner = createMemoryStore();
    return { ...inner, put: () => Promise.reject(new StoreError('quota exceeded', 'quota')) };
  }

  it('store:true gives a clear error, not an acknowledged response', async () => {
    const { handler } = setup([{ tokens: ['Hi.'] }], { store: failingStore() });
    const body = await json(await post(handler, '/responses', { input: 'hello' }), 507);
    expect(body.error).toEqual({
      message: 'The response was generated but could not be stored: quota exceeded',
      type: 'store_error',
      param: 'store',
      code: 'store_quota',
    });
  });

  it('a stream ends with response.failed that says it was not stored', async () => {
    const { handler } = setup([{ tokens: ['Hi.'] }], { store: failingStore() });
    const events = streamEvents(await (await post(handler, '/responses', { input: 'hello', stream: true })).text());
    const last = events.at(-1)!;
    expect(last.type).toBe('response.failed');
    expect('response' in last && last.response.error?.message).toBe('The response was generated but could not be stored: quota exceeded');
  });

  it('store:false does not touch the store', async () => {
    const { handler } = setup([{ tokens: ['Hi.'] }], { store: failingStore() });
    expect((await json(await post(handler, '/responses', { input: 'hello', store: false }))).status).toBe('completed');
  });
});

describe('failures outside generation', () => {
  it('an unreadable store is a clear 503 for GET and for previous_response_id', async () => {
    const inner = createMemoryStore();
    const store: ResponseStore = { ...inner, get: () => Promise.reject(new StoreError('IndexedDB is not available', 'unavailable')) };
    const { handler } = setup([], { store });
    for (const response of [await call(handler, 'GET', '/responses/resp_1'), await post(handler, '/responses', { input: 'x', previous_response_id: 'resp_1' })]) {
      const body = await json(response, 503);
      expect(body.error).toEqual({
        message: 'Response storage failed: IndexedDB is not available',
        type: 'store_error',
        param: 'store',
        code: 'store_unavailable',
      });
    }
  });

  it('an unexpected fault is a generic 500 without internals', async () => {
    const { handler, engine } = setup();
    engine.listModels = () => Promise.reject(new TypeError('secret internal detail'));
    const body = await json(await post(handler, '/responses', { input: 'x' }), 500);
    expect(body.error).toEqual({ message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: 'server_error' });
  });
});
