// A tool call cut off by max_output_tokens is never a complete, callable call (sglang after PR #38690, and the
// spec: items cut short close `incomplete`): the response is `incomplete` with incomplete_details
// {reason:"max_output_tokens"}, the call item is `status: "incomplete"` (a custom tool call too, though the SDK
// types no status there: its input is not whole), and the stream says the same (output_item.added in_progress,
// output_item.done and the terminal response incomplete, response.incomplete last). Streamed and non-streamed
// agree. The AI SDK, which reads items and ignores their status, marks the cut call invalid and runs no tool.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ResponseObject, StreamEvent } from '../../../src/responses/schema.ts';
import type { FakeScript } from '../../support/fake-engine.ts';
import { canonical, post, setup, streamEvents } from './harness.ts';

const calculatorTool = {
  type: 'function',
  name: 'calculator',
  description: 'Evaluate an arithmetic expression.',
  parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
};
const patchTool = { type: 'custom', name: 'apply_patch', description: 'Apply a patch' };
const functionCall = ['<tool_call>', '{"name": "calculator", ', '"arguments": {"expression": ', '"2 + 3', '"}}', '</tool_call>'];
const customCall = ['<tool_call>', '{"name": "apply_patch", ', '"arguments": {"input": ', '"*** Begin Patch\\n', '*** End Patch"}}', '</tool_call>'];

async function both(script: FakeScript, body: Record<string, unknown>): Promise<{ plain: ResponseObject; streamed: ResponseObject; events: StreamEvent[] }> {
  const { handler } = setup([script, script]);
  const plain = (await (await post(handler, '/responses', body)).json()) as ResponseObject;
  const events = streamEvents(await (await post(handler, '/responses', { ...body, stream: true })).text());
  const streamed = (events.at(-1) as { response: ResponseObject }).response;
  return { plain, streamed, events };
}

/** Items without their ids (each answer draws its own from the counting id source). */
function withoutIds(items: unknown[]): unknown {
  return JSON.parse(JSON.stringify(canonical(items), (key, v: unknown) => (key === 'id' || key === 'call_id' ? undefined : v)));
}

function itemEvents(events: StreamEvent[], type: 'response.output_item.added' | 'response.output_item.done') {
  return events.filter((e): e is Extract<StreamEvent, { type: typeof type }> => e.type === type).map((e) => e.item);
}

describe('a call cut off by max_output_tokens', () => {
  it('function call: response incomplete (max_output_tokens), the item incomplete, the stream consistent', async () => {
    const { plain, streamed, events } = await both({ tokens: functionCall }, { input: 'What is 2 + 3?', tools: [calculatorTool], max_output_tokens: 4 });
    for (const r of [plain, streamed]) {
      expect(r.status).toBe('incomplete');
      expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
      expect(r.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'calculator', arguments: '{"expression": "2 + 3', status: 'incomplete' })]);
    }
    expect(withoutIds(streamed.output)).toEqual(withoutIds(plain.output));
    expect(events.at(-1)!.type).toBe('response.incomplete');
    expect(events.map((e) => e.type)).not.toContain('response.completed');
    expect(itemEvents(events, 'response.output_item.added')).toEqual([expect.objectContaining({ type: 'function_call', status: 'in_progress' })]);
    expect(itemEvents(events, 'response.output_item.done')).toEqual([streamed.output[0]]);
  });

  it('custom tool call: the item carries status incomplete (not a whole input), streamed and not', async () => {
    const { plain, streamed, events } = await both({ tokens: customCall }, { input: 'Patch it.', tools: [patchTool], max_output_tokens: 4 });
    for (const r of [plain, streamed]) {
      expect(r.status).toBe('incomplete');
      expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
      expect(r.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch\n', status: 'incomplete' })]);
    }
    expect(withoutIds(streamed.output)).toEqual(withoutIds(plain.output));
    expect(itemEvents(events, 'response.output_item.done')).toEqual([streamed.output[0]]);
    expect(events.at(-1)!.type).toBe('response.incomplete');
  });

  it('a whole call (arguments closed) stays completed, with no status on a custom call', async () => {
    const fn = await both({ tokens: functionCall }, { input: 'What is 2 + 3?', tools: [calculatorTool] });
    expect(fn.plain.status).toBe('completed');
    expect(fn.plain.output[0]).toMatchObject({ type: 'function_call', arguments: '{"expression": "2 + 3"}', status: 'completed' });
    const custom = await both({ tokens: customCall }, { input: 'Patch it.', tools: [patchTool] });
    expect(custom.plain.status).toBe('completed');
    expect(custom.plain.output[0]).toMatchObject({ type: 'custom_tool_call', input: '*** Begin Patch\n*** End Patch' });
    expect(custom.plain.output[0]).not.toHaveProperty('status');
  });
});

describe('the AI SDK over the handler: a cut-off call runs no tool', () => {
  for (const streaming of [false, true]) {
    it(streaming ? 'streamText' : 'generateText', async () => {
      const { handler } = setup([{ tokens: functionCall }, { tokens: functionCall }, { tokens: ['Done.'] }]);
      const provider = createOpenAI({ baseURL: 'http://local/v1', apiKey: 'x', fetch: async (url, init) => handler(new Request(url as string, init)) });
      const executed: unknown[] = [];
      const calculator = tool({
        inputSchema: jsonSchema<{ expression: string }>(calculatorTool.parameters as never),
        execute: async (input) => {
          executed.push(input);
          return '5';
        },
      });
      const args = { model: provider('fake-qwen3'), prompt: 'What is 2 + 3?', tools: { calculator }, maxOutputTokens: 4, stopWhen: stepCountIs(3) };
      const steps = streaming
        ? await (async () => {
            const run = streamText(args);
            for await (const part of run.fullStream) void part;
            return run.steps;
          })()
        : (await generateText(args)).steps;
      expect(executed).toEqual([]);
      expect(steps[0]!.finishReason).toBe('length');
      expect(steps[0]!.toolCalls.filter((c) => !('invalid' in c && c.invalid))).toEqual([]);
    });
  }
});

describe('a call cut off before any of its arguments', () => {
  // Empty arguments read as `{}` to a lenient client (the AI SDK parses '' so): there is nothing to call, so the call
  // is dropped, as one cut before its name is; the response still says it ran out of tokens.
  for (const [label, tools, tokens] of [
    ['function call', [calculatorTool], ['<tool_call>', '{"name": "calculator", ', '"arguments": ', '{"expression": "2"}}', '</tool_call>']],
    ['custom tool call (its input string not begun)', [patchTool], customCall],
  ] as const) {
    it(`${label}: no item, streamed or not; the stream never announced one`, async () => {
      const { plain, streamed, events } = await both({ tokens: [...tokens] }, { input: 'Go.', tools, max_output_tokens: 3 });
      for (const r of [plain, streamed]) {
        expect(r.status).toBe('incomplete');
        expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
        expect(r.output).toEqual([]);
      }
      expect(events.filter((e) => e.type === 'response.output_item.added')).toEqual([]);
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    });
  }

  it('a whole call with empty arguments is still announced and completed', async () => {
    const noArgs = { type: 'function', name: 'now', parameters: { type: 'object', properties: {} } };
    const { plain, events } = await both({ tokens: ['<tool_call>', '{"name": "now", ', '"arguments": {}}', '</tool_call>'] }, { input: 'Time?', tools: [noArgs] });
    expect(plain.status).toBe('completed');
    expect(plain.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'now', arguments: '{}', status: 'completed' })]);
    expect(itemEvents(events, 'response.output_item.added')).toEqual([expect.objectContaining({ type: 'function_call', name: 'now', arguments: '', status: 'in_progress' })]);
  });
});
