// Shared setup for the Responses core tests: the handler over the scripted fake engine and the memory store,
// deterministic ids and clock, and an `openai` SDK client whose fetch calls the handler directly.
// Every response object a test gets through `post`, `call`, the SDK client or `streamEvents` (JSON answers, and
// each stream event with the response snapshots it carries) is checked against the Open Responses schema
// (test/support/open-responses-schema.ts): a test whose flow answers a non-conforming object fails.
import OpenAI from 'openai';
import { createResponsesHandler, type ResponsesHandler } from '../../../src/responses/handler.ts';
import { StreamEvent } from '../../../src/responses/schema.ts';
import type { IdSource } from '../../../src/responses/stream-events.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import type { ResponseStore } from '../../../src/store/types.ts';
import type { ModelInfo } from '../../../src/engine/types.ts';
import { FakeEngine, type FakeScript } from '../../support/fake-engine.ts';
import { assertOpenResponsesEvent, assertOpenResponsesResponse } from '../../support/open-responses-schema.ts';

export const NOW = 1_700_000_000;

export function countingIds(): IdSource {
  let n = 0;
  return (prefix) => `${prefix}_${String(++n).padStart(6, '0')}`;
}

export interface Setup {
  engine: FakeEngine;
  store: ResponseStore;
  handler: ResponsesHandler;
  client: OpenAI;
}

export function setup(scripts: FakeScript[] = [], options: { store?: ResponseStore; keepAliveMs?: number; prefillProgressMs?: number; models?: ModelInfo[]; engine?: FakeEngine } = {}): Setup {
  const engine = options.engine ?? new FakeEngine(scripts, options.models);
  const store = options.store ?? createMemoryStore();
  const handler = createResponsesHandler({ engine, store, now: () => NOW, ids: countingIds(), keepAliveMs: options.keepAliveMs ?? 60_000, prefillProgressMs: options.prefillProgressMs });
  const client = new OpenAI({
    apiKey: 'x',
    baseURL: 'http://local/v1',
    maxRetries: 0,
    fetch: async (url, init) => conforming(await handler(new Request(url, init))),
  });
  return { engine, store, handler, client };
}

/**
 * A JSON answer that is a response object must conform to Open Responses (streams are checked by `streamEvents`:
 * reading a copy here would keep a stream alive after its reader cancelled it).
 */
export async function conforming(response: Response): Promise<Response> {
  if (response.status === 200 && (response.headers.get('content-type') ?? '').startsWith('application/json')) {
    const body: unknown = await response.clone().json();
    if (typeof body === 'object' && body !== null && (body as { object?: unknown }).object === 'response' && !('deleted' in body)) {
      assertOpenResponsesResponse(body);
    }
  }
  return response;
}

/** POST a JSON body to the handler. */
export async function post(handler: ResponsesHandler, path: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  const response = await handler(
    new Request(`http://local/v1${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      ...init,
    }),
  );
  return conforming(response);
}

export async function call(handler: ResponsesHandler, method: string, path: string): Promise<Response> {
  return conforming(await handler(new Request(`http://local/v1${path}`, { method })));
}

export interface SseMessage {
  event: string | null;
  data: string | null;
  comment: boolean;
}

/** Split an SSE body into its frames (comments kept apart, for keep-alive checks). */
export function parseSse(text: string): SseMessage[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.length > 0)
    .map((frame) => {
      if (frame.startsWith(':')) return { event: null, data: null, comment: true };
      const event = /^event: (.*)$/m.exec(frame)?.[1] ?? null;
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? null;
      return { event, data, comment: false };
    });
}

/** The stream events of an SSE body, each checked against the StreamEvent schema and its `event:` name. */
export function streamEvents(text: string): StreamEvent[] {
  return parseSse(text)
    .filter((m) => !m.comment)
    .map((m) => {
      const raw: unknown = JSON.parse(m.data!);
      assertOpenResponsesEvent(raw);
      const event = StreamEvent.parse(raw);
      if (event.type !== m.event) throw new Error(`SSE event name ${m.event} carries ${event.type}`);
      return event;
    });
}

/** JSON form without the fields the SDK adds on its side (output_text, parsed, parsed_arguments, output_parsed). */
export function canonical(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, v: unknown) =>
      key === 'output_text' || key === 'parsed' || key === 'parsed_arguments' || key === 'output_parsed' ? undefined : v,
    ),
  );
}
