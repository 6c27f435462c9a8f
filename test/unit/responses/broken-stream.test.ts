// A response that breaks outside the engine after it was created — a fault writing its output (here sealing the
// reasoning, whose key the store cannot give), or an engine stream that ends without its `done` event — ends like
// an engine fault (CONTRACT.md "Streaming"): what is open closes `incomplete`, the response is `failed` with an
// OpenAI-shaped `error` ({code: 'server_error', message}) that blames no model for a fault outside it, it is stored
// (store: true) with that output, and a stream's terminal event is `response.failed` (never a bare `error` event).
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import type { ResponseStore } from '../../../src/store/types.ts';
import type { GenerateRequest, GenerationEvent } from '../../../src/engine/types.ts';
import { FakeEngine } from '../../support/fake-engine.ts';
import { call, post, setup, streamEvents } from './harness.ts';

function keylessStore(): ResponseStore {
  const store = createMemoryStore();
  return Object.assign(Object.create(store) as ResponseStore, {
    reasoningKey: () => Promise.reject(new Error('no key here')),
  });
}

const sealed = { input: 'Hi', include: ['reasoning.encrypted_content'] };
/** Reasoning the end of the output closes (sealing it is the last thing before the terminal event). */
const openReasoning = { tokens: ['<think>', 'Let me', ' think.'] };
/** Reasoning closed mid-stream, text after it. */
const closedReasoning = { tokens: ['<think>', 'Hm.', '</think>', 'Hello', ' there'] };

async function stored(handler: (r: Request) => Promise<Response>, id: string) {
  const response = await call(handler, 'GET', `/responses/${id}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('a stream broken outside the engine', () => {
  it('a fault closing the output at the end: response.failed last, the open item incomplete, the failed response stored', async () => {
    const { handler } = setup([openReasoning], { store: keylessStore() });
    const events = streamEvents(await (await post(handler, '/responses', { ...sealed, stream: true })).text());
    const last = events.at(-1)!;
    expect(last.type).toBe('response.failed');
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.filter((e) => e.type === 'response.failed' || e.type === 'response.completed' || e.type === 'response.incomplete')).toHaveLength(1);
    const response = (last as Extract<typeof last, { type: 'response.failed' }>).response;
    expect(response.status).toBe('failed');
    expect(response.error).toEqual({ code: 'server_error', message: expect.any(String) });
    expect(response.error!.message).not.toMatch(/model failed/i);
    // Nothing half-written: the reasoning item that was open is closed incomplete (without the seal that failed),
    // with its done event before the terminal one.
    expect(response.output).toEqual([expect.objectContaining({ type: 'reasoning', status: 'incomplete', content: [{ type: 'reasoning_text', text: 'Let me think.' }] })]);
    expect(response.output[0]).not.toHaveProperty('encrypted_content');
    expect(events.some((e) => e.type === 'response.output_item.done' && e.item.type === 'reasoning' && e.item.status === 'incomplete')).toBe(true);
    const got = await stored(handler, response.id);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: response.id, status: 'failed', error: response.error, output: JSON.parse(JSON.stringify(response.output)) });
  });

  it('the same request not streamed: a 5xx naming the stored failed response', async () => {
    const { handler } = setup([openReasoning], { store: keylessStore() });
    const answer = await post(handler, '/responses', sealed);
    expect(answer.status).toBe(500);
    const body = (await answer.json()) as { error: { message: string; type: string; code: string | null; param: string | null } };
    expect(body.error).toMatchObject({ type: 'server_error', code: 'server_error', param: null });
    const id = /The response '([^']+)' is stored with status 'failed'/.exec(body.error.message)?.[1];
    expect(id).toBeDefined();
    expect((await stored(handler, id!)).body).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
  });

  it('a fault writing the output mid-stream blames no model and keeps what was whole', async () => {
    const { handler } = setup([closedReasoning], { store: keylessStore() });
    const events = streamEvents(await (await post(handler, '/responses', { ...sealed, stream: true })).text());
    const last = events.at(-1)!;
    expect(last.type).toBe('response.failed');
    const response = (last as Extract<typeof last, { type: 'response.failed' }>).response;
    expect(response.error).toEqual({ code: 'server_error', message: expect.not.stringMatching(/model failed/i) });
    expect(response.output.every((item) => !('status' in item) || item.status !== 'in_progress')).toBe(true);
    expect((await stored(handler, response.id)).body).toMatchObject({ status: 'failed' });
  });

  it("an engine stream that ends without its done event: response.failed saying so, stored", async () => {
    const engine = new FakeEngine([{ tokens: ['Hello', ' there'] }]);
    const generate = engine.generate.bind(engine);
    engine.generate = async function* (req: GenerateRequest): AsyncIterable<GenerationEvent> {
      for await (const event of generate(req)) if (event.type !== 'done') yield event;
    };
    const { handler } = setup([], { engine });
    const events = streamEvents(await (await post(handler, '/responses', { input: 'Hi', stream: true })).text());
    const last = events.at(-1)!;
    expect(last.type).toBe('response.failed');
    const response = (last as Extract<typeof last, { type: 'response.failed' }>).response;
    expect(response.error).toEqual({ code: 'server_error', message: expect.stringMatching(/engine stopped without finishing/) });
    expect(response.output).toEqual([expect.objectContaining({ type: 'message', status: 'incomplete' })]);
    expect((await stored(handler, response.id)).body).toMatchObject({ status: 'failed', error: response.error });
  });
});
