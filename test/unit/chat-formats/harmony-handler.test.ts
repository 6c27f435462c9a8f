// The Responses handler with a Harmony (gpt-oss) model: the fake engine is given gpt-oss's real chat template
// (test/fixtures/harmony), so the model is detected as Harmony and its prompts are rendered by the runtime's Harmony
// renderer (src/common/harmony.ts), as the WebGPU engine renders them; it plays scripted outputs written as gpt-oss
// writes them. Each of sglang's mappings (harmony_utils) is checked streamed and non-streamed alike: analysis ->
// reasoning, commentary without a recipient -> phase "commentary", final -> phase "final_answer", to=functions.x
// -> a call (dotted names kept), to=python -> a code_interpreter_call, truncated arguments still closing their item,
// instructions rebuilt per request and never inherited, encrypted-only reasoning replayed as analysis.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ModelInfo } from '../../../src/engine/types.ts';
import { FAKE_DATE, fakeModelWithTemplate, type FakeScript } from '../../support/fake-engine.ts';
import { canonical, post, setup, streamEvents } from '../responses/harness.ts';

type Json = Record<string, unknown>;

const TEMPLATE = readFileSync(new URL('../../fixtures/harmony/gpt-oss-20b.jinja', import.meta.url), 'utf8');
const MODEL: ModelInfo = fakeModelWithTemplate('fake-gpt-oss', TEMPLATE);

const SPECIALS = ['<|start|>', '<|end|>', '<|message|>', '<|channel|>', '<|constrain|>', '<|call|>', '<|return|>'];

/** Token texts as the engine yields them: each special token whole, the text between cut every 3 characters. */
function tokens(text: string): string[] {
  const out: string[] = [];
  for (const piece of text.split(/(<\|[a-z]+\|>)/)) {
    if (!piece) continue;
    if (SPECIALS.includes(piece)) out.push(piece);
    else for (let i = 0; i < piece.length; i += 3) out.push(piece.slice(i, i + 3));
  }
  return out;
}

/** The same text cut every 2 characters, special tokens included (a parser must not depend on whole markers). */
function ragged(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 2) out.push(text.slice(i, i + 2));
  return out;
}

const analysis = (text: string) => `<|channel|>analysis<|message|>${text}<|end|><|start|>assistant`;
const commentary = (text: string) => `<|channel|>commentary<|message|>${text}<|end|><|start|>assistant`;
const final = (text: string) => `<|channel|>final<|message|>${text}`;
const call = (name: string, args: string) => `<|channel|>commentary to=functions.${name} <|constrain|>json<|message|>${args}`;

const weather = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};
const readFile = { type: 'function', name: 'fs.read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } };
const shell = { type: 'custom', name: 'shell', description: 'Run a command', format: { type: 'grammar', syntax: 'regex', definition: '(ls|cat) [a-z./ -]{1,20}' } };

/** The answer non-streamed and streamed (the stream's final response must be the same), and the stream's events. */
async function answerBoth(script: FakeScript, body: Json): Promise<{ response: Json; events: Json[]; requests: ReturnType<typeof setup>['engine']['requests'] }> {
  const a = setup([script], { models: [MODEL] });
  const plain = await post(a.handler, '/responses', { model: MODEL.id, ...body });
  expect(plain.status, await plain.clone().text()).toBe(200);
  const response = (await plain.json()) as Json;
  const b = setup([script], { models: [MODEL] });
  const streamed = await post(b.handler, '/responses', { model: MODEL.id, ...body, stream: true });
  const events = streamEvents(await streamed.text()) as unknown as Json[];
  const terminal = events.at(-1) as { response: Json };
  expect(canonical(terminal.response)).toEqual(canonical(response));
  return { response, events, requests: a.engine.requests };
}

const outputText = (response: Json) =>
  (response.output as Json[])
    .filter((i) => i.type === 'message')
    .flatMap((i) => (i.content as Json[]).map((p) => p.text as string))
    .join('');

/** Every item's phase agrees on output_item.added, output_item.done and the final response. */
function expectPhasesAgree(events: Json[], response: Json): void {
  const final = new Map((response.output as Json[]).map((item) => [item.id, item]));
  for (const e of events) {
    if (e.type !== 'response.output_item.added' && e.type !== 'response.output_item.done') continue;
    const item = e.item as Json;
    if (item.type === 'message') expect(item.phase).toBe(final.get(item.id)!.phase);
  }
}

/** The prompt a request of the fake engine rendered. */
async function promptOf(engine: ReturnType<typeof setup>['engine'], index: number): Promise<string> {
  return String.fromCodePoint(...(await engine.tokenizePrompt(engine.requests[index]!)));
}

describe('Harmony (gpt-oss) through the handler', () => {
  it('the model is detected as Harmony from its real template', () => {
    expect(MODEL.chatFormat).toBe('harmony');
  });

  it('analysis is reasoning, final is the final_answer message; no Harmony marker reaches the text', async () => {
    const text = `${analysis('The user wants a greeting.')}${final('Hello there!')}`;
    for (const cut of [tokens, ragged]) {
      const { response, events } = await answerBoth({ tokens: cut(text) }, { input: 'hi' });
      expect(response.output).toMatchObject([
        { type: 'reasoning', content: [{ type: 'reasoning_text', text: 'The user wants a greeting.' }], status: 'completed' },
        { type: 'message', phase: 'final_answer', status: 'completed', content: [{ text: 'Hello there!' }] },
      ]);
      const deltas = events.filter((e) => e.type === 'response.reasoning_text.delta').map((e) => e.delta).join('');
      expect(deltas).toBe('The user wants a greeting.');
      for (const marker of [...SPECIALS, 'analysis', 'final', 'assistant']) expect(outputText(response)).not.toContain(marker);
      expect((response.usage as Json & { output_tokens_details: Json }).output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    }
  });

  it('commentary without a recipient is a message with phase commentary, then the final answer', async () => {
    const text = `${analysis('Think first.')}${commentary('Checking the forecast now.')}${final('Sunny, 21 C.')}`;
    const { response, events } = await answerBoth({ tokens: tokens(text) }, { input: 'weather?', tools: [weather] });
    expect(response.output).toMatchObject([
      { type: 'reasoning' },
      { type: 'message', phase: 'commentary', content: [{ text: 'Checking the forecast now.' }] },
      { type: 'message', phase: 'final_answer', content: [{ text: 'Sunny, 21 C.' }] },
    ]);
    expectPhasesAgree(events, response);
  });

  it('to=functions.x is a function call, its arguments streamed as deltas; a preamble before it is commentary', async () => {
    const text = `${analysis('Need the weather.')}${commentary('Let me look that up.')}${call('get_weather', '{"city":"Paris"}')}`;
    const cut = await answerBoth({ tokens: ragged(text) }, { input: 'weather in Paris?', tools: [weather] });
    const { response, events } = await answerBoth({ tokens: tokens(text) }, { input: 'weather in Paris?', tools: [weather] });
    // Markers split across tokens read the same.
    expect(canonical(cut.response.output)).toEqual(canonical(response.output));
    expect(response.output).toMatchObject([
      { type: 'reasoning' },
      { type: 'message', phase: 'commentary', content: [{ text: 'Let me look that up.' }] },
      { type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
    ]);
    const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.delta).join('')).toBe('{"city":"Paris"}');
    expectPhasesAgree(events, response);
  });

  it('a dotted function name survives (functions. is stripped as a prefix only)', async () => {
    const { response } = await answerBoth({ tokens: tokens(call('fs.read_file', '{"path":"a.txt"}')) }, { input: 'read a.txt', tools: [readFile] });
    expect(response.output).toMatchObject([{ type: 'function_call', name: 'fs.read_file', arguments: '{"path":"a.txt"}' }]);
  });

  it('a message end inside an argument string is string content, as the grammar lets the model write it', async () => {
    for (const cut of [tokens, ragged]) {
      const { response } = await answerBoth({ tokens: cut(call('get_weather', '{"city":"a<|end|>b \\"<|call|>\\""}')) }, { input: 'weather?', tools: [weather] });
      expect(response.output).toMatchObject([{ type: 'function_call', name: 'get_weather', arguments: '{"city":"a<|end|>b \\"<|call|>\\""}', status: 'completed' }]);
    }
  });

  it('the recipient in the role part (as the template writes it) is read too', async () => {
    const text = `<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city":"Oslo"}`;
    const { response } = await answerBoth({ tokens: tokens(text) }, { input: 'weather?', tools: [weather] });
    expect(response.output).toMatchObject([{ type: 'function_call', name: 'get_weather', arguments: '{"city":"Oslo"}' }]);
  });

  it('a custom tool inside commentary: the shim is decoded back to the raw input', async () => {
    const { response, events } = await answerBoth({ tokens: tokens(call('shell', '{"input":"ls -la \\"src\\"/\\u00e9"}')) }, { input: 'list', tools: [shell], tool_choice: 'required' });
    expect(response.output).toMatchObject([{ type: 'custom_tool_call', name: 'shell', input: 'ls -la "src"/\u00e9' }]);
    const deltas = events.filter((e) => e.type === 'response.custom_tool_call_input.delta').map((e) => e.delta).join('');
    expect(deltas).toBe('ls -la "src"/\u00e9');
  });

  it('a call to an undeclared function is commentary text, not a call', async () => {
    const { response } = await answerBoth({ tokens: tokens(call('launch_rockets', '{"n":3}')) }, { input: 'go', tools: [weather] });
    expect(response.output).toMatchObject([{ type: 'message', phase: 'commentary', content: [{ text: '{"n":3}' }] }]);
  });

  it('to=python is a code_interpreter_call whose code is the message', async () => {
    const code = 'import math\nprint(math.pi)';
    const text = `${analysis('Compute it.')}<|channel|>analysis to=python code<|message|>${code}`;
    const { response, events } = await answerBoth({ tokens: tokens(text) }, { input: 'pi?' });
    expect(response.output).toMatchObject([
      { type: 'reasoning' },
      { type: 'code_interpreter_call', code, container_id: 'auto', outputs: [], status: 'completed' },
    ]);
    const deltas = events.filter((e) => e.type === 'response.code_interpreter_call_code.delta').map((e) => e.delta).join('');
    expect(deltas).toBe(code);
    expect(events.find((e) => e.type === 'response.code_interpreter_call_code.done')).toMatchObject({ code });
  });

  it('a code_interpreter_call replays as the python message, its logs as python\'s answer; by id as by hand', async () => {
    const code = 'print(6*7)';
    const turn = `<|channel|>analysis to=python code<|message|>${code}`;
    const { handler, engine } = setup([{ tokens: tokens(turn) }, { tokens: tokens(final('42.')) }, { tokens: tokens(final('42.')) }], { models: [MODEL] });
    const first = (await (await post(handler, '/responses', { model: MODEL.id, input: 'six times seven?' })).json()) as Json;
    expect(first.output).toMatchObject([{ type: 'code_interpreter_call', code, status: 'completed' }]);
    const byId = await post(handler, '/responses', { model: MODEL.id, previous_response_id: first.id, input: 'and?' });
    expect(byId.status, await byId.clone().text()).toBe(200);
    const ran = { ...(first.output as Json[])[0]!, outputs: [{ type: 'logs', logs: '42\n' }] };
    const byHand = await post(handler, '/responses', { model: MODEL.id, input: [{ role: 'user', content: 'six times seven?' }, ran] });
    expect(byHand.status, await byHand.clone().text()).toBe(200);
    const call = `<|start|>assistant<|channel|>analysis to=python code<|message|>${code}<|call|>`;
    expect(await promptOf(engine, 1)).toContain(`<|start|>user<|message|>six times seven?<|end|>${call}<|start|>user<|message|>and?<|end|>`);
    expect(await promptOf(engine, 2)).toContain(`${call}<|start|>python to=assistant<|channel|>analysis<|message|>42\n<|end|><|start|>assistant`);
  });

  it('arguments cut off by max_output_tokens close their item incomplete, streamed and not alike', async () => {
    const text = call('get_weather', '{"city":"Some very long city name that goes on"}');
    const script = { tokens: tokens(text) };
    const cutAt = tokens(call('get_weather', '')).length + 4;
    const { response, events } = await answerBoth(script, { input: 'weather?', tools: [weather], max_output_tokens: cutAt });
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(response.output).toMatchObject([{ type: 'function_call', name: 'get_weather', status: 'incomplete' }]);
    const item = (response.output as Json[])[0]!;
    expect(String(item.arguments).length).toBeGreaterThan(0);
    expect('{"city":"Some very long city name that goes on"}'.startsWith(String(item.arguments))).toBe(true);
    const done = events.filter((e) => e.type === 'response.output_item.done');
    expect(done).toHaveLength(1);
    expect((done[0]!.item as Json).status).toBe('incomplete');
    expect(events.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({ arguments: item.arguments });
  });

  it('the system message carries cutoff, date, the request effort and the channels; instructions and tools go to the developer message', async () => {
    const { handler, engine } = setup([{ tokens: tokens(final('ok')) }], { models: [MODEL] });
    const res = await post(handler, '/responses', { model: MODEL.id, instructions: 'Be brief.', input: 'hi', tools: [weather], reasoning: { effort: 'high' } });
    expect(res.status, await res.clone().text()).toBe(200);
    const prompt = await promptOf(engine, 0);
    expect(prompt.startsWith('<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\n')).toBe(true);
    expect(prompt).toContain(`Current date: ${FAKE_DATE}\n\nReasoning: high\n\n# Valid channels: analysis, commentary, final.`);
    expect(prompt).toContain("Calls to these tools must go to the commentary channel: 'functions'.<|end|>");
    expect(prompt).toContain('<|start|>developer<|message|># Instructions\n\nBe brief.\n\n# Tools\n\n## functions\n\nnamespace functions {\n\n// Weather for a city\ntype get_weather = (_: {\ncity: string,\n}) => any;\n\n} // namespace functions<|end|>');
    expect(prompt.endsWith('<|start|>user<|message|>hi<|end|><|start|>assistant')).toBe(true);
  });

  it('input_tokens counts the prompt generation renders, the request effort included', async () => {
    const { handler, engine } = setup([{ tokens: tokens(final('ok')) }], { models: [MODEL] });
    const body = { model: MODEL.id, instructions: 'Be brief.', input: 'hi', tools: [weather], reasoning: { effort: 'high' } };
    const counted = (await (await post(handler, '/responses/input_tokens', body)).json()) as Json;
    expect((await post(handler, '/responses', body)).status).toBe(200);
    const prompt = await promptOf(engine, 0);
    expect(prompt).toContain('Reasoning: high');
    expect(counted.input_tokens).toBe([...prompt].length);
  });

  it('instructions are rebuilt for each request and never inherited through previous_response_id', async () => {
    const { handler, engine } = setup([{ tokens: tokens(final('First answer.')) }, { tokens: tokens(final('Second answer.')) }, { tokens: tokens(final('Third.')) }], { models: [MODEL] });
    const first = (await (await post(handler, '/responses', { model: MODEL.id, instructions: 'Answer in French.', input: 'hello', reasoning: { effort: 'high' } })).json()) as Json;
    const second = await post(handler, '/responses', { model: MODEL.id, instructions: 'Answer in German.', previous_response_id: first.id, input: 'again', reasoning: { effort: 'low' } });
    expect(second.status, await second.clone().text()).toBe(200);
    const prompt = await promptOf(engine, 1);
    expect(prompt).toContain('# Instructions\n\nAnswer in German.');
    expect(prompt).not.toContain('Answer in French.');
    expect(prompt).toContain('Reasoning: low');
    expect(prompt).not.toContain('Reasoning: high');
    expect(prompt.split('<|start|>system').length - 1).toBe(1);
    expect(prompt.split('<|start|>developer').length - 1).toBe(1);
    // The earlier turn is replayed: its question and its final answer.
    expect(prompt).toContain('<|start|>user<|message|>hello<|end|><|start|>assistant<|channel|>final<|message|>First answer.<|end|><|start|>user<|message|>again<|end|>');
    // Without instructions, no instructions at all (and no developer message without tools).
    const third = await post(handler, '/responses', { model: MODEL.id, previous_response_id: first.id, input: 'more' });
    expect(third.status).toBe(200);
    const bare = await promptOf(engine, 2);
    expect(bare).not.toContain('Answer in French.');
    expect(bare).not.toContain('<|start|>developer');
  });

  it('an earlier commentary message replays on the commentary channel, the final answer on final; by id as by hand', async () => {
    const turn = `${analysis('Plan.')}${commentary('Looking it up.')}${final('Sunny.')}`;
    const { handler, engine } = setup([{ tokens: tokens(turn) }, { tokens: tokens(final('Yes.')) }, { tokens: tokens(final('Yes.')) }], { models: [MODEL] });
    const first = (await (await post(handler, '/responses', { model: MODEL.id, input: 'weather?', tools: [weather] })).json()) as Json;
    expect((first.output as Json[]).map((i) => i.phase ?? i.type)).toEqual(['reasoning', 'commentary', 'final_answer']);
    expect((await post(handler, '/responses', { model: MODEL.id, previous_response_id: first.id, input: 'sure?', tools: [weather] })).status).toBe(200);
    const byHand = [{ role: 'user', content: 'weather?' }, ...(first.output as Json[]), { role: 'user', content: 'sure?' }];
    expect((await post(handler, '/responses', { model: MODEL.id, input: byHand, tools: [weather] })).status).toBe(200);
    const prompt = await promptOf(engine, 1);
    expect(prompt).toBe(await promptOf(engine, 2));
    expect(prompt).toContain(
      '<|start|>user<|message|>weather?<|end|><|start|>assistant<|channel|>commentary<|message|>Looking it up.<|end|>' +
        '<|start|>assistant<|channel|>final<|message|>Sunny.<|end|><|start|>user<|message|>sure?<|end|><|start|>assistant',
    );
    expect(prompt).not.toContain('Plan.');
  });

  it('a tool turn replays as Harmony writes it: the call on commentary with <|constrain|>json, the result from functions.x; by id = by hand', async () => {
    const turn = `${analysis('Need the weather.')}${call('get_weather', '{"city":"Paris"}')}`;
    const { handler, engine } = setup([{ tokens: tokens(turn) }, { tokens: tokens(final('Clear.')) }, { tokens: tokens(final('Clear.')) }], { models: [MODEL] });
    const first = (await (await post(handler, '/responses', { model: MODEL.id, input: 'weather in Paris?', tools: [weather] })).json()) as Json;
    const fc = (first.output as Json[]).find((i) => i.type === 'function_call')!;
    const result = { type: 'function_call_output', call_id: fc.call_id, output: '{"sky":"clear"}' };
    expect((await post(handler, '/responses', { model: MODEL.id, previous_response_id: first.id, input: [result], tools: [weather] })).status).toBe(200);
    expect((await post(handler, '/responses', { model: MODEL.id, input: [{ role: 'user', content: 'weather in Paris?' }, ...(first.output as Json[]), result], tools: [weather] })).status).toBe(200);
    const byId = await promptOf(engine, 1);
    expect(byId).toBe(await promptOf(engine, 2));
    expect(byId).toContain(
      '<|start|>user<|message|>weather in Paris?<|end|>' +
        '<|start|>assistant<|channel|>analysis<|message|>Need the weather.<|end|>' +
        '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>' +
        '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"sky":"clear"}<|end|><|start|>assistant',
    );
  });

  it('encrypted-only reasoning is replayed as analysis in the turn in progress, and dropped after a final answer', async () => {
    const turn = `${analysis('Secret plan: call the tool.')}${call('get_weather', '{"city":"Rome"}')}`;
    const { handler, engine } = setup([{ tokens: tokens(turn) }, { tokens: tokens(final('Warm.')) }, { tokens: tokens(final('Bye.')) }], { models: [MODEL] });
    const first = (await (
      await post(handler, '/responses', { model: MODEL.id, input: 'weather in Rome?', tools: [weather], store: false, include: ['reasoning.encrypted_content'] })
    ).json()) as Json;
    const [reasoning, fc] = first.output as Json[];
    expect(reasoning).toMatchObject({ type: 'reasoning' });
    expect(typeof reasoning!.encrypted_content).toBe('string');
    // Only the sealed blob goes back: no text, no summary.
    const sealedOnly = { type: 'reasoning', id: reasoning!.id, summary: [], encrypted_content: reasoning!.encrypted_content };
    const result = { type: 'function_call_output', call_id: fc!.call_id, output: '25 C' };
    const history = [{ role: 'user', content: 'weather in Rome?' }, sealedOnly, fc, result];
    const second = (await (await post(handler, '/responses', { model: MODEL.id, input: history, tools: [weather], store: false })).json()) as Json;
    const replayed = await promptOf(engine, 1);
    expect(replayed).toContain('<|start|>assistant<|channel|>analysis<|message|>Secret plan: call the tool.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather');
    // After the final answer, the next turn's prompt no longer carries the analysis.
    const next = [...history, ...(second.output as Json[]), { role: 'user', content: 'thanks' }];
    expect((await post(handler, '/responses', { model: MODEL.id, input: next, tools: [weather], store: false })).status).toBe(200);
    const later = await promptOf(engine, 2);
    expect(later).not.toContain('Secret plan');
    expect(later).toContain('<|start|>assistant<|channel|>final<|message|>Warm.<|end|><|start|>user<|message|>thanks<|end|><|start|>assistant');
  });

  it('forced and named tool_choice reach the engine as the Harmony tools constraint', async () => {
    const { requests } = await answerBoth({ tokens: tokens(call('get_weather', '{"city":"Paris"}')) }, { input: 'weather?', tools: [weather, readFile], tool_choice: { type: 'function', name: 'get_weather' } });
    expect(requests[0]!.constraint).toMatchObject({ kind: 'tools', mode: 'named', name: 'get_weather' });
  });

  it('a message after <|end|> without <|start|>assistant is still read', async () => {
    const text = '<|channel|>analysis<|message|>Short.<|end|><|channel|>final<|message|>Done.';
    const { response } = await answerBoth({ tokens: tokens(text) }, { input: 'hi' });
    expect(response.output).toMatchObject([
      { type: 'reasoning', content: [{ text: 'Short.' }] },
      { type: 'message', phase: 'final_answer', content: [{ text: 'Done.' }] },
    ]);
  });

  it('output that ignores the format altogether is final text', async () => {
    const { response } = await answerBoth({ tokens: tokens('Just plain words.') }, { input: 'hi' });
    expect(response.output).toMatchObject([{ type: 'message', phase: 'final_answer', content: [{ text: 'Just plain words.' }] }]);
  });
});
