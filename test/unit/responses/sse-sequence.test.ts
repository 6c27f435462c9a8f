// Every event of a stream carries a sequence_number, 0, 1, 2, … with no gap: the created/in_progress events, the
// item events and the terminal one. A stream that breaks outside the engine ends with `response.failed` like an engine
// fault (test/unit/responses/broken-stream.test.ts); the break is forced here by a store whose reasoning key cannot
// be had, so sealing the reasoning that the end of the output closes throws after events have gone out. The `error`
// event is kept for a stream the pipeline itself cannot finish: its frame carries the `openai` SDK's
// ResponseErrorEvent fields and the Open Responses document's `error` object, numbered after the last event sent.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import type { ResponseStore } from '../../../src/store/types.ts';
import { assertOpenResponsesEvent } from '../../support/open-responses-schema.ts';
import { sseErrorFrame } from '../../../src/responses/stream-events.ts';
import { parseSse, post, setup } from './harness.ts';

interface Frame {
  event: string;
  data: Record<string, unknown>;
}

function frames(text: string): Frame[] {
  return parseSse(text)
    .filter((m) => !m.comment)
    .map((m) => ({ event: m.event!, data: JSON.parse(m.data!) as Record<string, unknown> }));
}

function keylessStore(): ResponseStore {
  const store = createMemoryStore();
  return Object.assign(Object.create(store) as ResponseStore, {
    reasoningKey: () => Promise.reject(new Error('no key here')),
  });
}

/** Reasoning the output never closes: the end of the output closes it, and sealing it needs the key. */
const openReasoning = { tokens: ['<think>', 'Let me', ' think.'] };
const body = { input: 'Hi', include: ['reasoning.encrypted_content'], stream: true };

describe('sequence_number on every stream event', () => {
  it('a stream that breaks off outside the engine ends with response.failed numbered after the last event', async () => {
    const { handler } = setup([openReasoning], { store: keylessStore() });
    const all = frames(await (await post(handler, '/responses', body)).text());
    expect(all.length).toBeGreaterThan(3);
    const last = all.at(-1)!;
    expect(last.event).toBe('response.failed');
    expect(all.map((f) => f.data.sequence_number)).toEqual(all.map((_, i) => i));
    expect((last.data.response as { error: unknown }).error).toMatchObject({ code: 'server_error', message: expect.any(String) });
  });

  it('the openai SDK reads every event in order, response.failed last', async () => {
    const { handler } = setup([openReasoning], { store: keylessStore() });
    const client = new OpenAI({ apiKey: 'x', baseURL: 'http://local/v1', maxRetries: 0, fetch: (url, init) => handler(new Request(url, init)) });
    const seen: { n: number; type: string }[] = [];
    const stream = await client.responses.create({ model: 'fake-qwen3', input: 'Hi', include: ['reasoning.encrypted_content'], stream: true });
    for await (const event of stream) seen.push({ n: event.sequence_number, type: event.type });
    expect(seen.map((e) => e.n)).toEqual(seen.map((_, i) => i));
    expect(seen.length).toBeGreaterThan(2);
    expect(seen.at(-1)!.type).toBe('response.failed');
  });

  it('the error event (a stream the pipeline cannot finish): the SDK fields, the OpenAI body, the next number', () => {
    const error = { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: 'server_error' };
    const [frame] = parseSse(sseErrorFrame({ error }, 7));
    expect(frame!.event).toBe('error');
    const data = JSON.parse(frame!.data!) as Record<string, unknown>;
    expect(data).toEqual({ type: 'error', code: 'server_error', message: error.message, param: null, sequence_number: 7, error });
    assertOpenResponsesEvent(data, { documentOnly: true });
  });

  it('a normal stream: 0..n with the terminal event last', async () => {
    const { handler } = setup([{ tokens: ['<think>', 'Hm.', '</think>', 'Hello', ' there'] }]);
    const all = frames(await (await post(handler, '/responses', { ...body, include: [] })).text());
    expect(all.at(-1)!.event).toBe('response.completed');
    expect(all.map((f) => f.data.sequence_number)).toEqual(all.map((_, i) => i));
  });
});
