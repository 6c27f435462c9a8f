// The chat-format constraint for tool calling: in `auto` mode free text never contains the tool-call marker
// unless a well-formed call follows; `required` forces a call (after an optional thinking block); `named` fixes
// the tool; arguments follow each tool's schema, custom tools' input its grammar (JSON-escaped).
import { describe, expect, it } from 'vitest';
import type { ConstrainedTool, ConstraintSpec } from '../../../src/engine/types.ts';
import { ConstraintError, checkConstraintSpec, compileConstraint } from '../../../src/sampling/constraints/index.ts';
import { DEFAULT_MARKERS, grammarForConstraint } from '../../../src/sampling/constraints/constraint-grammar.ts';
import { validateJson } from './json-schema-validator.ts';
import { textMatcher } from './matcher-for-tests.ts';
import { decodeStrict, extractToolCalls, randomWalk } from './random-walk.ts';
import { byteLevelVocabulary } from './test-vocabulary.ts';

const WEATHER = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { enum: ['c', 'f'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const TOOLS: ConstrainedTool[] = [
  { type: 'function', name: 'get_weather', parameters: WEATHER, strict: true },
  { type: 'function', name: 'no_params', parameters: null, strict: false },
  { type: 'function', name: 'loose', parameters: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } } }, strict: false },
  { type: 'custom', name: 'shell', grammar: { syntax: 'regex', definition: '(ls|cat) [a-z./]{1,12}' } },
  { type: 'custom', name: 'free_form' },
];
const schemaOf = (name: string) => {
  const tool = TOOLS.find((t) => t.name === name)!;
  return tool.type === 'function' ? (name === 'loose' ? { type: 'object' } : tool.parameters) : null;
};

function checkCall(call: { name: string; arguments: Record<string, unknown> }): void {
  const tool = TOOLS.find((t) => t.name === call.name);
  expect(tool, call.name).toBeDefined();
  if (tool!.type === 'function') {
    expect(validateJson(call.arguments, schemaOf(call.name)), JSON.stringify(call)).toBeNull();
    expect(typeof call.arguments === 'object' && !Array.isArray(call.arguments)).toBe(true);
  } else {
    expect(Object.keys(call.arguments)).toEqual(['input']);
    expect(typeof call.arguments.input).toBe('string');
    if (tool!.name === 'shell') expect(call.arguments.input).toMatch(/^(ls|cat) [a-z./]{1,12}$/);
  }
}

describe('tool-call constraint', () => {
  const { vocab, tokenBytes, endTokenId } = byteLevelVocabulary();

  it.each(['auto', 'required'] as const)('mode %s: every walk is free text and well-formed calls to declared tools', (mode) => {
    let calls = 0;
    let ended = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const spec: ConstraintSpec = { kind: 'tools', mode, tools: TOOLS };
      const constraint = compileConstraint(spec, vocab, { thinking: 'none' });
      // In auto mode a uniform walk rarely opens a call by itself: half the walks start with text and the marker.
      const prefix = mode === 'auto' && seed % 2 === 0 ? 'Checking <tool_call>' : '';
      for (const byte of new TextEncoder().encode(prefix)) constraint.accept(byte);
      const walk = randomWalk(constraint, tokenBytes, endTokenId, seed * 31, 500);
      const text = prefix + decodeStrict(walk.bytes);
      if (!walk.ended) continue;
      ended++;
      const parsed = extractToolCalls(text, false);
      if (mode === 'required') {
        expect(parsed.calls.length).toBeGreaterThan(0);
        expect(text.trimStart().startsWith('<tool_call>'), text).toBe(true);
      }
      parsed.calls.forEach(checkCall);
      calls += parsed.calls.length;
    }
    expect(ended).toBeGreaterThanOrEqual(20);
    expect(calls).toBeGreaterThan(0);
  });

  it('named mode calls only the named tool', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const spec: ConstraintSpec = { kind: 'tools', mode: 'named', name: 'get_weather', tools: TOOLS };
      const walk = randomWalk(compileConstraint(spec, vocab, { thinking: 'none' }), tokenBytes, endTokenId, seed, 500);
      if (!walk.ended) continue;
      const { calls } = extractToolCalls(decodeStrict(walk.bytes), false);
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) {
        expect(call.name).toBe('get_weather');
        checkCall(call);
      }
    }
  });

  it('matches the chat format exactly (markers, thinking block, escaping)', () => {
    const auto = textMatcher(grammarForConstraint({ kind: 'tools', mode: 'auto', tools: TOOLS }));
    const call = (name: string, args: unknown) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
    expect(auto('Just an answer, no tools. <tool_ call> is fine')).toBe(true);
    expect(auto(`Let me check.${call('get_weather', { city: 'Oslo', unit: 'c' })}`)).toBe(true);
    expect(auto(`${call('shell', { input: 'cat ./a.txt' })}\n${call('free_form', { input: 'any "text"\n\\' })}`)).toBe(true);
    expect(auto(`${call('loose', { n: 0 })}`)).toBe(true); // non-strict: an unsupported keyword is not enforced
    expect(auto(`${call('no_params', { anything: [1, { b: null }] })}`)).toBe(true);
    expect(auto('text <tool_call> without a call')).toBe(false);
    expect(auto(call('get_weather', { city: 'Oslo', unit: 'k' }))).toBe(false);
    expect(auto(call('undeclared', {}))).toBe(false);
    expect(auto(call('shell', { input: 'rm -rf /' }))).toBe(false);
    expect(auto(call('shell', { command: 'ls a' }))).toBe(false);

    const required = textMatcher(grammarForConstraint({ kind: 'tools', mode: 'required', tools: TOOLS }));
    expect(required(call('shell', { input: 'ls x' }))).toBe(true);
    expect(required(`<think>\nI should list files.\n</think>\n\n${call('shell', { input: 'ls x' })}`)).toBe(true);
    expect(required(`planning...</think>${call('shell', { input: 'ls x' })}`)).toBe(false);
    const openThinking = textMatcher(grammarForConstraint({ kind: 'tools', mode: 'required', tools: TOOLS }, { markers: DEFAULT_MARKERS, thinking: 'open' }));
    expect(openThinking(`planning...</think>\n${call('shell', { input: 'ls x' })}`)).toBe(true);
    expect(openThinking(call('shell', { input: 'ls x' }))).toBe(false);
    const noThinking = textMatcher(grammarForConstraint({ kind: 'tools', mode: 'required', tools: TOOLS }, { markers: DEFAULT_MARKERS, thinking: 'none' }));
    expect(noThinking(`<think>x</think>${call('shell', { input: 'ls x' })}`)).toBe(false);
    expect(required('No call at all.')).toBe(false);
    expect(required(`Preamble ${call('shell', { input: 'ls x' })}`)).toBe(false);

    const named = textMatcher(grammarForConstraint({ kind: 'tools', mode: 'named', name: 'shell', tools: TOOLS }));
    expect(named(call('shell', { input: 'ls x' }))).toBe(true);
    expect(named(call('get_weather', { city: 'a', unit: 'c' }))).toBe(false);
  });

  it('a custom grammar applies to the decoded string: quotes, backslashes and newlines are escaped', () => {
    const tools: ConstrainedTool[] = [{ type: 'custom', name: 'q', grammar: { syntax: 'lark', definition: 'start: "say \\"" /[a-z\\\\]+/ "\\"\\n"' } }];
    const m = textMatcher(grammarForConstraint({ kind: 'tools', mode: 'required', tools }));
    const call = (input: string) => `<tool_call>${JSON.stringify({ name: 'q', arguments: { input } })}</tool_call>`;
    expect(m(call('say "hi\\there"\n'))).toBe(true);
    expect(m(call('say "hi\\there"\n').replace('\\n"}', '\\u000a"}'))).toBe(true);
    expect(m(call('say "hi"'))).toBe(false);
    expect(m('<tool_call>{"name": "q", "arguments": {"input": "say "hi"\n"}}</tool_call>')).toBe(false); // unescaped
  });

  it('rejects a named choice of an undeclared tool, forced calls without tools, and bad strict schemas', () => {
    expect(() => checkConstraintSpec({ kind: 'tools', mode: 'named', name: 'nope', tools: TOOLS })).toThrow(ConstraintError);
    expect(() => checkConstraintSpec({ kind: 'tools', mode: 'required', tools: [] })).toThrow(ConstraintError);
    expect(() =>
      checkConstraintSpec({ kind: 'tools', mode: 'auto', tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: { x: { not: {} } } }, strict: true }] }),
    ).toThrow(/properties\.x\.not/);
  });
});

describe('request-time check', () => {
  it('turns constraint problems into 400 EngineErrors with the request parameter', async () => {
    const { checkConstraintForRequest } = await import('../../../src/sampling/constraints/index.ts');
    const { EngineError } = await import('../../../src/engine/types.ts');
    const grab = (spec: ConstraintSpec) => {
      try {
        checkConstraintForRequest(spec);
      } catch (e) {
        return e;
      }
      return null;
    };
    const schema = grab({ kind: 'json_schema', schema: { type: 'object', properties: { a: { type: 'string', format: 'date' } } } });
    expect(schema).toBeInstanceOf(EngineError);
    expect(schema).toMatchObject({ kind: 'invalid_request', param: 'text.format.schema', code: 'unsupported_json_schema_keyword' });
    expect((schema as Error).message).toContain('$.properties.a.format');
    const grammar = grab({ kind: 'tools', mode: 'auto', tools: [{ type: 'custom', name: 'g', grammar: { syntax: 'lark', definition: 'start: ("a"' } }] });
    expect(grammar).toMatchObject({ kind: 'invalid_request', param: 'tools', code: 'invalid_grammar' });
    expect(grab({ kind: 'tools', mode: 'named', name: 'x', tools: [] })).toMatchObject({ kind: 'invalid_request', param: 'tool_choice' });
    expect(grab({ kind: 'json_schema', schema: { type: 'object' } })).toBeNull();
  });
});
