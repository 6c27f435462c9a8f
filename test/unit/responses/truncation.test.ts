// truncation "auto" (src/responses/truncation.ts) through the handler over the fake engine: the oldest whole turns
// go, the instructions and the last user message stay, a tool call stays with its output, the response's metadata
// says what was dropped, a chain continued by previous_response_id keeps going turn after turn, a last turn that
// cannot fit alone is one clear 400 before any stream starts; "disabled" (the default) keeps the engine's 400.
import { describe, expect, it } from 'vitest';
import { EngineError, type GenerateRequest, type GenerationEvent, type ModelInfo } from '../../../src/engine/types.ts';
import { createResponsesHandler } from '../../../src/responses/handler.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import { FAKE_MODEL, FakeEngine, type FakeScript } from '../../support/fake-engine.ts';
import { countingIds, NOW, post } from './harness.ts';

/** The fake engine with the real engine's context check: a prompt that leaves no token to generate is refused. */
class ContextEngine extends FakeEngine {
  constructor(
    scripts: FakeScript[],
    private readonly model: ModelInfo,
  ) {
    super(scripts, [model]);
  }
  override async *generate(req: GenerateRequest): AsyncIterable<GenerationEvent> {
    const length = (await this.tokenizePrompt(req)).length;
    if (length + 1 > this.model.contextLength) {
      throw new EngineError('invalid_request', `The prompt is ${length} tokens, more than model \`${this.model.id}\` can take`, { code: 'context_length_exceeded', param: 'input' });
    }
    yield* super.generate(req);
  }
}

function rig(contextLength: number, scripts = 12) {
  const model = { ...FAKE_MODEL, contextLength };
  const engine = new ContextEngine(Array.from({ length: scripts }, () => ({ tokens: ['ok'] })), model);
  const handler = createResponsesHandler({ engine, store: createMemoryStore(), ids: countingIds(), now: () => NOW });
  const size = async (req: Pick<GenerateRequest, 'messages' | 'tools' | 'enableThinking' | 'model'>) => (await engine.tokenizePrompt(req)).length;
  return { engine, handler, size };
}

const turns = (n: number) =>
  Array.from({ length: n }, (_, turn) => [
    { role: 'user', content: `question ${turn} `.padEnd(60, '.') },
    { role: 'assistant', content: `answer ${turn} `.padEnd(60, '.') },
  ]).flat();

type Json = Record<string, any>;

describe('truncation auto', () => {
  it('drops the oldest whole turns, keeps the instructions and the last user message, and says what it dropped', async () => {
    const { engine, handler, size } = rig(600);
    const input = [{ role: 'developer', content: 'Be brief.' }, ...turns(8), { role: 'user', content: 'last question' }];
    const body = { instructions: 'Rules.', input, max_output_tokens: 50, truncation: 'auto' };
    const response = await post(handler, '/responses', body);
    expect(response.status).toBe(200);
    const json = (await response.json()) as Json;
    const sent = engine.requests[0]!;
    expect(await size(sent)).toBeLessThanOrEqual(550);
    const kept = sent.messages;
    expect(kept[0]).toEqual({ role: 'system', content: 'Rules.' });
    expect(kept[1]!.content).toContain('Be brief.');
    expect(kept[2]!.role).toBe('user');
    expect(kept[2]!.content).not.toContain('question 0 ');
    expect(kept.at(-1)).toEqual({ role: 'user', content: 'last question' });
    // Whole turns: every kept assistant answer follows its own question.
    for (let i = 2; i < kept.length - 1; i += 2) {
      expect(kept[i]!.role).toBe('user');
      expect(/\d+/.exec(kept[i + 1]!.content)![0]).toBe(/\d+/.exec(kept[i]!.content)![0]);
    }
    // The longest tail that fits: one more turn would not.
    const droppedTurns = (input.length - 2 - (kept.length - 3)) / 2;
    expect(droppedTurns).toBeGreaterThan(0);
    const oneMore = [kept[0]!, kept[1]!, ...input.slice(1 + 2 * (droppedTurns - 1), 3 + 2 * (droppedTurns - 1)).map((m) => ({ role: m.role, content: m.content })), ...kept.slice(2)];
    expect(await size({ ...sent, messages: oneMore as never })).toBeGreaterThan(550);
    // What was dropped, in the response's metadata.
    expect(json.truncation).toBe('auto');
    expect(json.metadata.truncated_items).toBe(String(droppedTurns * 2));
    const counted = await post(handler, '/responses/input_tokens', { ...body, truncation: 'disabled' });
    const whole = ((await counted.json()) as Json).input_tokens as number;
    expect(Number(json.metadata.truncated_input_tokens)).toBe(whole - (await size(sent)));
  });

  it('never separates a tool call from its output', async () => {
    const { engine, handler } = rig(700);
    const tools = [{ type: 'function', name: 'calculator', parameters: { type: 'object', properties: { expression: { type: 'string' } } }, strict: false }];
    const input = [
      ...turns(2),
      { role: 'user', content: 'What is 2 + 3?'.padEnd(80, '.') },
      { type: 'function_call', call_id: 'call_1', name: 'calculator', arguments: '{"expression":"2 + 3"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '5'.padEnd(120, ' ') },
      { role: 'assistant', content: 'It is 5.' },
      { role: 'user', content: 'Thanks!' },
    ];
    const response = await post(handler, '/responses', { input, tools, max_output_tokens: 40, truncation: 'auto' });
    expect(response.status).toBe(200);
    const kept = engine.requests[0]!.messages;
    const results = kept.filter((m) => m.role === 'tool');
    const calls = kept.flatMap((m) => m.tool_calls ?? []);
    expect(results.map((m) => m.tool_call_id)).toEqual(calls.map((c) => c.id));
    expect(kept[0]!.role).toBe('user');
    expect(((await response.json()) as Json).metadata.truncated_items).toMatch(/^[1-9]\d*$/);
  });

  it('keeps a conversation continued by previous_response_id going for many turns', async () => {
    const { engine, handler, size } = rig(500, 20);
    let previous: string | undefined;
    const statuses: number[] = [];
    const dropped: (string | undefined)[] = [];
    for (let turn = 0; turn < 15; turn++) {
      const response = await post(handler, '/responses', {
        input: `message number ${turn} `.padEnd(70, '.'),
        previous_response_id: previous,
        instructions: 'Rules.',
        max_output_tokens: 60,
        truncation: 'auto',
      });
      statuses.push(response.status);
      const json = (await response.json()) as Json;
      previous = json.id;
      dropped.push(json.metadata?.truncated_items);
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    for (const req of engine.requests) expect((await size(req)) + 60).toBeLessThanOrEqual(500);
    // Nothing is dropped while it fits; later turns drop some (and the report is absent when nothing was).
    expect(dropped[0]).toBeUndefined();
    expect(dropped.at(-1)).toMatch(/^[1-9]\d*$/);
    const last = engine.requests.at(-1)!.messages;
    expect(last[0]).toEqual({ role: 'system', content: 'Rules.' });
    expect(last.at(-1)!.content).toContain('message number 14');
  });

  it('a last turn too long to fit alone is one clear 400 before any stream starts', async () => {
    const { engine, handler } = rig(300);
    const body = { input: [...turns(2), { role: 'user', content: 'x'.repeat(400) }], max_output_tokens: 20, truncation: 'auto', stream: true };
    const response = await post(handler, '/responses', body);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/json');
    const error = ((await response.json()) as Json).error;
    expect(error.code).toBe('context_length_exceeded');
    expect(error.message).toMatch(/Shorten the message/);
    expect(engine.requests).toHaveLength(0);
  });

  it('"disabled" (the default) sends the whole prompt and keeps the engine\'s 400', async () => {
    const { engine, handler } = rig(600);
    const input = [...turns(8), { role: 'user', content: 'last question' }];
    for (const truncation of [undefined, 'disabled']) {
      const response = await post(handler, '/responses', { input, max_output_tokens: 50, truncation });
      expect(response.status).toBe(400);
      expect(((await response.json()) as Json).error.code).toBe('context_length_exceeded');
    }
    expect(engine.requests.every((r) => r.messages.length === input.length)).toBe(true);
  });

  it('input_tokens counts the truncated prompt under "auto"', async () => {
    const { handler } = rig(600);
    const input = [...turns(8), { role: 'user', content: 'last question' }];
    const count = async (truncation: string) =>
      ((await (await post(handler, '/responses/input_tokens', { input, max_output_tokens: 50, truncation })).json()) as Json).input_tokens as number;
    const whole = await count('disabled');
    const truncated = await count('auto');
    expect(whole).toBeGreaterThan(550);
    expect(truncated).toBeLessThanOrEqual(550);
  });
});
