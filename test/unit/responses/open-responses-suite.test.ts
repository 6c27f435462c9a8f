// The flows of the Open Responses compliance suite (openresponses/openresponses, src/lib/compliance-tests.ts:
// basic text, streaming, system prompt, tool calling plain and streamed, multi-turn, image input), answered by the
// handler on the fake engine and held the way that suite holds them: the final response conforms to
// ResponseResource, the status is completed, the expected items are there, and (streamed) every event is one the
// document defines and conforms. The model thinks first (as the bundled Qwen3-style models do), so a stream
// carries reasoning events: with the handler's `reasoningEvents: "open-responses"` they carry the document's
// names and the stream passes; with the default (the openai SDK's names) the suite would reject them.
import { describe, expect, it } from 'vitest';
import { createResponsesHandler, type ResponsesHandlerOptions } from '../../../src/responses/handler.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import { FakeEngine } from '../../support/fake-engine.ts';
import { checkSuiteResponse, checkSuiteStream } from '../../support/open-responses-flow.ts';
import { assertOpenResponsesEvent } from '../../support/open-responses-schema.ts';
import { countingIds, NOW, parseSse, post } from './harness.ts';

const weatherTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather for a location',
  parameters: { type: 'object', properties: { location: { type: 'string', description: 'City and state' } }, required: ['location'] },
};
const thinkThen = (answer: string): string[] => ['<think>', 'The user wants', ' an answer.', '</think>', answer];
const callTokens = thinkThen('<tool_call>{"name": "get_weather", "arguments": {"location": "San Francisco, CA"}}</tool_call>');

interface Flow {
  id: string;
  body: Record<string, unknown>;
  tokens: string[];
  stream?: boolean;
  expectType?: string;
}

const flows: Flow[] = [
  { id: 'basic-response', body: { input: [{ type: 'message', role: 'user', content: 'Say hello in exactly 3 words.' }] }, tokens: thinkThen('Hello there, friend.') },
  { id: 'streaming-response', stream: true, body: { input: [{ type: 'message', role: 'user', content: 'Count from 1 to 5.' }] }, tokens: thinkThen('1, 2, 3, 4, 5') },
  {
    id: 'system-prompt',
    body: { input: [{ type: 'message', role: 'system', content: 'You are a pirate.' }, { type: 'message', role: 'user', content: 'Say hello.' }] },
    tokens: thinkThen('Ahoy!'),
  },
  { id: 'tool-calling', body: { input: [{ type: 'message', role: 'user', content: "What's the weather like in San Francisco?" }], tools: [weatherTool] }, tokens: callTokens, expectType: 'function_call' },
  {
    id: 'tool-calling-streaming',
    stream: true,
    body: { input: [{ type: 'message', role: 'user', content: "What's the weather like in San Francisco?" }], tools: [weatherTool] },
    tokens: callTokens,
    expectType: 'function_call',
  },
  {
    id: 'multi-turn',
    body: {
      input: [
        { type: 'message', role: 'user', content: 'My name is Alice.' },
        { type: 'message', role: 'assistant', content: 'Hello Alice!' },
        { type: 'message', role: 'user', content: 'What is my name?' },
      ],
    },
    tokens: thinkThen('Your name is Alice.'),
  },
];

function handlerFor(tokens: string[], options: Partial<ResponsesHandlerOptions> = {}) {
  const engine = new FakeEngine([{ tokens }]);
  return createResponsesHandler({ engine, store: createMemoryStore(), ids: countingIds(), now: () => NOW, ...options });
}

describe('the Open Responses compliance flows', () => {
  for (const flow of flows) {
    it(`${flow.id} passes as the suite checks it`, async () => {
      const handler = handlerFor(flow.tokens, { reasoningEvents: 'open-responses' });
      const response = await post(handler, '/responses', { model: 'fake-qwen3', ...flow.body, stream: flow.stream ?? false });
      expect(response.status).toBe(200);
      let final: unknown;
      if (flow.stream) {
        const events = parseSse(await response.text()).filter((m) => !m.comment).map((m) => JSON.parse(m.data!) as { type: string; response?: unknown });
        final = checkSuiteStream(events, flow, true);
      } else {
        final = await response.json();
      }
      checkSuiteResponse(final, flow);
    });
  }

  it("with the default event names (the openai SDK's) the suite's stream check would reject the reasoning events", async () => {
    const handler = handlerFor(thinkThen('1, 2, 3'));
    const response = await post(handler, '/responses', { input: 'Count from 1 to 3.', stream: true });
    const events = parseSse(await response.text()).filter((m) => !m.comment).map((m) => JSON.parse(m.data!) as { type: string });
    const reasoning = events.find((e) => e.type === 'response.reasoning_text.delta');
    expect(reasoning).toBeDefined();
    expect(() => assertOpenResponsesEvent(reasoning, { documentOnly: true })).toThrow(/not one the Open Responses document defines/);
  });

  it('image input is a clear 400 naming the part (this runtime serves text-only models)', async () => {
    const handler = handlerFor(['never']);
    const response = await post(handler, '/responses', {
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }] }],
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { param: string; message: string } };
    expect(error.param).toBe('input[0].content[1]');
    expect(error.message).toMatch(/input_image.*text-only/);
  });
});
