// The Response object complete and normalized as the official API returns it, checked against the Open Responses
// schema (test/support/open-responses-schema.ts) on the events and answers of the main flows; reasoning summaries
// and reasoning.effort.
import { describe, expect, it } from 'vitest';
import type { ResponseObject, StreamEvent } from '../../../src/responses/schema.ts';
import { assertOpenResponsesEvent, assertOpenResponsesResponse } from '../../support/open-responses-schema.ts';
import { FAKE_MODEL } from '../../support/fake-engine.ts';
import { call, post, setup, streamEvents } from './harness.ts';

const weather = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

async function streamed(tokens: string[], body: Record<string, unknown>, models = [FAKE_MODEL]): Promise<StreamEvent[]> {
  const { handler } = setup([{ tokens }], { models });
  const response = await post(handler, '/responses', { ...body, stream: true });
  expect(response.status).toBe(200);
  return streamEvents(await response.text());
}

describe('the response object', () => {
  it('carries every field, normalized: usage null until known, tools with description/parameters/strict, text and reasoning defaults', async () => {
    const events = await streamed(['Sunny.'], { input: 'weather?', tools: [weather, { type: 'custom', name: 'patch' }] });
    const created = (events[0] as Extract<StreamEvent, { type: 'response.created' }>).response;
    expect(created.usage).toBeNull();
    expect(created).toMatchObject({
      presence_penalty: 0,
      frequency_penalty: 0,
      text: { format: { type: 'text' } },
      reasoning: { effort: null, summary: null },
      tool_choice: 'auto',
      truncation: 'disabled',
      service_tier: 'default',
      store: true,
      background: false,
      max_tool_calls: null,
      prompt_cache_key: null,
      safety_identifier: null,
      metadata: {},
      top_logprobs: 0,
    });
    expect(created.tools).toEqual([
      { type: 'function', name: 'get_weather', description: null, parameters: weather.parameters, strict: null },
      { type: 'custom', name: 'patch', format: { type: 'text' } },
    ]);
    const final = (events.at(-1) as Extract<StreamEvent, { type: 'response.completed' }>).response;
    expect(final.usage).toMatchObject({ output_tokens: 1, total_tokens: final.usage!.input_tokens + 1 });
  });

  it('echoes what was asked: effort, summary, verbosity, a JSON schema format with strict', async () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    const { handler } = setup([{ tokens: ['{"a": "x"}'] }]);
    const body = (await (
      await post(handler, '/responses', {
        input: 'json please',
        reasoning: { effort: 'low', generate_summary: 'concise' },
        text: { format: { type: 'json_schema', name: 'out', schema }, verbosity: 'high' },
      })
    ).json()) as ResponseObject;
    expect(body.reasoning).toEqual({ effort: 'low', summary: 'concise' });
    expect(body.text).toEqual({ format: { type: 'json_schema', name: 'out', schema, description: null, strict: true }, verbosity: 'high' });
  });

  it('the Open Responses check bites: the response object as it was before (issue 18) does not conform', () => {
    const before = {
      id: 'resp_1',
      object: 'response',
      created_at: 1,
      completed_at: null,
      status: 'in_progress',
      background: false,
      model: 'm',
      output: [],
      error: null,
      incomplete_details: null,
      instructions: null,
      tools: [{ type: 'function', name: 'f' }],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      previous_response_id: null,
      store: true,
      text: {},
      reasoning: null,
      temperature: 1,
      top_p: 1,
      top_logprobs: 0,
      max_output_tokens: null,
      max_tool_calls: null,
      metadata: {},
      truncation: 'disabled',
      service_tier: 'default',
      prompt_cache_key: null,
      safety_identifier: null,
    };
    expect(() => assertOpenResponsesResponse(before)).toThrow(/presence_penalty.*|usage|tools\.0|text\.format/);
    for (const field of ['presence_penalty', 'frequency_penalty', 'usage', 'tools.0', 'text.format']) {
      expect(() => assertOpenResponsesResponse(before)).toThrow(new RegExp(field.replace('.', '\\.')));
    }
    expect(() => assertOpenResponsesEvent({ type: 'response.output_text.delta', item_id: 'm', output_index: 0, content_index: 0, delta: 'x' })).toThrow(/sequence_number/);
  });

  it('every event and response of a reasoning + tool call + incomplete flow conforms (checked by the harness)', async () => {
    const events = await streamed(['<think>', 'plan', '</think>', 'Let me check.', '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'], {
      input: 'weather?',
      tools: [weather],
      include: ['reasoning.encrypted_content'],
    });
    expect(events.map((e) => e.type)).toContain('response.function_call_arguments.done');
    const cut = await streamed(['a', 'b', 'c', 'd'], { input: 'count', max_output_tokens: 2 });
    expect(cut.at(-1)!.type).toBe('response.incomplete');
  });
});

describe('a response stored by an older version', () => {
  it('reads back normalized (GET conforms to Open Responses)', async () => {
    const { handler, store } = setup();
    const old = {
      id: 'resp_old1',
      object: 'response',
      created_at: 1,
      completed_at: 2,
      status: 'completed',
      background: false,
      model: 'fake-qwen3',
      output: [{ id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hi', annotations: [] }], phase: 'final_answer' }],
      error: null,
      incomplete_details: null,
      instructions: null,
      tools: [{ type: 'function', name: 'f' }],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      previous_response_id: null,
      store: true,
      text: { format: { type: 'text' } },
      reasoning: null,
      temperature: 1,
      top_p: 1,
      top_logprobs: 0,
      max_output_tokens: null,
      max_tool_calls: null,
      metadata: {},
      truncation: 'disabled',
      service_tier: 'default',
      prompt_cache_key: null,
      safety_identifier: null,
    };
    await store.put({ id: 'resp_old1', response: old, history: [], inputItems: [], createdAt: 1 });
    const response = await call(handler, 'GET', '/responses/resp_old1');
    expect(response.status).toBe(200);
    const body = (await response.json()) as ResponseObject;
    expect(body).toMatchObject({ presence_penalty: 0, frequency_penalty: 0, usage: null, reasoning: { effort: null, summary: null } });
    expect(body.tools).toEqual([{ type: 'function', name: 'f', description: null, parameters: null, strict: null }]);
    expect(body.output).toEqual(old.output);
  });
});

describe('reasoning summaries', () => {
  const reasoning = 'First I read the question carefully. Then I add the two numbers. The sum is five, which I double check. Finally I answer.';

  it('reasoning.summary asks for one: the reasoning opening sentences, streamed as summary events', async () => {
    const long = `${reasoning} `.repeat(6);
    const events = await streamed(['<think>', long, '</think>', '5'], { input: '2+3?', reasoning: { summary: 'concise' } });
    const done = events.find((e) => e.type === 'response.output_item.done' && e.item.type === 'reasoning') as Extract<StreamEvent, { type: 'response.output_item.done' }>;
    const summary = (done.item as { summary: { text: string }[] }).summary;
    expect(summary).toHaveLength(1);
    expect(summary[0]!.text.length).toBeLessThanOrEqual(200);
    expect(summary[0]!.text.startsWith('First I read the question carefully.')).toBe(true);
    const deltas = events.flatMap((e) => (e.type === 'response.reasoning_summary_text.delta' ? [e.delta] : []));
    expect(deltas.join('')).toBe(summary[0]!.text);
    const types = events.map((e) => e.type);
    expect(types.indexOf('response.reasoning_summary_part.added')).toBeLessThan(types.indexOf('response.reasoning_summary_part.done'));
    const final = (events.at(-1) as Extract<StreamEvent, { type: 'response.completed' }>).response;
    expect(final.output[0]).toEqual(done.item);
  });

  it('without reasoning.summary the summary stays empty', async () => {
    const events = await streamed(['<think>', reasoning, '</think>', '5'], { input: '2+3?' });
    expect(events.some((e) => e.type.startsWith('response.reasoning_summary'))).toBe(false);
    const final = (events.at(-1) as Extract<StreamEvent, { type: 'response.completed' }>).response;
    expect(final.output[0]).toMatchObject({ type: 'reasoning', summary: [] });
  });
});

describe('reasoning.effort', () => {
  it('none and minimal turn thinking off; low and higher (or none given) leave it on', async () => {
    const efforts = [undefined, 'none', 'minimal', 'low', 'high'] as const;
    const { handler, engine } = setup(efforts.map(() => ({ tokens: ['ok'] })));
    for (const effort of efforts) {
      const body = (await (await post(handler, '/responses', { input: 'hi', ...(effort ? { reasoning: { effort } } : {}) })).json()) as ResponseObject;
      expect(body.reasoning.effort).toBe(effort ?? null);
    }
    expect(engine.requests.map((r) => r.enableThinking)).toEqual([true, false, false, true, true]);
  });
});
