// What the model writes never turns into something the request did not offer, and never into a fault:
// - tool_choice auto with tools on offer: the constraint holds a call to a declared tool's name, strict or not;
//   a call naming an undeclared tool (the constraint off, e.g. under a JSON text format) is kept as text;
// - template markers (`<tool_call>`, `</tool_call>`, `<think>`, `</think>`) never reach output_text or reasoning;
// - output that does not parse (a name that is no JSON string) is text without its markers, never a 500
//   (issue 22 item 6).
import { describe, expect, it } from 'vitest';
import { grammarForConstraint } from '../../../src/sampling/constraints/constraint-grammar.ts';
import { OutputParser, type ParseEvent } from '../../../src/responses/output-parser.ts';
import type { ResponseObject } from '../../../src/responses/schema.ts';
import { constraintFor, serveTools } from '../../../src/responses/translate.ts';
import { FAKE_MODEL } from '../../support/fake-engine.ts';
import { textMatcher } from '../constraints/matcher-for-tests.ts';
import { post, setup, streamEvents } from './harness.ts';

const calculator = {
  type: 'function' as const,
  name: 'calculator',
  description: 'Evaluate an arithmetic expression',
  parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
};

function parseAll(tokens: string[], declared: string[] | undefined, toolCalls = true): ParseEvent[] {
  const parser = new OutputParser({
    markers: FAKE_MODEL.markers,
    toolCalls,
    customNames: new Set(),
    ...(declared ? { declaredNames: new Set(declared) } : {}),
    startsInReasoning: false,
  });
  return [...tokens.flatMap((t) => parser.push(t)), ...parser.finish()];
}

const textOf = (events: ParseEvent[]): string => events.flatMap((e) => (e.kind === 'text.delta' ? [e.text] : [])).join('');
const reasoningOf = (events: ParseEvent[]): string => events.flatMap((e) => (e.kind === 'reasoning.delta' ? [e.text] : [])).join('');
const callsOf = (events: ParseEvent[]): string[] => events.flatMap((e) => (e.kind === 'call.start' ? [e.name] : []));

/** Every single cut of the text, and one token per character. */
function cuts(text: string): string[][] {
  const chars = Array.from(text);
  return [[text], chars, ...chars.slice(1).map((_, i) => [chars.slice(0, i + 1).join(''), chars.slice(i + 1).join('')])];
}

describe('the output parser keeps what is no call as text', () => {
  it('a call naming an undeclared tool is text without its markers, however the output is cut', () => {
    const text = 'Let me see. <tool_call>{"name": "convert_units", "arguments": {"from": "km"}}</tool_call> done';
    for (const tokens of cuts(text)) {
      const events = parseAll(tokens, ['calculator']);
      expect(callsOf(events)).toEqual([]);
      expect(textOf(events)).toBe('Let me see. {"name": "convert_units", "arguments": {"from": "km"}} done');
    }
    // The declared tool is still a call.
    expect(callsOf(parseAll(['<tool_call>{"name": "calculator", "arguments": {}}</tool_call>'], ['calculator']))).toEqual(['calculator']);
  });

  it('a name that does not decode as a JSON string is text, not a throw', () => {
    const text = '<tool_call>{"name": "\\uZZZZ", "arguments": {}}</tool_call>';
    for (const tokens of cuts(text)) {
      const events = parseAll(tokens, undefined);
      expect(callsOf(events)).toEqual([]);
      expect(textOf(events)).toBe('{"name": "\\uZZZZ", "arguments": {}}');
    }
  });

  it('without tools on offer and with stray markers, no marker reaches text or reasoning', () => {
    const text = 'a</think>b<tool_call>{"name": "f", "arguments": {}}</tool_call>c</tool_call><think>r1<think>r2</think>d';
    for (const tokens of cuts(text)) {
      const events = parseAll(tokens, undefined, false);
      expect(textOf(events)).toBe('ab{"name": "f", "arguments": {}}cd');
      expect(reasoningOf(events)).toBe('r1r2');
    }
  });
});

describe('tool_choice auto holds the name', () => {
  it('a non-strict function tool with tool_choice auto gets the tools constraint, which refuses an undeclared name', () => {
    const served = serveTools([calculator], 'auto');
    const constraint = constraintFor(served, 'auto', null);
    expect(constraint).toMatchObject({ kind: 'tools', mode: 'auto', tools: [{ type: 'function', name: 'calculator', strict: false }] });
    const accepts = textMatcher(grammarForConstraint(constraint));
    expect(accepts('Sure. <tool_call>{"name": "calculator", "arguments": {"expression": "2+3"}}</tool_call>')).toBe(true);
    expect(accepts('Sure. <tool_call>{"name": "convert_units", "arguments": {"expression": "2+3"}}</tool_call>')).toBe(false);
    expect(accepts('Just text.')).toBe(true);
    // Nothing asks for a guarantee: only the name (and a JSON-object `arguments`) is held, so the grammar stays small.
    expect(constraint).toMatchObject({ tools: [{ parameters: null }] });
  });

  it('a strict tool (or a call limit) keeps the schemas held as well', () => {
    const strict = constraintFor(serveTools([{ ...calculator, strict: true }], 'auto'), 'auto', null);
    expect(strict).toMatchObject({ kind: 'tools', mode: 'auto', tools: [{ name: 'calculator', parameters: calculator.parameters, strict: true }] });
    const accepts = textMatcher(grammarForConstraint(strict));
    expect(accepts('<tool_call>{"name": "calculator", "arguments": {"expression": "2+3"}}</tool_call>')).toBe(true);
    expect(accepts('<tool_call>{"name": "calculator", "arguments": {"expression": 5}}</tool_call>')).toBe(false);
    const limited = constraintFor(serveTools([calculator], 'auto'), 'auto', null, 1);
    expect(limited).toMatchObject({ maxCalls: 1, tools: [{ parameters: calculator.parameters }] });
  });
});

describe('the handler answers unparsable and undeclared calls with text', () => {
  const bad = '<tool_call>{"name": "\\uZZZZ", "arguments": {}}</tool_call>';

  it('a call whose name does not decode is a completed text answer, streamed or not (never a 500)', async () => {
    const { handler } = setup([{ tokens: [bad] }, { tokens: [bad] }]);
    const plain = await post(handler, '/responses', { input: 'hi', tools: [calculator] });
    expect(plain.status).toBe(200);
    const body = (await plain.json()) as ResponseObject;
    expect(body.status).toBe('completed');
    expect(body.output).toEqual([expect.objectContaining({ type: 'message', content: [expect.objectContaining({ text: '{"name": "\\uZZZZ", "arguments": {}}' })] })]);

    const streamed = await post(handler, '/responses', { input: 'hi', tools: [calculator], stream: true });
    const events = streamEvents(await streamed.text());
    const terminal = events.at(-1)!;
    expect(terminal.type).toBe('response.completed');
    const withoutIds = (items: ResponseObject['output']) => items.map(({ id: _id, ...rest }) => rest);
    expect(withoutIds((terminal as { response: ResponseObject }).response.output)).toEqual(withoutIds(body.output));
  });

  it('an undeclared tool comes back as text, never as a function_call', async () => {
    // Under a JSON text format the tools constraint is off, so the model can name anything: the parser still guards.
    const call = '<tool_call>{"name": "convert_units", "arguments": {"value": 3}}</tool_call>';
    const { handler } = setup([{ tokens: [call] }]);
    const response = await post(handler, '/responses', { input: 'hi', tools: [calculator], text: { format: { type: 'json_object' } } });
    const body = (await response.json()) as ResponseObject;
    expect(body.output.map((i) => i.type)).toEqual(['message']);
    expect(JSON.stringify(body.output)).not.toContain('<tool_call>');
  });

  it('no marker reaches output_text or reasoning when no tools are offered', async () => {
    const { handler } = setup([{ tokens: ['<think>', 'plan</think>', '</think>', 'The answer', ' <tool_call>{"name": "x", "arguments": {}}</tool_call>'] }]);
    const body = (await (await post(handler, '/responses', { input: 'hi' })).json()) as ResponseObject;
    const json = JSON.stringify(body.output);
    for (const marker of ['<think>', '</think>', '<tool_call>', '</tool_call>']) expect(json).not.toContain(marker);
    expect(body.output.map((i) => i.type)).toEqual(['reasoning', 'message']);
  });
});
