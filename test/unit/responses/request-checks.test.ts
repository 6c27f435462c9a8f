// Every request check of the spec, before generation: status, type, param and message of each error, and that
// a rejected request neither reaches the engine nor is stored.
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/responses/schema.ts';
import { call, post, setup } from './harness.ts';

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

async function expectError(response: Response, status: number, param: string | null, message: string | RegExp): Promise<ErrorBody['error']> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/application\/json/);
  const body = (await response.json()) as ErrorBody;
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error.type).toBe('invalid_request_error');
  expect(body.error.param).toBe(param);
  if (typeof message === 'string') expect(body.error.message).toBe(message);
  else expect(body.error.message).toMatch(message);
  return body.error;
}

/** Post a create body that must be rejected before anything is generated or stored. */
async function rejected(body: unknown, status: number, param: string | null, message: string | RegExp): Promise<ErrorBody['error']> {
  const { handler, engine, store } = setup([{ tokens: ['never'] }]);
  const error = await expectError(await post(handler, '/responses', body), status, param, message);
  expect(engine.requests).toHaveLength(0);
  expect(await store.get('resp_000001')).toBeUndefined();
  return error;
}

const fn = { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false };
const custom = { type: 'custom', name: 'shell' };

describe('model validation', () => {
  it('an unknown model is a 404 with the exact message, never another model', async () => {
    const error = await rejected({ model: 'gpt-9', input: 'hi' }, 404, 'model', "The model 'gpt-9' does not exist");
    expect(error.code).toBe('model_not_found');
  });

  it('the id, an alias, or no model (the default) are served', async () => {
    for (const model of ['fake-qwen3', 'fake', undefined]) {
      const { handler, engine } = setup([{ tokens: ['ok'] }]);
      const response = await post(handler, '/responses', { model, input: 'hi' });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { model: string }).model).toBe('fake-qwen3');
      expect(engine.requests[0]!.model).toBe('fake-qwen3');
    }
  });
});

describe('tool_choice', () => {
  it('"required" without a function or custom tool is a 400', async () => {
    const message = 'tool_choice "required" needs at least one tool of type "function" or "custom"; other tool types cannot be forced.';
    await rejected({ input: 'hi', tool_choice: 'required', tools: [{ type: 'web_search' }] }, 400, 'tool_choice', message);
    await rejected({ input: 'hi', tool_choice: 'required' }, 400, 'tool_choice', message);
  });

  it('"required" with a custom tool is accepted and forces a call', async () => {
    const { handler, engine } = setup([{ tokens: ['<tool_call>{"name": "shell", "arguments": {"input": "ls"}}</tool_call>'] }]);
    const response = await post(handler, '/responses', { input: 'list', tool_choice: 'required', tools: [custom] });
    expect(response.status).toBe(200);
    expect(engine.requests[0]!.constraint).toMatchObject({ kind: 'tools', mode: 'required' });
  });

  it('a named tool must be declared, of that kind', async () => {
    await rejected({ input: 'hi', tool_choice: { type: 'function', name: 'nope' }, tools: [fn] }, 400, 'tool_choice', "Tool 'nope' is not declared in tools");
    await rejected({ input: 'hi', tool_choice: { type: 'function', name: 'shell' }, tools: [custom] }, 400, 'tool_choice', "Tool 'shell' is not declared in tools");
    await rejected({ input: 'hi', tool_choice: { type: 'custom', name: 'lookup' }, tools: [fn] }, 400, 'tool_choice', "Tool 'lookup' is not declared in tools");
  });

  it('a malformed tool_choice object names its field', async () => {
    await rejected({ input: 'hi', tool_choice: { type: 'function' }, tools: [fn] }, 400, 'tool_choice.name', /^Invalid 'tool_choice\.name': /);
  });

  it('a declared named tool becomes a named constraint; hosted forms are treated as auto', async () => {
    const { handler, engine } = setup([{ tokens: ['<tool_call>{"name": "lookup", "arguments": {}}</tool_call>'] }, { tokens: ['ok'] }]);
    expect((await post(handler, '/responses', { input: 'hi', tool_choice: { type: 'function', name: 'lookup' }, tools: [fn] })).status).toBe(200);
    expect(engine.requests[0]!.constraint).toMatchObject({ kind: 'tools', mode: 'named', name: 'lookup' });
    expect((await post(handler, '/responses', { input: 'hi', tool_choice: { type: 'file_search' }, tools: [fn, { type: 'file_search', vector_store_ids: [] }] })).status).toBe(200);
    // Auto mode with tools on offer always holds a call to a declared tool's name (the hosted tool is not one).
    expect(engine.requests[1]!.constraint).toMatchObject({ kind: 'tools', mode: 'auto', tools: [{ type: 'function', name: 'lookup' }] });
    expect(engine.requests[1]!.tools.map((t) => t.function.name)).toEqual(['lookup']);
  });

  it('auto mode constrains calls only for strict functions and custom grammars', async () => {
    const { handler, engine } = setup([{ tokens: ['ok'] }]);
    expect((await post(handler, '/responses', { input: 'hi', tools: [{ ...fn, strict: true }, custom] })).status).toBe(200);
    expect(engine.requests[0]!.constraint).toEqual({
      kind: 'tools',
      mode: 'auto',
      tools: [
        { type: 'function', name: 'lookup', parameters: fn.parameters, strict: true },
        { type: 'custom', name: 'shell' },
      ],
    });
  });
});

describe('previous_response_id', () => {
  it('must start with resp_', async () => {
    await rejected({ input: 'hi', previous_response_id: 'abc' }, 400, 'previous_response_id', "Invalid 'previous_response_id': 'abc'. Response ids start with 'resp_'.");
  });

  it('must exist', async () => {
    await rejected({ input: 'hi', previous_response_id: 'resp_missing' }, 404, 'previous_response_id', "Previous response with id 'resp_missing' not found.");
  });
});

describe('schema', () => {
  it('bad JSON is a 400', async () => {
    await rejected('{"input": ', 400, null, 'We could not parse the JSON body of your request. The body must be a JSON object.');
    await rejected('[1, 2]', 400, null, 'The request body must be a JSON object.');
  });

  it('no input at all is a 400', async () => {
    await rejected({ instructions: 'x' }, 400, 'input', 'The request has no input: send input, or continue with previous_response_id.');
    await rejected({ input: [] }, 400, 'input', 'The request has no input: send input, or continue with previous_response_id.');
  });

  it('a wrong type names the field', async () => {
    await rejected({ input: 'hi', temperature: 'hot' }, 400, 'temperature', /^Invalid 'temperature': /);
    await rejected({ input: 'hi', max_output_tokens: 0 }, 400, 'max_output_tokens', /^Invalid 'max_output_tokens': /);
    await rejected({ input: [{ role: 'user', content: 5 }] }, 400, 'input[0].content', /^Invalid 'input\[0\]\.content': /);
  });

  it('an unknown item type names the field', async () => {
    await rejected(
      { input: [{ role: 'user', content: 'hi' }, { type: 'telepathy', content: 'x' }] },
      400,
      'input[1].type',
      /^Invalid value 'telepathy' for 'input\[1\]\.type': expected one of 'message', 'function_call'/,
    );
  });

  it('a hosted tool item is refused by name; an item reference to no stored item is a 404', async () => {
    await rejected(
      { input: [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }] },
      400,
      'input[0].type',
      "Item type 'web_search_call' at 'input[0].type' is not supported by this runtime (it serves no hosted tools).",
    );
    await rejected({ input: [{ type: 'item_reference', id: 'msg_1' }] }, 404, 'input[0].id', "Item with id 'msg_1' not found.");
  });

  it('conversation objects and stored prompts are refused rather than ignored', async () => {
    await rejected({ input: 'hi', conversation: 'conv_1' }, 400, 'conversation', 'Conversations are not supported by this runtime; continue with previous_response_id.');
    await rejected({ input: 'hi', prompt: { id: 'pmpt_1' } }, 400, 'prompt', 'Stored prompt templates are not supported by this runtime; send input and instructions.');
  });

  it('an unknown tool type names the field', async () => {
    await rejected({ input: 'hi', tools: [{ type: 'teleport' }] }, 400, 'tools[0].type', /^Invalid value 'teleport' for 'tools\[0\]\.type'/);
  });

  it('oversize input is a 400 naming the field', async () => {
    const error = await rejected(
      { input: [{ role: 'user', content: 'x'.repeat(LIMITS.maxTextChars + 1) }] },
      400,
      'input[0].content',
      `'input[0].content' is too long: at most ${LIMITS.maxTextChars} characters.`,
    );
    expect(error.code).toBe('input_too_large');
    const { handler } = setup();
    const huge = new Request('http://local/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(LIMITS.maxBodyBytes + 1) },
      body: '{}',
    });
    await expectError(await handler(huge), 400, 'input', `The request body is larger than ${LIMITS.maxBodyBytes} bytes.`);
  });

  it('images are refused by this text-only runtime, naming the part', async () => {
    await rejected(
      { input: [{ role: 'user', content: [{ type: 'input_text', text: 'what is this' }, { type: 'input_image', image_url: 'data:,' }] }] },
      400,
      'input[0].content[1]',
      "Content of type 'input_image' in 'input[0].content[1]' is not supported: this runtime serves text-only models.",
    );
  });

  it('a tool output without its call is a 400 naming the call_id', async () => {
    await rejected(
      { input: [{ type: 'function_call_output', call_id: 'call_x', output: '42' }] },
      400,
      'input[0].call_id',
      "No tool call found for call_id 'call_x' in 'input[0]'.",
    );
  });
});

describe('constraints the engine cannot compile', () => {
  it('a bad JSON schema is a 400 before generation', async () => {
    await rejected(
      { input: 'hi', text: { format: { type: 'json_schema', name: 'x', schema: { type: 'blob' } } } },
      400,
      'text.format.schema',
      "Unsupported JSON schema type 'blob'.",
    );
  });

  it('a bad custom-tool grammar is a 400 before generation', async () => {
    await rejected(
      { input: 'hi', tools: [{ type: 'custom', name: 'r', format: { type: 'grammar', syntax: 'regex', definition: '([a-z' } }] },
      400,
      'tools',
      "The regex of custom tool 'r' does not compile.",
    );
    await rejected(
      { input: 'hi', tools: [{ type: 'custom', name: 'l', format: { type: 'grammar', syntax: 'lark', definition: 'x: "a"' } }] },
      400,
      'tools',
      "The Lark grammar of custom tool 'l' has no 'start' rule.",
    );
  });
});

describe('routes', () => {
  it('unknown route: 404 JSON; wrong method: 405 JSON', async () => {
    const { handler } = setup();
    const unknown = await call(handler, 'GET', '/nothing');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as ErrorBody).error.message).toBe('Unknown route: GET /v1/nothing');
    const wrong = await call(handler, 'GET', '/responses');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect(((await wrong.json()) as ErrorBody).error).toMatchObject({ code: 'method_not_allowed', type: 'invalid_request_error' });
  });

  it('GET /v1/models lists ids and aliases in the OpenAI list shape, and the SDK reads it', async () => {
    const { client } = setup();
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    const row = { object: 'model', created: 1_700_000_000, owned_by: 'webgpu-responses', aliases: ['fake'], status: 'loaded' };
    expect(models).toEqual([
      { id: 'fake-qwen3', ...row },
      { id: 'fake', ...row, alias_of: 'fake-qwen3' },
    ]);
  });

  it('POST /v1/responses/input_tokens counts the prompt the engine would get', async () => {
    const { client, engine } = setup();
    const counted = await client.responses.inputTokens.count({ model: 'fake', input: 'hello', instructions: 'Be brief.' });
    expect(counted.object).toBe('response.input_tokens');
    const tokens = await engine.tokenizePrompt({
      model: 'fake-qwen3',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello' },
      ],
      tools: [],
      enableThinking: true,
    });
    expect(counted.input_tokens).toBe(tokens.length);
  });
});
