// The Responses handler with models of the JSON-call chat formats (Llama 3.x, Mistral v3 and tekken, Gemma 3's
// prompt convention): the fake
// engine renders prompts through each model's real chat template (test/fixtures/chat-templates) and plays scripted
// outputs written as that model writes them. For each format: streamed and non-streamed answers are the same,
// required/named tool_choice give the call, a custom tool with a grammar gets its input, phases are right,
// continuing by previous_response_id renders the same prompt as resending by hand, a call to an undeclared tool
// stays text, and no format marker reaches output_text.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ModelInfo } from '../../../src/engine/types.ts';
import { fakeModelWithTemplate, type FakeScript } from '../../support/fake-engine.ts';
import { canonical, post, setup, streamEvents } from '../responses/harness.ts';

type Json = Record<string, unknown>;

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/chat-templates/${name}`, import.meta.url), 'utf8');

interface FormatCase {
  label: string;
  model: ModelInfo;
  /** The model's text for these calls, as it writes them. */
  calls: (calls: { name: string; args: unknown }[]) => string;
  markers: string[];
}

const CASES: FormatCase[] = [
  {
    label: 'llama3 (Llama 3.2 template)',
    model: fakeModelWithTemplate('fake-llama3', fixture('llama-3.2-3b-instruct.jinja')),
    calls: (calls) => `<|python_tag|>${calls.map((c) => JSON.stringify({ name: c.name, parameters: c.args })).join('; ')}`,
    markers: ['<|python_tag|>', '<|eom_id|>', '<|eot_id|>', '"parameters"'],
  },
  {
    label: 'mistral v3 (Mistral-7B-Instruct-v0.3 template)',
    model: fakeModelWithTemplate('fake-mistral-v3', fixture('mistral-7b-instruct-v0.3.jinja')),
    calls: (calls) => `[TOOL_CALLS] [${calls.map((c) => JSON.stringify({ name: c.name, arguments: c.args })).join(', ')}]`,
    markers: ['[TOOL_CALLS]', '</s>', '"arguments"'],
  },
  {
    label: 'mistral tekken (Mistral-Nemo template)',
    model: fakeModelWithTemplate('fake-mistral-tekken', fixture('mistral-nemo-instruct-2407.jinja')),
    calls: (calls) => `[TOOL_CALLS][${calls.map((c) => JSON.stringify({ name: c.name, arguments: c.args, id: 'a1b2c3d4e' })).join(', ')}]`,
    markers: ['[TOOL_CALLS]', '</s>', '"arguments"'],
  },
  {
    label: 'gemma3 (Gemma 3 1B template, prompt convention)',
    model: fakeModelWithTemplate('fake-gemma3', fixture('gemma-3-1b-it.jinja')),
    calls: (calls) => calls.map((c) => `\`\`\`tool_call\n${JSON.stringify({ name: c.name, arguments: c.args })}\n\`\`\``).join('\n'),
    markers: ['```tool_call', '<end_of_turn>', '"arguments"'],
  },
  {
    label: 'mistral v11 (Devstral Small 2507 template)',
    // Its default system prompt is ~6k characters (the fake tokenizer: one token each).
    model: fakeModelWithTemplate('fake-mistral-v11', fixture('devstral-small-2507.jinja'), { contextLength: 16384 }),
    calls: (calls) => calls.map((c) => `[TOOL_CALLS]${c.name}[ARGS]${JSON.stringify(c.args)}`).join(''),
    markers: ['[TOOL_CALLS]', '[ARGS]', '</s>'],
  },
  {
    label: 'phi4 (Phi-4-mini-instruct template)',
    model: fakeModelWithTemplate('fake-phi4', fixture('phi-4-mini-instruct.jinja')),
    calls: (calls) => `<|tool_call|>[${calls.map((c) => JSON.stringify({ name: c.name, arguments: c.args })).join(', ')}]<|/tool_call|>`,
    markers: ['<|tool_call|>', '<|/tool_call|>', '<|end|>', '"arguments"'],
  },
];

const weather = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};
const shell = { type: 'custom', name: 'shell', description: 'Run a command', format: { type: 'grammar', syntax: 'regex', definition: '(ls|cat) [a-z./ -]{1,20}' } };

/** Token texts: the text cut every 3 characters, so markers and JSON split across tokens. */
function tokens(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 3) out.push(text.slice(i, i + 3));
  return out;
}

async function answerBoth(model: ModelInfo, script: FakeScript, body: Json): Promise<{ response: Json; requests: ReturnType<typeof setup>['engine']['requests'] }> {
  const a = setup([script], { models: [model] });
  const plain = await post(a.handler, '/responses', { model: model.id, ...body });
  expect(plain.status, await plain.clone().text()).toBe(200);
  const response = (await plain.json()) as Json;
  const b = setup([script], { models: [model] });
  const streamed = await post(b.handler, '/responses', { model: model.id, ...body, stream: true });
  const events = streamEvents(await streamed.text());
  const terminal = events.at(-1) as { response: Json };
  expect(canonical(terminal.response)).toEqual(canonical(response));
  return { response, requests: a.engine.requests };
}

const outputText = (response: Json) =>
  (response.output as Json[])
    .filter((i) => i.type === 'message')
    .flatMap((i) => (i.content as Json[]).map((p) => p.text as string))
    .join('');

describe.each(CASES)('chat format $label', ({ model, calls, markers }) => {
  it('the model info carries the detected format', () => {
    const expected: Record<string, string> = { 'fake-llama3': 'llama3', 'fake-gemma3': 'gemma3', 'fake-mistral-v11': 'mistral-v11', 'fake-phi4': 'phi4' };
    expect(model.chatFormat).toBe(expected[model.id] ?? 'mistral');
  });

  it('a plain answer is final_answer text, streamed and not alike', async () => {
    const { response } = await answerBoth(model, { tokens: tokens('Paris is sunny today.') }, { input: 'weather?', tools: [weather] });
    expect(response.output).toMatchObject([{ type: 'message', phase: 'final_answer', content: [{ text: 'Paris is sunny today.' }] }]);
  });

  it('tool_choice required: the call, its arguments streamed the same', async () => {
    const { response, requests } = await answerBoth(model, { tokens: tokens(calls([{ name: 'get_weather', args: { city: 'Paris' } }])) }, { input: 'weather?', tools: [weather], tool_choice: 'required' });
    expect(requests[0]!.constraint).toMatchObject({ kind: 'tools', mode: 'required' });
    expect(response.output).toMatchObject([{ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    expect(outputText(response)).toBe('');
  });

  it('a named tool_choice and parallel calls', async () => {
    const text = calls([
      { name: 'get_weather', args: { city: 'Paris' } },
      { name: 'get_weather', args: { city: 'Oslo' } },
    ]);
    const { response, requests } = await answerBoth(model, { tokens: tokens(text) }, { input: 'weather?', tools: [weather], tool_choice: { type: 'function', name: 'get_weather' } });
    expect(requests[0]!.constraint).toMatchObject({ kind: 'tools', mode: 'named', name: 'get_weather' });
    expect(response.output).toMatchObject([
      { type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call', name: 'get_weather', arguments: '{"city":"Oslo"}' },
    ]);
  });

  it('a custom tool with a grammar: the input comes back raw, the grammar goes to the constraint', async () => {
    const text = calls([{ name: 'shell', args: { input: 'ls -la "src"/\u00e9' } }]);
    const { response, requests } = await answerBoth(model, { tokens: tokens(text) }, { input: 'list', tools: [shell], tool_choice: 'required' });
    expect(response.output).toMatchObject([{ type: 'custom_tool_call', name: 'shell', input: 'ls -la "src"/\u00e9' }]);
    const constraint = requests[0]!.constraint as Json;
    expect(constraint.tools).toMatchObject([{ type: 'custom', name: 'shell', grammar: { syntax: 'regex' } }]);
  });

  it('text before a call is commentary', async () => {
    const text = `Let me check. ${calls([{ name: 'get_weather', args: { city: 'Rome' } }])}`;
    const { response } = await answerBoth(model, { tokens: tokens(text) }, { input: 'weather?', tools: [weather] });
    if (model.chatFormat !== 'hermes') {
      expect(response.output).toMatchObject([
        { type: 'message', phase: 'commentary', content: [{ text: 'Let me check.' }] },
        { type: 'function_call', name: 'get_weather', arguments: '{"city":"Rome"}' },
      ]);
    }
    for (const marker of markers.filter((m) => !m.startsWith('"'))) expect(outputText(response)).not.toContain(marker);
  });

  it('a call to an undeclared tool stays text, without the format markers', async () => {
    const text = calls([{ name: 'launch_rockets', args: { n: 3 } }]);
    const { response } = await answerBoth(model, { tokens: tokens(text) }, { input: 'go', tools: [weather] });
    expect((response.output as Json[]).map((i) => i.type)).toEqual(['message']);
    const said = outputText(response);
    expect(said).toContain('launch_rockets');
    for (const marker of markers.filter((m) => !m.startsWith('"'))) expect(said).not.toContain(marker);
  });

  it('without tools, a call-shaped answer is text and the markers are dropped', async () => {
    const text = `${calls([{ name: 'get_weather', args: { city: 'Paris' } }])}<|eot_id|></s>`;
    const { response } = await answerBoth(model, { tokens: tokens(text) }, { input: 'hi' });
    expect((response.output as Json[]).map((i) => i.type)).toEqual(['message']);
    for (const marker of markers.filter((m) => !m.startsWith('"'))) expect(outputText(response)).not.toContain(marker);
  });

  it('previous_response_id renders the same prompt as resending the history by hand', async () => {
    const callText = calls([{ name: 'get_weather', args: { city: 'Paris' } }]);
    const { handler, engine } = setup([{ tokens: tokens(callText) }, { tokens: tokens('It is sunny.') }, { tokens: tokens('It is sunny.') }], { models: [model] });
    const developer = { role: 'developer', content: 'Answer in one line.' };
    const first = (await (await post(handler, '/responses', { model: model.id, instructions: 'Be brief.', input: [developer, { role: 'user', content: 'weather in Paris?' }], tools: [weather] })).json()) as Json;
    const call = (first.output as Json[]).find((i) => i.type === 'function_call')!;
    expect(call).toMatchObject({ name: 'get_weather' });
    const result = { type: 'function_call_output', call_id: call.call_id, output: '{"sky":"clear"}' };
    const byId = await post(handler, '/responses', { model: model.id, instructions: 'Be brief.', previous_response_id: first.id, input: [result], tools: [weather] });
    expect(byId.status, await byId.clone().text()).toBe(200);
    const byHand = await post(handler, '/responses', {
      model: model.id,
      instructions: 'Be brief.',
      input: [developer, { role: 'user', content: 'weather in Paris?' }, ...(first.output as Json[]), result],
      tools: [weather],
    });
    expect(byHand.status, await byHand.clone().text()).toBe(200);
    const [, replayed, resent] = engine.requests;
    const replayedPrompt = String.fromCodePoint(...(await engine.tokenizePrompt(replayed!)));
    const resentPrompt = String.fromCodePoint(...(await engine.tokenizePrompt(resent!)));
    expect(replayedPrompt).toBe(resentPrompt);
    // The real template rendered the call, its result, the system and the developer text.
    expect(replayedPrompt).toContain('get_weather');
    expect(replayedPrompt).toMatch(/sky\\?":\\?"clear/);
    expect(replayedPrompt).toContain('Be brief.');
    expect(replayedPrompt).toContain('Answer in one line.');
  });
});
