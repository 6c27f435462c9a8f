// The input items and tools real clients send: Codex's `additional_tools` items and `namespace` tools, the AI
// SDK's `item_reference` items, the request fields Codex, the AI SDK and the Agents SDK send, and an over-long
// prompt refused before any stream starts.
import { describe, expect, it } from 'vitest';
import type { ResponseObject } from '../../../src/responses/schema.ts';
import { FAKE_MODEL } from '../../support/fake-engine.ts';
import { call, post, setup, streamEvents } from './harness.ts';

type ErrorBody = { error: { message: string; type: string; param: string | null; code: string | null } };

const jsParameters = { type: 'object', properties: { code: { type: 'string' } }, required: ['code'], additionalProperties: false };

/** The shape of Codex's first request for a code-mode model (recorded from Codex CLI 0.171, texts shortened). */
function codexFirstRequest(): Record<string, unknown> & { input: unknown[] } {
  return {
    model: 'fake-qwen3',
    instructions: 'You are Codex, a coding agent. Keep going until the task is done.',
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>sandbox: workspace-write</permissions instructions>' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context><cwd>/work</cwd></environment_context>' }] },
      {
        type: 'additional_tools',
        role: 'developer',
        tools: [
          {
            type: 'namespace',
            name: 'functions',
            description: 'Tools of the code mode.',
            tools: [
              { type: 'custom', name: 'exec', description: 'Run JavaScript.', format: { type: 'grammar', syntax: 'lark', definition: 'start: /[\\s\\S]+/' } },
              { type: 'function', name: 'wait', description: 'Wait for a cell.', strict: false, parameters: { type: 'object', properties: { cell_id: { type: 'string' } } } },
            ],
          },
          { type: 'namespace', name: 'mcp__node_repl', description: 'Use `js` to run JavaScript in a Node kernel.', tools: [{ type: 'function', name: 'js', strict: false, parameters: jsParameters }] },
          { type: 'web_search', external_web_access: false },
        ],
      },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list the files' }] },
    ],
    tools: [],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: '0199a7c4-5b7e-7d30-9d5e-8f1e2a3b4c5d',
    text: { verbosity: 'low' },
    client_metadata: { 'x-codex-turn-metadata': '{"turn_id":"t1"}' },
    service_tier: 'auto',
  };
}

describe('Codex: additional_tools and namespace tools', () => {
  it("Codex's first request of a code-mode model is answered 200; its tools join the request's under qualified names", async () => {
    const { handler, engine } = setup([{ tokens: ['<tool_call>{"name": "exec", "arguments": {"input": "ls"}}</tool_call>'] }]);
    const response = await post(handler, '/responses', codexFirstRequest());
    expect(response.status).toBe(200);
    const events = streamEvents(await response.text());
    const final = (events.at(-1) as { response: ResponseObject }).response;
    expect(final.status).toBe('completed');
    // The functions namespace keeps plain names; mcp__node_repl's js is offered as Codex flattens it.
    expect(engine.requests[0]!.tools.map((t) => t.function.name)).toEqual(['exec', 'wait', 'mcp__node_repl__js']);
    expect(engine.requests[0]!.tools[0]!.function.description).toContain('Tools of the code mode.');
    expect(engine.requests[0]!.constraint).toMatchObject({ kind: 'tools', mode: 'auto' });
    // A member of `functions` comes back without a namespace (Codex applies its default one).
    expect(final.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', name: 'exec', input: 'ls' })]);
    expect(final.output[0]).not.toHaveProperty('namespace');
    // The additional tools are echoed among the response's tools; the item itself is no chat message.
    expect(final.tools.map((t) => t.type)).toEqual(['namespace', 'namespace', 'web_search']);
    expect(engine.requests[0]!.messages.map((m) => m.role)).toEqual(['system', 'system', 'user', 'user']);
  });

  it('a call to a namespace member comes back as {name, namespace}, and replays under the qualified name', async () => {
    const { handler, engine } = setup([
      { tokens: ['<tool_call>{"name": "mcp__node_repl__js", "arguments": {"code": "1+1"}}</tool_call>'] },
      { tokens: ['It is 2.'] },
    ]);
    const body = { ...codexFirstRequest(), stream: false };
    const first = (await (await post(handler, '/responses', body)).json()) as ResponseObject;
    const callItem = first.output[0]!;
    expect(callItem).toMatchObject({ type: 'function_call', name: 'js', namespace: 'mcp__node_repl', arguments: '{"code": "1+1"}' });

    const input = [...body.input, callItem, { type: 'function_call_output', call_id: (callItem as { call_id: string }).call_id, output: '2' }];
    expect((await post(handler, '/responses', { ...body, input })).status).toBe(200);
    const replay = engine.requests[1]!.messages;
    const assistant = replay.find((m) => m.role === 'assistant')!;
    expect(assistant.tool_calls![0]!.function.name).toBe('mcp__node_repl__js');
    expect(replay.at(-1)).toMatchObject({ role: 'tool', name: 'mcp__node_repl__js', content: '2' });
  });

  it('additional_tools count against the tool bound', async () => {
    const many = Array.from({ length: 300 }, (_, i) => ({ type: 'function', name: `f${i}` }));
    const response = await post(setup().handler, '/responses', {
      input: [
        { type: 'additional_tools', role: 'developer', tools: many },
        { type: 'additional_tools', role: 'developer', tools: many },
      ],
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error.param).toBe('input[1].tools');
  });
});

describe('AI SDK: item_reference', () => {
  const calculator = { type: 'function', name: 'calculator', parameters: { type: 'object', properties: { expression: { type: 'string' } } }, strict: false };
  const step1 = '<think>add them</think><tool_call>{"name": "calculator", "arguments": {"expression": "2+3"}}</tool_call>';

  it('step 2 of a tool loop references step 1 items by id: resolved from the store, the same prompt as sending them', async () => {
    const { handler, engine } = setup([{ tokens: [step1] }, { tokens: ['5'] }, { tokens: ['5'] }]);
    const first = (await (await post(handler, '/responses', { input: 'What is 2+3?', tools: [calculator] })).json()) as ResponseObject;
    const [reasoning, fc] = first.output as unknown as [{ id: string }, { id: string; call_id: string }];
    expect(first.output.map((i) => i.type)).toEqual(['reasoning', 'function_call']);

    const output = { type: 'function_call_output', call_id: fc.call_id, output: '5' };
    const byReference = await post(handler, '/responses', {
      input: [{ role: 'user', content: 'What is 2+3?' }, { type: 'item_reference', id: reasoning.id }, { type: 'item_reference', id: fc.id }, output],
      tools: [calculator],
    });
    expect(byReference.status).toBe(200);
    await post(handler, '/responses', { input: [{ role: 'user', content: 'What is 2+3?' }, ...first.output, output], tools: [calculator] });
    const [, referenced, inline] = engine.requests;
    expect(referenced!.messages).toEqual(inline!.messages);
    expect(referenced!.messages[1]).toMatchObject({ role: 'assistant', reasoning_content: 'add them', tool_calls: [{ function: { name: 'calculator' } }] });
    // input_items lists the resolved items, not the references.
    const listed = (await (await call(handler, 'GET', `/responses/${((await byReference.json()) as ResponseObject).id}/input_items?order=asc`)).json()) as { data: { type: string }[] };
    expect(listed.data.map((i) => i.type)).toEqual(['message', 'reasoning', 'function_call', 'function_call_output']);
  });

  it('an input item listed by input_items can be referenced too', async () => {
    const { handler, engine } = setup([{ tokens: ['ok'] }, { tokens: ['ok'] }]);
    const first = (await (await post(handler, '/responses', { input: 'remember me' })).json()) as ResponseObject;
    const listed = (await (await call(handler, 'GET', `/responses/${first.id}/input_items`)).json()) as { data: { id: string }[] };
    expect((await post(handler, '/responses', { input: [{ type: 'item_reference', id: listed.data[0]!.id }] })).status).toBe(200);
    expect(engine.requests[1]!.messages).toEqual([{ role: 'user', content: 'remember me' }]);
  });

  it('an unknown id is a 404 naming the item; so is one whose response was deleted', async () => {
    const { handler, store } = setup([{ tokens: ['ok'] }]);
    const unknown = await post(handler, '/responses', { input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'rs_nope' }] });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as ErrorBody).error).toMatchObject({ param: 'input[1].id', message: "Item with id 'rs_nope' not found." });

    const first = (await (await post(handler, '/responses', { input: 'hi' })).json()) as ResponseObject;
    expect((await call(handler, 'DELETE', `/responses/${first.id}`)).status).toBe(200);
    const gone = await post(handler, '/responses', { input: [{ type: 'item_reference', id: first.output[0]!.id }] });
    expect(gone.status).toBe(404);
    expect(await store.get('resp_000003')).toBeUndefined();
  });

  it('an item of a store:false response is a 400 naming the item and what to send instead', async () => {
    const { handler } = setup([{ tokens: [step1] }]);
    const first = (await (await post(handler, '/responses', { input: 'What is 2+3?', tools: [calculator], store: false })).json()) as ResponseObject;
    const id = first.output[0]!.id;
    const response = await post(handler, '/responses', { input: [{ role: 'user', content: 'What is 2+3?' }, { type: 'item_reference', id }], tools: [calculator] });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as ErrorBody;
    expect(error.param).toBe('input[1].id');
    expect(error.code).toBe('item_not_stored');
    expect(error.message).toContain(`'${id}'`);
    expect(error.message).toContain('store:false');
  });
});

describe('an over-long prompt', () => {
  it('is a 400 context_length_exceeded before any stream starts, streamed or not, and nothing is stored', async () => {
    const small = { ...FAKE_MODEL, contextLength: 64 };
    const { handler, engine, store } = setup([{ tokens: ['never'] }, { tokens: ['never'] }], { models: [small] });
    for (const stream of [true, false]) {
      const response = await post(handler, '/responses', { input: 'x'.repeat(200), stream });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/application\/json/);
      const { error } = (await response.json()) as ErrorBody;
      expect(error).toMatchObject({ code: 'context_length_exceeded', param: 'input', type: 'invalid_request_error' });
      expect(error.message).toMatch(/context is 64 tokens/);
    }
    expect(engine.requests).toHaveLength(0);
    expect(await store.get('resp_000001')).toBeUndefined();
  });
});

describe('the request fields real clients send are accepted', () => {
  it('Codex, the AI SDK and the Agents SDK bodies are answered 200', async () => {
    const codex = { ...codexFirstRequest(), stream: false };
    const aiSdk = {
      model: 'fake',
      input: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      temperature: 0.3,
      top_p: 0.9,
      max_output_tokens: 100,
      store: true,
      include: ['reasoning.encrypted_content'],
      reasoning: { effort: 'low', summary: 'auto' },
      text: { format: { type: 'text' }, verbosity: 'medium' },
      tools: [{ type: 'function', name: 'calculator', description: 'math', parameters: { type: 'object', properties: {} }, strict: false }],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      metadata: { app: 'demo' },
      prompt_cache_key: 'k',
      safety_identifier: 'user-1',
      service_tier: 'default',
      user: 'u',
      truncation: 'disabled',
      max_tool_calls: 5,
      top_logprobs: 0,
      stream: false,
    };
    const agents = {
      model: 'fake',
      instructions: 'You are a helpful agent.',
      input: [{ type: 'message', role: 'user', content: 'hi' }],
      tools: [{ type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, strict: true }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      truncation: 'auto',
      store: true,
      previous_response_id: null,
      prompt_cache_retention: 'in_memory',
      stream_options: { include_obfuscation: false },
      text: { format: { type: 'text' } },
      reasoning: null,
      include: [],
      stream: false,
    };
    const { handler } = setup([{ tokens: ['a'] }, { tokens: ['b'] }, { tokens: ['c'] }]);
    for (const body of [codex, aiSdk, agents]) {
      const response = await post(handler, '/responses', body);
      expect(response.status, JSON.stringify(await response.clone().json())).toBe(200);
    }
  });
});
