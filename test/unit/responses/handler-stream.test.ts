// The handler end to end on the scripted fake engine: each scenario is answered four ways (non-streamed through
// the SDK, streamed as raw SSE checked event by event, streamed through the SDK's `responses.stream` and its
// `responses.create({stream: true})`), and the final responses must be the same.
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../src/engine/types.ts';
import type { ResponseObject, StreamEvent } from '../../../src/responses/schema.ts';
import { createResponsesHandler } from '../../../src/responses/handler.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import { FAKE_MODEL, FakeEngine, type FakeScript } from '../../support/fake-engine.ts';
import { canonical, countingIds, NOW, post, setup, streamEvents } from './harness.ts';

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};
const patchTool = { type: 'custom' as const, name: 'apply_patch', description: 'Apply a patch' };

/** Check the stream contract on raw events; returns the terminal response. */
function checkStream(events: StreamEvent[]): ResponseObject {
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  expect(events[0]!.type).toBe('response.created');
  expect(events[1]!.type).toBe('response.in_progress');
  const terminal = events[events.length - 1]!;
  expect(['response.completed', 'response.incomplete', 'response.failed']).toContain(terminal.type);
  const final = (terminal as Extract<StreamEvent, { type: 'response.completed' }>).response;
  expect(terminal.type).toBe(
    final.status === 'completed' ? 'response.completed' : final.status === 'failed' ? 'response.failed' : 'response.incomplete',
  );

  const added: string[] = [];
  const deltas = new Map<string, string>();
  for (const event of events) {
    if (event.type === 'response.output_item.added') {
      expect(event.output_index).toBe(added.length);
      added.push(event.item.id);
      deltas.set(event.item.id, '');
    }
    if ('item_id' in event && 'output_index' in event) expect(added[event.output_index]).toBe(event.item_id);
    if ('delta' in event && 'item_id' in event) deltas.set(event.item_id, deltas.get(event.item_id)! + event.delta);
    if (event.type === 'response.output_text.done' || event.type === 'response.reasoning_text.done') {
      expect(deltas.get(event.item_id)).toBe(event.text);
    }
    if (event.type === 'response.function_call_arguments.done') expect(deltas.get(event.item_id)).toBe(event.arguments);
    if (event.type === 'response.custom_tool_call_input.done') expect(deltas.get(event.item_id)).toBe(event.input);
    if (event.type === 'response.output_item.done') {
      const addedEvent = events.find((e) => e.type === 'response.output_item.added' && e.item.id === event.item.id);
      expect(addedEvent).toBeDefined();
      const before = (addedEvent as Extract<StreamEvent, { type: 'response.output_item.added' }>).item;
      if (before.type === 'message' && event.item.type === 'message') expect(event.item.phase).toBe(before.phase);
      expect(final.output[event.output_index]).toEqual(event.item);
    }
  }
  expect(final.output.map((item) => item.id)).toEqual(added);
  return final;
}

interface Answered {
  nonStreamed: unknown;
  streamed: ResponseObject;
  events: StreamEvent[];
}

/** Answer `body` with `script` four ways (SDK non-streamed, raw SSE, SDK `stream()`, SDK `create({stream})`); they must agree. */
async function answer(script: FakeScript, body: Record<string, unknown>): Promise<Answered> {
  const a = setup([script]);
  const nonStreamed = await a.client.responses.create({ ...body, stream: false } as never);

  const b = setup([script]);
  const response = await post(b.handler, '/responses', { ...body, stream: true });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events = streamEvents(await response.text());
  const streamed = checkStream(events);

  const c = setup([script]);
  const sdkStream = c.client.responses.stream(body as never);
  const seen: string[] = [];
  sdkStream.on('event', (event) => seen.push(event.type));
  const sdkFinal = await sdkStream.finalResponse();
  expect(seen).toEqual(events.map((e) => e.type));

  const d = setup([script]);
  let sdkTerminal: unknown = null;
  const sdkEvents = (await d.client.responses.create({ ...body, stream: true } as never)) as unknown as AsyncIterable<unknown>;
  for await (const event of sdkEvents) {
    const e = event as { type: string; response?: unknown };
    if (e.type === 'response.completed' || e.type === 'response.incomplete' || e.type === 'response.failed') sdkTerminal = e.response;
  }

  expect(canonical(streamed)).toEqual(canonical(nonStreamed));
  expect(canonical(sdkFinal)).toEqual(canonical(nonStreamed));
  expect(canonical(sdkTerminal)).toEqual(canonical(nonStreamed));
  return { nonStreamed, streamed, events };
}

describe('answers streamed and not streamed', () => {
  it('text only: one final_answer message that streams live', async () => {
    const { streamed, events } = await answer({ tokens: ['Hel', 'lo', ' world', '!'] }, { model: 'fake', input: 'Say hello' });
    expect(streamed.status).toBe('completed');
    expect(streamed.output).toHaveLength(1);
    const message = streamed.output[0]!;
    expect(message).toMatchObject({ type: 'message', role: 'assistant', status: 'completed', phase: 'final_answer' });
    expect(message.type === 'message' && message.content[0]!.text).toBe('Hello world!');
    expect(message.id).toMatch(/^msg_/);
    // Without tools the phase is known from the start: one delta per token.
    expect(events.filter((e) => e.type === 'response.output_text.delta').map((e) => 'delta' in e && e.delta)).toEqual(['Hel', 'lo', ' world', '!']);
    expect(streamed.usage).toMatchObject({ output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 } });
    expect(streamed.usage!.input_tokens).toBeGreaterThan(0);
    expect(streamed.usage!.total_tokens).toBe(streamed.usage!.input_tokens + 4);
    expect(streamed.model).toBe('fake-qwen3');
  });

  it('reasoning then text', async () => {
    const tokens = ['<think>', '\nLet me', ' add.', '\n</think>', '\n\nIt is', ' 4.'];
    const { streamed } = await answer({ tokens }, { input: '2+2?' });
    expect(streamed.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    const [reasoning, message] = streamed.output;
    expect(reasoning).toMatchObject({ type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'Let me add.' }], status: 'completed' });
    expect(reasoning!.id).toMatch(/^rs_/);
    expect(message).toMatchObject({ phase: 'final_answer', content: [{ text: 'It is 4.' }] });
    expect(streamed.usage!.output_tokens_details.reasoning_tokens).toBe(4);
  });

  it('text then a tool call: the text is commentary', async () => {
    const tokens = ['I will check', ' the weather.', '\n<tool_call>', '\n{"name": "get_weather", ', '"arguments": {"city": ', '"Paris"}}', '\n</tool_call>'];
    const { streamed } = await answer({ tokens }, { input: 'Weather in Paris?', tools: [weatherTool] });
    expect(streamed.output.map((i) => i.type)).toEqual(['message', 'function_call']);
    expect(streamed.output[0]).toMatchObject({ phase: 'commentary', content: [{ text: 'I will check the weather.' }] });
    const call = streamed.output[1]!;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city": "Paris"}', status: 'completed' });
    expect(call.type === 'function_call' && call.call_id).toMatch(/^call_/);
    expect(call.id).toMatch(/^fc_/);
  });

  it('a final answer after tools were offered is held until the turn ends, then is final_answer', async () => {
    const { streamed, events } = await answer({ tokens: ['No', ' tool', ' needed.'] }, { input: 'hi', tools: [weatherTool] });
    expect(streamed.output[0]).toMatchObject({ phase: 'final_answer', content: [{ text: 'No tool needed.' }] });
    const added = events.find((e) => e.type === 'response.output_item.added');
    expect(added && 'item' in added && added.item.type === 'message' && added.item.phase).toBe('final_answer');
  });

  it('several tool calls in one turn are parallel calls', async () => {
    const tokens = [
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
      '\n<tool_call>\n{"name": "get_weather", "arguments": ',
      '{"city": "Rome"}}\n</tool_call>',
    ];
    const { streamed } = await answer({ tokens }, { input: 'Paris and Rome?', tools: [weatherTool] });
    expect(streamed.output.map((i) => i.type === 'function_call' && i.arguments)).toEqual(['{"city": "Paris"}', '{"city": "Rome"}']);
    const ids = streamed.output.map((i) => i.type === 'function_call' && i.call_id);
    expect(new Set(ids).size).toBe(2);
  });

  it('a custom tool input with quotes, backslashes, \\u escapes and an emoji split across tokens', async () => {
    const input = 'say "hi" \\ C:\\dir\n\tcafé 😀 end';
    // The model writes the shim's JSON with the emoji as a \u surrogate pair, cut at awkward places.
    const tokens = [
      '<tool_call>{"name": "apply_patch", "arguments": {"input": "say \\"',
      'hi\\" \\\\',
      ' C:\\\\dir\\n\\tcaf\\u00',
      'e9 \\ud83',
      'd\\ude',
      '00 end"}}</tool_call>',
    ];
    const { streamed, events } = await answer({ tokens }, { input: 'patch it', tools: [patchTool] });
    expect(streamed.output).toHaveLength(1);
    const item = streamed.output[0]!;
    expect(item).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input });
    expect(item.id).toMatch(/^ctc_/);
    const deltas = events.filter((e) => e.type === 'response.custom_tool_call_input.delta').map((e) => ('delta' in e ? e.delta : ''));
    expect(deltas.join('')).toBe(input);
    // No delta carries half of a surrogate pair.
    for (const delta of deltas) expect(delta).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  it('max_output_tokens reached inside a tool call: incomplete, the call closed incomplete', async () => {
    const tokens = ['<tool_call>', '{"name": "get_weather", ', '"arguments": {"city": ', '"Par', 'is"}}', '</tool_call>'];
    const { streamed } = await answer({ tokens }, { input: 'Weather?', tools: [weatherTool], max_output_tokens: 4 });
    expect(streamed.status).toBe('incomplete');
    expect(streamed.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(streamed.output).toHaveLength(1);
    expect(streamed.output[0]).toMatchObject({ type: 'function_call', status: 'incomplete', arguments: '{"city": "Par' });
    expect(streamed.usage!.output_tokens).toBe(4);
  });
});

describe('engine fault', () => {
  const script: FakeScript = { tokens: ['Par', 'tial', ' answer', ' never'], failAt: 2 };

  it('streams response.failed with an error, closing the open item incomplete', async () => {
    const { handler } = setup([script]);
    const events = streamEvents(await (await post(handler, '/responses', { input: 'x', stream: true })).text());
    const final = checkStream(events);
    expect(events[events.length - 1]!.type).toBe('response.failed');
    expect(final.status).toBe('failed');
    expect(final.error).toEqual({ code: 'server_error', message: 'The model failed while generating this response.' });
    expect(final.output[0]).toMatchObject({ type: 'message', status: 'incomplete', content: [{ text: 'Partial' }] });
  });

  it('answers a non-streamed request with a 500 error body, never a 200 or a stack', async () => {
    const { handler, store } = setup([script]);
    const response = await post(handler, '/responses', { input: 'x' });
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body.error).toEqual({
      message: "The model failed while generating this response. The response 'resp_000001' is stored with status 'failed'.",
      type: 'server_error',
      param: null,
      code: 'server_error',
    });
    expect(JSON.stringify(body)).not.toMatch(/at .*\.ts/);
    // The failed response is on record as failed, not completed, under the id the error names (issue 22 item 8).
    const id = /'(resp_[0-9]+)'/.exec(String(body.error.message))![1]!;
    const stored = await (await handler(new Request(`http://local/v1/responses/${id}`))).json();
    expect(stored).toMatchObject({ id, status: 'failed', error: { code: 'server_error' } });
    expect((await store.get(id))?.response.status).toBe('failed');
  });

  it('store:false: the 500 names the response and says nothing was stored', async () => {
    const { handler, store } = setup([script]);
    const response = await post(handler, '/responses', { input: 'x', store: false });
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toBe("The model failed while generating this response. (response 'resp_000001', not stored: store is false)");
    expect(await store.get('resp_000001')).toBeUndefined();
  });

  it('the SDK stream surfaces the failed response without a protocol error', async () => {
    const { client } = setup([script]);
    const final = await client.responses.stream({ model: 'fake', input: 'x' }).finalResponse();
    expect(final.status).toBe('failed');
  });
});

describe('client abort', () => {
  it('stops generation and leaves the stored response cancelled, never completed', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const tokens = Array.from({ length: 50 }, (_, i) => `t${i} `);
    const { client, store, engine } = setup([{ tokens, gate }]);
    const abort = new AbortController();
    const stream = await client.responses.create({ model: 'fake', input: 'long', stream: true }, { signal: abort.signal });
    let id = '';
    let deltas = 0;
    const types: string[] = [];
    // The SDK ends the iteration quietly when its own signal aborts it.
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.created') {
        id = event.response.id;
        release();
      }
      if (event.type === 'response.output_text.delta' && ++deltas === 3) abort.abort();
    }
    expect(types).not.toContain('response.completed');
    // The generation sees the abort and finishes as cancelled; wait for its record.
    let record = await store.get(id);
    for (let i = 0; i < 200 && record === undefined; i++) {
      await new Promise((r) => setTimeout(r, 5));
      record = await store.get(id);
    }
    expect(record?.response.status).toBe('cancelled');
    expect(engine.requests[0]!.signal?.aborted).toBe(true);
    const output = record!.response.output as { status: string; content: { text: string }[] }[];
    expect(output[0]!.status).toBe('incomplete');
    expect(output[0]!.content[0]!.text.split(' ').length).toBeLessThan(50);
  });
});

describe('keep-alive', () => {
  it('sends SSE comments during prefill, which the SDK ignores', async () => {
    const { handler } = setup([{ tokens: ['ok'], prefillSteps: 3 }]);
    const text = await (await post(handler, '/responses', { input: 'x', stream: true })).text();
    expect(text.match(/^: keep-alive$/gm)?.length).toBe(3);
    expect(streamEvents(text).at(-1)!.type).toBe('response.completed');
  });

  it('a long prefill also sends response.in_progress events (clients whose idle timer counts only events, as Codex does, see activity)', async () => {
    const { handler } = setup([{ tokens: ['ok'], prefillSteps: 4 }], { prefillProgressMs: 0 });
    const events = streamEvents(await (await post(handler, '/responses', { input: 'x', stream: true })).text());
    checkStream(events);
    // created, in_progress, then one in_progress per prefill step before any output.
    expect(events.slice(0, 6).map((e) => e.type)).toEqual(['response.created', ...Array(5).fill('response.in_progress')]);
    expect(events.filter((e) => e.type === 'response.in_progress').every((e) => (e as { response: { status: string } }).response.status === 'in_progress')).toBe(true);
    expect(events.at(-1)!.type).toBe('response.completed');
  });

  it('by default at most one progress event per 5 s: a short prefill sends only comments', async () => {
    const { handler } = setup([{ tokens: ['ok'], prefillSteps: 4 }]);
    const events = streamEvents(await (await post(handler, '/responses', { input: 'x', stream: true })).text());
    expect(events.filter((e) => e.type === 'response.in_progress')).toHaveLength(1);
  });
});

describe('engine errors with an HTTP meaning', () => {
  const tooLong = (): FakeScript => ({ tokens: ['x'], failAt: 0, fault: new EngineError('invalid_request', 'The prompt is 9000 tokens; this model takes 4096.', { code: 'context_length_exceeded', param: 'input' }) });

  it('a non-streamed request gets the engine status and message, and nothing is stored', async () => {
    const { handler, store } = setup([tooLong()]);
    const response = await post(handler, '/responses', { input: 'x' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { message: 'The prompt is 9000 tokens; this model takes 4096.', type: 'invalid_request_error', param: 'input', code: 'context_length_exceeded' },
    });
    expect(await store.get('resp_000001')).toBeUndefined();
  });

  it('a stream ends with response.failed carrying it as invalid_prompt', async () => {
    const { handler } = setup([tooLong()]);
    const events = streamEvents(await (await post(handler, '/responses', { input: 'x', stream: true })).text());
    const final = checkStream(events);
    expect(final.error).toEqual({ code: 'invalid_prompt', message: 'The prompt is 9000 tokens; this model takes 4096.' });
  });
});

describe('keep-alive timer', () => {
  it('sends comments while the engine is silent', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { handler } = setup([{ tokens: ['ok'], gate }], { keepAliveMs: 1 });
    const response = await post(handler, '/responses', { input: 'x', stream: true });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes(': keep-alive')) text += decoder.decode((await reader.read()).value, { stream: true });
    release();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(streamEvents(text).at(-1)!.type).toBe('response.completed');
  });
});

describe('parallel_tool_calls and max_tool_calls', () => {
  it('false keeps only the first call of a turn', async () => {
    const tokens = ['<tool_call>{"name": "get_weather", "arguments": {"city": "A"}}</tool_call>', '<tool_call>{"name": "get_weather", "arguments": {"city": "B"}}</tool_call>'];
    const { streamed } = await answer({ tokens }, { input: 'x', tools: [weatherTool], parallel_tool_calls: false });
    expect(streamed.output.map((i) => i.type === 'function_call' && i.arguments)).toEqual(['{"city": "A"}']);
    expect(streamed.parallel_tool_calls).toBe(false);
  });

  it('max_tool_calls caps the calls kept', async () => {
    const call = (city: string) => `<tool_call>{"name": "get_weather", "arguments": {"city": "${city}"}}</tool_call>`;
    const { streamed } = await answer({ tokens: [call('A'), call('B'), call('C')] }, { input: 'x', tools: [weatherTool], max_tool_calls: 2 });
    expect(streamed.output.map((i) => i.type === 'function_call' && i.arguments)).toEqual(['{"city": "A"}', '{"city": "B"}']);
  });
});

describe('engine edge cases', () => {
  it('a template that opens the think block in the prompt: output starts as reasoning', async () => {
    const model = { ...FAKE_MODEL, markers: { ...FAKE_MODEL.markers, promptOpensThink: true } };
    const engine = new FakeEngine([{ tokens: ['weigh', ' it', '</think>', 'Yes.'] }, { tokens: ['Yes.'] }], [model]);
    const handler = createResponsesHandler({ engine, store: createMemoryStore(), ids: countingIds(), now: () => NOW });
    const thinking = (await (await post(handler, '/responses', { input: 'x' })).json()) as ResponseObject;
    expect(thinking.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
    expect(thinking.usage!.output_tokens_details.reasoning_tokens).toBe(3);
    // With thinking off the template does not open the block: the same words are plain text.
    const plain = (await (await post(handler, '/responses', { input: 'x', reasoning: { effort: 'none' } })).json()) as ResponseObject;
    expect(plain.output.map((i) => i.type)).toEqual(['message']);
  });

  it('an engine that stops without its done event fails the response', async () => {
    const engine = new FakeEngine();
    engine.generate = async function* () {
      yield { type: 'token' as const, id: 1, text: 'half' };
    };
    const handler = createResponsesHandler({ engine, store: createMemoryStore(), ids: countingIds(), now: () => NOW });
    const events = streamEvents(await (await post(handler, '/responses', { input: 'x', stream: true })).text());
    expect(checkStream(events).status).toBe('failed');
  });
});
