// Every event of a stream carries a sequence_number, 0, 1, 2, … with no gap: the created/in_progress events, the
// item events, the terminal one, and an `error` event when the stream breaks off (it follows the last event
// sent, with the `openai` SDK's ResponseErrorEvent fields and the Open Responses document's `error` object). The break is forced here by a store whose
// reasoning key cannot be had, so sealing the reasoning that the end of the output closes throws after events
// have gone out.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import type { ResponseStore } from '../../../src/store/types.ts';
import { assertOpenResponsesEvent } from '../../support/open-responses-schema.ts';
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
  it('a stream that breaks off ends with an error event numbered after the last event', async () => {
    const { handler } = setup([openReasoning], { store: keylessStore() });
    const all = frames(await (await post(handler, '/responses', body)).text());
    expect(all.length).toBeGreaterThan(3);
    const last = all.at(-1)!;
    expect(last.event).toBe('error');
    expect(last.data).toMatchObject({ type: 'error', message: expect.any(String) });
    expect('code' in last.data && 'param' in last.data).toBe(true);
    expect(all.map((f) => f.data.sequence_number)).toEqual(all.map((_, i) => i));
    // The OpenAI error body is there too, as the Open Responses document's error event carries it.
    expect(last.data.error).toMatchObject({ message: last.data.message, type: expect.any(String) });
    assertOpenResponsesEvent(last.data, { documentOnly: true });
  });

  it('the openai SDK reads the error event as an error after the events before it', async () => {
    const { handler } = setup([openReasoning], { store: keylessStore() });
    const client = new OpenAI({ apiKey: 'x', baseURL: 'http://local/v1', maxRetries: 0, fetch: (url, init) => handler(new Request(url, init)) });
    const seen: number[] = [];
    await expect(
      (async () => {
        const stream = await client.responses.create({ model: 'fake-qwen3', input: 'Hi', include: ['reasoning.encrypted_content'], stream: true });
        for await (const event of stream) seen.push(event.sequence_number);
      })(),
    ).rejects.toThrow();
    expect(seen).toEqual(seen.map((_, i) => i));
    expect(seen.length).toBeGreaterThan(2);
  });

  it('a normal stream: 0..n with the terminal event last', async () => {
    const { handler } = setup([{ tokens: ['<think>', 'Hm.', '</think>', 'Hello', ' there'] }]);
    const all = frames(await (await post(handler, '/responses', { ...body, include: [] })).text());
    expect(all.at(-1)!.event).toBe('response.completed');
    expect(all.map((f) => f.data.sequence_number)).toEqual(all.map((_, i) => i));
  });
});
