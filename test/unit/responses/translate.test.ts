// Translation into the model's chat and replay: continuing by previous_response_id and resending the same items
// by hand build the same prompt tokens (tool calls, custom tool calls and reasoning in the history); instructions
// are not inherited; developer tier; the custom-tool shim; encrypted reasoning replay and its rejections.
import { describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../../../src/engine/types.ts';
import { createAesGcmSealer } from '../../../src/responses/reasoning-seal.ts';
import { DEVELOPER_LABEL } from '../../../src/responses/translate.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import { createResponsesHandler } from '../../../src/responses/handler.ts';
import { FAKE_MODEL, FakeEngine, type FakeScript } from '../../support/fake-engine.ts';
import { countingIds, NOW, post, setup } from './harness.ts';

const tools = [
  { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
  { type: 'custom', name: 'apply_patch', description: 'Apply a patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' } },
];

const firstTurn: FakeScript = {
  tokens: [
    '<think>',
    'Need the weather and a patch.',
    '</think>',
    'Checking both.',
    '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
    '<tool_call>{"name": "apply_patch", "arguments": {"input": "*** Begin\\n+\\"x\\"\\n*** End"}}</tool_call>',
  ],
};

type Json = Record<string, unknown>;

async function json(response: Response): Promise<Json> {
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

async function promptOf(engine: { tokenizePrompt(r: GenerateRequest): Promise<number[]> }, req: GenerateRequest): Promise<number[]> {
  return engine.tokenizePrompt(req);
}

describe('replay', () => {
  it('continuing by id and resending the items by hand build the same prompt tokens', async () => {
    const { handler, engine } = setup([firstTurn, { tokens: ['Done.'] }, { tokens: ['Done.'] }, { tokens: ['Done.'] }]);
    const turnOneInput = [{ role: 'user', content: 'Weather in Paris, and patch the file.' }];
    const first = await json(
      await post(handler, '/responses', { instructions: 'Be terse.', input: turnOneInput, tools, include: ['reasoning.encrypted_content'] }),
    );
    const output = first.output as Json[];
    expect(output.map((i) => i.type)).toEqual(['reasoning', 'message', 'function_call', 'custom_tool_call']);
    const results = [
      { type: 'function_call_output', call_id: output[2]!.call_id, output: '18C, sunny' },
      { type: 'custom_tool_call_output', call_id: output[3]!.call_id, output: [{ type: 'input_text', text: 'patched' }] },
    ];

    await json(await post(handler, '/responses', { instructions: 'Be terse.', previous_response_id: first.id, input: results, tools }));
    await json(await post(handler, '/responses', { instructions: 'Be terse.', input: [...turnOneInput, ...output, ...results], tools, store: false }));
    // A store:false client that kept only the encrypted reasoning.
    const sealedOnly = output.map((item) => (item.type === 'reasoning' ? { ...item, content: [], summary: [] } : item));
    await json(await post(handler, '/responses', { instructions: 'Be terse.', input: [...turnOneInput, ...sealedOnly, ...results], tools, store: false }));

    const [, byId, byHand, bySealed] = engine.requests;
    const tokensById = await promptOf(engine, byId!);
    expect(await promptOf(engine, byHand!)).toEqual(tokensById);
    expect(await promptOf(engine, bySealed!)).toEqual(tokensById);
    expect(byHand!.messages).toEqual(byId!.messages);

    // The history really carries every kind of item.
    const assistant = byId!.messages.find((m) => m.role === 'assistant')!;
    expect(assistant.reasoning_content).toBe('Need the weather and a patch.');
    expect(assistant.content).toBe('Checking both.');
    expect(assistant.tool_calls!.map((c) => c.function)).toEqual([
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'apply_patch', arguments: { input: '*** Begin\n+"x"\n*** End' } },
    ]);
    expect(byId!.messages.filter((m) => m.role === 'tool').map((m) => [m.name, m.content])).toEqual([
      ['get_weather', '18C, sunny'],
      ['apply_patch', 'patched'],
    ]);
  });

  it('instructions are not inherited through previous_response_id', async () => {
    const { handler, engine } = setup([{ tokens: ['One.'] }, { tokens: ['Two.'] }]);
    const first = await json(await post(handler, '/responses', { instructions: 'Old rules.', input: 'first' }));
    await json(await post(handler, '/responses', { instructions: 'New rules.', previous_response_id: first.id, input: 'second' }));
    const messages = engine.requests[1]!.messages;
    expect(messages[0]).toEqual({ role: 'system', content: 'New rules.' });
    expect(JSON.stringify(messages)).not.toContain('Old rules.');
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it('assistant phase is kept in the stored history', async () => {
    const { handler, store } = setup([{ tokens: ['Hi.'] }]);
    const input = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'Looking.', phase: 'commentary' },
      { role: 'assistant', content: 'Found.', phase: 'final_answer' },
      { role: 'user', content: 'b' },
    ];
    const first = await json(await post(handler, '/responses', { input }));
    const record = await store.get(first.id as string);
    const assistants = (record!.history as Json[]).filter((i) => i.role === 'assistant');
    expect(assistants.map((i) => i.phase)).toEqual(['commentary', 'final_answer', 'final_answer']);
  });
});

describe('chat translation', () => {
  it('keeps each developer block in place with its label', async () => {
    const { handler, engine } = setup([{ tokens: ['ok'] }]);
    await json(
      await post(handler, '/responses', {
        instructions: 'System rules.',
        input: [
          { role: 'developer', content: 'Use metric units.' },
          { role: 'user', content: 'How far?' },
          { role: 'developer', content: [{ type: 'input_text', text: 'Answer in one line.' }] },
        ],
      }),
    );
    expect(engine.requests[0]!.messages).toEqual([
      { role: 'system', content: 'System rules.' },
      { role: 'system', content: `${DEVELOPER_LABEL}\nUse metric units.` },
      { role: 'user', content: 'How far?' },
      { role: 'system', content: `${DEVELOPER_LABEL}\nAnswer in one line.` },
    ]);
  });

  it('shims a custom tool to a function with one input string, grammar folded into its description', async () => {
    const { handler, engine } = setup([{ tokens: ['ok'] }]);
    await json(await post(handler, '/responses', { input: 'x', tools }));
    const shim = engine.requests[0]!.tools.find((t) => t.function.name === 'apply_patch')!;
    expect(shim.function.parameters).toEqual({
      type: 'object',
      properties: { input: { type: 'string', description: 'The raw input for the tool.' } },
      required: ['input'],
      additionalProperties: false,
    });
    expect(shim.function.description).toContain('Apply a patch');
    expect(shim.function.description).toContain('Lark grammar:\nstart: /.+/');
    expect(engine.requests[0]!.constraint).toEqual({
      kind: 'tools',
      mode: 'auto',
      tools: [
        { type: 'function', name: 'get_weather', parameters: tools[0]!.parameters, strict: false },
        { type: 'custom', name: 'apply_patch', grammar: { syntax: 'lark', definition: 'start: /.+/' } },
      ],
    });
  });

  it('a custom call under another key, or as a bare string, still gives the raw input', async () => {
    const { handler } = setup([
      { tokens: ['<tool_call>{"name": "apply_patch", "arguments": {"patch": "a\\tb"}}</tool_call>'] },
      { tokens: ['<tool_call>{"name": "apply_patch", "arguments": "bare \\u0041"}</tool_call>'] },
    ]);
    const a = await json(await post(handler, '/responses', { input: 'x', tools }));
    expect((a.output as Json[])[0]).toMatchObject({ type: 'custom_tool_call', input: 'a\tb' });
    const b = await json(await post(handler, '/responses', { input: 'x', tools }));
    expect((b.output as Json[])[0]).toMatchObject({ type: 'custom_tool_call', input: 'bare A' });
  });

  it('tool_choice none offers no tools; reasoning effort none turns thinking off', async () => {
    const { handler, engine } = setup([{ tokens: ['ok'] }]);
    await json(await post(handler, '/responses', { input: 'x', tools, tool_choice: 'none', reasoning: { effort: 'none' } }));
    expect(engine.requests[0]!.tools).toEqual([]);
    expect(engine.requests[0]!.constraint).toEqual({ kind: 'none' });
    expect(engine.requests[0]!.enableThinking).toBe(false);
  });
});

describe('encrypted reasoning', () => {
  async function sealedReasoning(): Promise<{ handler: ReturnType<typeof setup>['handler']; item: Json }> {
    const { handler } = setup([{ tokens: ['<think>secret plan</think>', 'ok'] }, { tokens: ['ok'] }]);
    const first = await json(await post(handler, '/responses', { input: 'x', include: ['reasoning.encrypted_content'], store: false }));
    const item = (first.output as Json[])[0]!;
    expect(item.type).toBe('reasoning');
    expect(typeof item.encrypted_content).toBe('string');
    expect(item.encrypted_content).not.toContain('secret');
    return { handler, item };
  }

  async function expect400(handler: ReturnType<typeof setup>['handler'], item: Json, message: RegExp): Promise<void> {
    const response = await post(handler, '/responses', { input: [{ role: 'user', content: 'x' }, item, { role: 'user', content: 'y' }], store: false });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: Json };
    expect(error).toMatchObject({ type: 'invalid_request_error', param: 'input[1].encrypted_content', code: 'invalid_encrypted_content' });
    expect(error.message).toMatch(message);
  }

  it('is only in the output when asked for', async () => {
    const { handler } = setup([{ tokens: ['<think>plan</think>', 'ok'] }]);
    const first = await json(await post(handler, '/responses', { input: 'x' }));
    expect((first.output as Json[])[0]).not.toHaveProperty('encrypted_content');
  });

  it('a tampered blob is a 400 naming the item', async () => {
    const { handler, item } = await sealedReasoning();
    const blob = item.encrypted_content as string;
    const at = Math.floor(blob.length / 2);
    const tampered = blob.slice(0, at) + (blob[at] === 'A' ? 'B' : 'A') + blob.slice(at + 1);
    await expect400(handler, { ...item, content: [], encrypted_content: tampered }, /could not be decrypted: it was altered, or sealed by another server or key/);
  });

  it('a foreign blob (another key) is a 400', async () => {
    const { handler, item } = await sealedReasoning();
    const other = createMemoryStore();
    const foreign = await createAesGcmSealer(() => other.reasoningKey(), { purpose: 'reasoning' }).seal('secret plan');
    await expect400(handler, { ...item, content: [], encrypted_content: foreign }, /could not be decrypted/);
  });

  it('an oversize blob is a 400 before anything is decoded', async () => {
    const { handler, item } = await sealedReasoning();
    await expect400(handler, { ...item, content: [], encrypted_content: 'A'.repeat(2 * 1024 * 1024) }, /is larger than this server accepts \(1048576 bytes\)/);
  });

  it('garbage and an unknown version are 400s', async () => {
    const { handler, item } = await sealedReasoning();
    await expect400(handler, { ...item, content: [], encrypted_content: 'not base64!' }, /is not a valid sealed blob/);
    const blob = item.encrypted_content as string;
    const bytes = Uint8Array.from(atob(blob), (c) => c.charCodeAt(0));
    bytes[0] = 9;
    await expect400(handler, { ...item, content: [], encrypted_content: btoa(String.fromCharCode(...bytes)) }, /unknown format version 9/);
  });
});

describe('a Codex-shaped conversation', () => {
  it('is accepted with nulls for absent fields, hosted tools declared, and encrypted reasoning carried by the client', async () => {
    const codexTools = [
      { type: 'function', name: 'shell', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } }, required: ['command'] }, strict: false },
      { type: 'custom', name: 'apply_patch', description: 'Edit files', format: { type: 'grammar', syntax: 'lark', definition: 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF' } },
      { type: 'web_search' },
    ];
    const { handler, client } = setup([{ tokens: ['<think>look first</think>', '<tool_call>{"name": "shell", "arguments": {"command": ["ls"]}}</tool_call>'] }, { tokens: ['Two files.'] }]);
    const first = await json(
      await post(handler, '/responses', {
        model: 'fake',
        instructions: 'You are a coding agent.',
        input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is here?' }] }],
        tools: codexTools,
        tool_choice: 'auto',
        parallel_tool_calls: false,
        reasoning: { effort: 'medium', summary: 'auto' },
        store: false,
        include: ['reasoning.encrypted_content'],
        prompt_cache_key: 'session-1',
      }),
    );
    const [reasoning, call] = first.output as Json[];
    const stream = client.responses.stream({
      model: 'fake',
      instructions: 'You are a coding agent.',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is here?' }] },
        { type: 'reasoning', id: reasoning!.id as string, summary: [], content: null, encrypted_content: reasoning!.encrypted_content as string } as never,
        { type: 'function_call', id: call!.id as string, call_id: call!.call_id as string, name: 'shell', arguments: call!.arguments as string, status: null } as never,
        { type: 'function_call_output', call_id: call!.call_id as string, output: 'a.ts\nb.ts' },
      ],
      tools: codexTools as never,
      store: false,
      include: ['reasoning.encrypted_content'],
    });
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('Two files.');
  });
});

describe('truncation auto', () => {
  it('drops the oldest turns until the prompt fits, cutting at a user message and keeping the instructions', async () => {
    const small = { ...FAKE_MODEL, contextLength: 400 };
    const engine = new FakeEngine([{ tokens: ['ok'] }, { tokens: ['ok'] }], [small]);
    const handler = createResponsesHandler({ engine, store: createMemoryStore(), ids: countingIds(), now: () => NOW });
    const input = Array.from({ length: 6 }, (_, turn) => [
      { role: 'user', content: `question ${turn} `.padEnd(50, '.') },
      { role: 'assistant', content: `answer ${turn} `.padEnd(50, '.') },
    ]).flat();
    input.push({ role: 'user', content: 'last question' });
    const body = { instructions: 'Rules.', input, max_output_tokens: 50 };
    expect((await post(handler, '/responses', { ...body, truncation: 'auto' })).status).toBe(200);
    // Without truncation the prompt does not fit: a 400 before anything is generated.
    const refused = await post(handler, '/responses', body);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('context_length_exceeded');
    // The whole prompt, as a model with room for it gets it.
    const roomy = new FakeEngine([{ tokens: ['ok'] }], [{ ...small, contextLength: 4096 }]);
    expect((await post(createResponsesHandler({ engine: roomy, store: createMemoryStore(), ids: countingIds(), now: () => NOW }), '/responses', body)).status).toBe(200);
    const [truncated] = engine.requests;
    const [whole] = roomy.requests;
    const size = async (req: GenerateRequest) => (await engine.tokenizePrompt(req)).length;
    expect(await size(whole!)).toBeGreaterThan(350);
    expect(await size(truncated!)).toBeLessThanOrEqual(350);
    const kept = truncated!.messages;
    expect(kept[0]).toEqual({ role: 'system', content: 'Rules.' });
    expect(kept[1]!.role).toBe('user');
    expect(kept.at(-1)).toEqual({ role: 'user', content: 'last question' });
    // The longest tail that fits: one more turn would not.
    const dropped = whole!.messages.length - kept.length;
    const oneMore = [kept[0]!, ...whole!.messages.slice(1 + dropped - 2)];
    expect(await size({ ...truncated!, messages: oneMore })).toBeGreaterThan(350);
  });
});
