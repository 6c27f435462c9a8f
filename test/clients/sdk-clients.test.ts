// Real clients against `webgpu-responses serve` with the bundled toy model: the AI SDK (`ai` + `@ai-sdk/openai`,
// Responses by default) in a multi-step generateText with the calculator tool and in streamText, and the Agents
// SDK (`@openai/agents`) in `run` with the tool, then a second run chained by previousResponseId. The toy model
// will not be clever; the tests assert the wire: every request answered, each tool call declared and well-formed,
// each loop ends, and what each client sent (logged by serve --log-requests) is what the handler understood.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { startServe, stopServe, TOY_MODEL, type Served } from '../../tools/serve-process.ts';
import { fieldSurvey, readRequestLog } from './request-log.ts';

const API_KEY = 'sk-clients';

/** The demo's calculator, evaluated on digits and operators only. */
function evaluate(expression: string): string {
  const safe = expression.replace(/[^0-9+\-*/(). ]/g, '');
  try {
    return String(Function(`"use strict"; return (${safe});`)());
  } catch {
    return 'error: not an arithmetic expression';
  }
}

let dir: string;
let logFile: string;
let served: Served;
let calls: { name: string; arguments: string }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'clients-'));
  logFile = join(dir, 'requests.jsonl');
  served = await startServe(['--model', TOY_MODEL, '--store', join(dir, 'store'), '--api-key', API_KEY, '--log-requests', logFile]);
  setTracingDisabled(true);
});

afterAll(async () => {
  if (served) await stopServe(served);
  const survey = fieldSurvey(readRequestLog(logFile));
  console.log(`fields the clients sent: ${survey.fields.join(', ')}; input item types: ${survey.inputTypes.join(', ')}`);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function toolCallsInRequests(): { name: string; arguments: string }[] {
  const out: { name: string; arguments: string }[] = [];
  for (const r of readRequestLog(logFile)) {
    const input = r.body?.input;
    if (!Array.isArray(input)) continue;
    for (const item of input as { type?: string; name?: string; arguments?: string }[]) {
      if (item.type === 'function_call') out.push({ name: item.name!, arguments: item.arguments! });
    }
  }
  return out;
}

describe('AI SDK (ai + @ai-sdk/openai, Responses API)', () => {
  const provider = () => createOpenAI({ baseURL: `${served.url}/v1`, apiKey: API_KEY });
  const calculator = tool({
    description: 'Evaluate an arithmetic expression with + - * / ( ) and decimals.',
    inputSchema: jsonSchema<{ expression: string }>({
      type: 'object',
      properties: { expression: { type: 'string', description: 'e.g. (2 + 3) * 4.5' } },
      required: ['expression'],
      additionalProperties: false,
    }),
    execute: async ({ expression }) => evaluate(expression),
  });

  test('multi-step generateText with a tool: every step answered, calls declared and well-formed, the loop ends', async () => {
    const before = readRequestLog(logFile).length;
    const result = await generateText({
      model: provider()('toy-qwen3'),
      prompt: 'What is 2 + 3?',
      tools: { calculator },
      stopWhen: stepCountIs(3),
      maxOutputTokens: 80,
      temperature: 0,
    });
    expect(result.steps.length).toBeGreaterThanOrEqual(2);
    expect(result.steps.length).toBeLessThanOrEqual(3);
    expect(result.steps[0]!.finishReason).toBe('tool-calls');
    for (const step of result.steps) {
      expect(['tool-calls', 'stop', 'length']).toContain(step.finishReason);
      if (step.finishReason !== 'tool-calls') continue;
      for (const call of step.toolCalls) {
        expect(call.toolName).toBe('calculator');
        expect(typeof (call.input as { expression?: unknown }).expression).toBe('string');
      }
    }
    expect(result.steps[0]!.toolResults[0]?.output).toBe('5');
    // Step 2 onwards sent the reasoning back as item_reference (resolved from the store) with the call and its output.
    const sent = readRequestLog(logFile).slice(before);
    expect(sent).toHaveLength(result.steps.length);
    const second = sent[1]!.body!.input as { type?: string }[];
    expect(second.map((i) => i.type)).toEqual(expect.arrayContaining(['function_call', 'function_call_output']));
    calls = toolCallsInRequests();
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) {
      expect(c.name).toBe('calculator');
      expect(() => JSON.parse(c.arguments)).not.toThrow();
    }
  });

  test('a call cut off by maxOutputTokens: incomplete (max_output_tokens), the call item incomplete, no tool run', async () => {
    let executed = 0;
    const counted = tool({ ...calculator, execute: async ({ expression }) => (executed++, evaluate(expression)) });
    const ask = (maxOutputTokens: number) =>
      generateText({ model: provider()('toy-qwen3'), prompt: 'What is 2 + 3?', tools: { calculator: counted }, toolChoice: 'required', maxOutputTokens, temperature: 0 });
    // The whole forced call first, to learn how many tokens it takes; then four fewer: the cut falls inside its arguments.
    const whole = await ask(200);
    expect(whole.finishReason).toBe('tool-calls');
    const tokens = whole.usage.outputTokens!;
    executed = 0;
    const cut = await ask(tokens - 4);
    expect(cut.finishReason).toBe('length');
    expect(cut.steps).toHaveLength(1);
    expect(executed).toBe(0);
    const stored = (await (await fetch(`${served.url}/v1/responses/${cut.response.id}`, { headers: { authorization: `Bearer ${API_KEY}` } })).json()) as {
      status: string;
      incomplete_details: unknown;
      output: { type: string; status?: string; arguments?: string }[];
    };
    expect(stored.status).toBe('incomplete');
    expect(stored.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    const call = stored.output.find((i) => i.type === 'function_call')!;
    expect(call.status).toBe('incomplete');
    expect(() => JSON.parse(call.arguments!)).toThrow();
  });

  test('streamText: the text streams in deltas and the stream ends with a finish reason', async () => {
    // Room for the toy model's reasoning (about 20 tokens) before its text.
    const stream = streamText({ model: provider()('toy-qwen3'), prompt: 'Hello!', maxOutputTokens: 64, temperature: 0 });
    const deltas: string[] = [];
    for await (const d of stream.textStream) deltas.push(d);
    expect(deltas.length).toBeGreaterThan(1);
    expect(['stop', 'length']).toContain(await stream.finishReason);
    expect(await stream.text).toBe(deltas.join(''));
    const usage = await stream.usage;
    expect(usage.outputTokens).toBeGreaterThan(0);
  });
});

describe('Agents SDK (@openai/agents)', () => {
  test('run with a tool, then a second run chained by previousResponseId', async () => {
    const calculator = agentTool({
      name: 'calculator',
      description: 'Evaluate an arithmetic expression with + - * / ( ) and decimals.',
      parameters: z.object({ expression: z.string() }),
      execute: async ({ expression }) => evaluate(expression),
    });
    const agent = new Agent({
      name: 'Calculator',
      instructions: 'You answer arithmetic questions.',
      model: 'toy-qwen3',
      tools: [calculator],
      // The Agents SDK treats an `incomplete` response as an error: room enough for the toy model to finish.
      modelSettings: { maxTokens: 300, temperature: 0 },
    });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ baseURL: `${served.url}/v1`, apiKey: API_KEY, useResponses: true }), tracingDisabled: true });
    const before = readRequestLog(logFile).length;
    const first = await runner.run(agent, 'What is 2 + 3?', { maxTurns: 4 });
    expect(first.lastResponseId).toMatch(/^resp_/);
    expect(first.newItems.some((i) => i.type === 'tool_call_item')).toBe(true);
    expect(first.newItems.some((i) => i.type === 'tool_call_output_item')).toBe(true);
    expect(typeof first.finalOutput).toBe('string');

    const second = await runner.run(agent, 'And 7 * 8?', { previousResponseId: first.lastResponseId, maxTurns: 4 });
    expect(second.lastResponseId).toMatch(/^resp_/);
    expect(typeof second.finalOutput).toBe('string');
    const sent = readRequestLog(logFile).slice(before);
    // The chained run's first request names the first run's last response and sends only the new turn.
    const chained = sent.find((r) => r.body?.previous_response_id === first.lastResponseId);
    expect(chained).toBeDefined();
    expect(chained!.body!.input).toEqual([{ role: 'user', content: 'And 7 * 8?' }]);
    for (const c of toolCallsInRequests()) {
      expect(c.name).toBe('calculator');
      expect(() => JSON.parse(c.arguments)).not.toThrow();
    }
  });
});
