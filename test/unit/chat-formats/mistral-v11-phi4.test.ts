// The Mistral v11 (`[TOOL_CALLS]name[ARGS]{…}`) and Phi-4-mini (`<|tool_call|>[…]<|/tool_call|>`) parsers on the
// shapes their models and templates write besides the one the grammar writes: a `[CALL_ID]` before `[ARGS]`,
// markers split anywhere across tokens, text after the calls, Phi-4's bare object per block (llama.cpp's template)
// and a list without its close marker; a Phi-4 replay puts the tools in the system message's `tools` field.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MISTRAL_V11_FORMAT, PHI4_FORMAT, alnum9, replayMessagesFor, type ChatFormatName } from '../../../src/common/chat-format.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { OutputParser, type ParseEvent } from '../../../src/responses/output-parser.ts';

function parse(format: ChatFormatName, text: string, step: number): { calls: { name: string; args: string; complete: boolean }[]; text: string } {
  const parser = new OutputParser({
    markers: { thinkStart: '', thinkEnd: '', toolCallStart: '', toolCallEnd: '' },
    format,
    toolCalls: true,
    declaredNames: new Set(['get_weather', 'shell']),
    customNames: new Set(['shell']),
    startsInReasoning: false,
  });
  const events: ParseEvent[] = [];
  for (let i = 0; i < text.length; i += step) events.push(...parser.push(text.slice(i, i + step)));
  events.push(...parser.finish());
  const calls: { name: string; args: string; complete: boolean }[] = [];
  let said = '';
  for (const e of events) {
    if (e.kind === 'call.start') calls.push({ name: e.name, args: '', complete: false });
    else if (e.kind === 'call.delta') calls.at(-1)!.args += e.text;
    else if (e.kind === 'call.end') calls.at(-1)!.complete = e.complete;
    else if (e.kind === 'text.delta') said += e.text;
  }
  return { calls, text: said };
}

const OSLO = { name: 'get_weather', args: '{"city": "Oslo"}', complete: true };
const ROME = { name: 'get_weather', args: '{"city":"Rome"}', complete: true };

describe.each([1, 2, 3, 7, 1000])('split every %i chars', (step) => {
  it('mistral-v11: calls back to back, a [CALL_ID], a custom tool, then text', () => {
    const out = parse('mistral-v11', '[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city":"Rome"}[TOOL_CALLS]shell[ARGS]{"input": "ls \\"x\\""} done</s>', step);
    expect(out.calls).toEqual([OSLO, ROME, { name: 'shell', args: 'ls "x"', complete: true }]);
    expect(out.text).toBe('done');
  });

  it('mistral-v11: text first is commentary; an undeclared name keeps the rest as text, markers dropped', () => {
    expect(parse('mistral-v11', 'Let me look.[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}', step)).toEqual({ calls: [OSLO], text: 'Let me look.' });
    const out = parse('mistral-v11', '[TOOL_CALLS]launch[ARGS]{"n": 1}[TOOL_CALLS]get_weather[ARGS]{}', step);
    expect(out.calls).toEqual([]);
    expect(out.text).toBe('launch{"n": 1}get_weather{}');
  });

  it('mistral-v11: arguments cut off end the call incomplete', () => {
    expect(parse('mistral-v11', '[TOOL_CALLS]get_weather[ARGS]{"city": "Os', step).calls).toEqual([{ name: 'get_weather', args: '{"city": "Os', complete: false }]);
  });

  it('phi4: a list in one block, bare objects in blocks (llama.cpp), a list without its close marker', () => {
    expect(parse('phi4', '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name":"get_weather","arguments":{"city":"Rome"}}]<|/tool_call|><|end|>', step)).toEqual({ calls: [OSLO, ROME], text: '' });
    expect(parse('phi4', '<|tool_call|>{"name": "get_weather", "arguments": {"city": "Oslo"}}<|/tool_call|><|tool_call|>{"name":"get_weather","arguments":{"city":"Rome"}}<|/tool_call|>', step)).toEqual({ calls: [OSLO, ROME], text: '' });
    expect(parse('phi4', 'Checking.<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Oslo"}}]', step)).toEqual({ calls: [OSLO], text: 'Checking.' });
  });
});

describe('phi4 replay', () => {
  const template = new ChatTemplate(readFileSync(new URL('../../fixtures/chat-templates/phi-4-mini-instruct.jinja', import.meta.url), 'utf8'));
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } }];

  it('tools in the system turn (one added when there is none), calls as the model writes them, results as <|tool_response|>', () => {
    const messages = replayMessagesFor(PHI4_FORMAT, [
      { role: 'user', content: 'Oslo?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
      { role: 'tool', content: '3C', tool_call_id: 'c1' },
    ], tools);
    const prompt = template.render({ messages, tools, eosToken: '<|endoftext|>' });
    expect(prompt).toBe(
      '<|system|><|tool|>[{"name":"get_weather","parameters":{"type":"object"}}]<|/tool|><|end|><|user|>Oslo?<|end|>' +
        '<|assistant|><|tool_call|>[{"name":"get_weather","arguments":{"city":"Oslo"}}]<|/tool_call|><|end|><|tool_response|>3C<|end|><|assistant|>',
    );
  });

  it('no tools: the chat as the template writes it, no tool block', () => {
    const prompt = template.render({ messages: replayMessagesFor(PHI4_FORMAT, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]), eosToken: '<|endoftext|>' });
    expect(prompt).toBe('<|system|>Be brief.<|end|><|user|>Hi<|end|><|assistant|>');
  });
});

describe('mistral-v11 replay', () => {
  it('call ids become 9 alphanumerics, a call and its result alike (the [CALL_ID] templates demand them)', () => {
    const out = replayMessagesFor(MISTRAL_V11_FORMAT, [
      { role: 'user', content: 'Oslo?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_abc-1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
      { role: 'tool', content: '3C', tool_call_id: 'call_abc-1' },
    ]);
    expect(out[1]!.tool_calls![0]!.id).toBe(alnum9('call_abc-1'));
    expect(out[1]!.tool_calls![0]!.id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(out[2]!.tool_call_id).toBe(out[1]!.tool_calls![0]!.id);
  });
});
