// The tool-call constraint of each JSON-call chat format against that format's output parser: random walks through
// the forced (required / named) grammar end as calls the parser reads back as calls to the declared tools with
// arguments their schemas accept (a custom tool's input matching its regex), never as text; auto-mode walks are
// text or such calls, never a call to an undeclared tool and never a marker in the text; a call to an undeclared
// tool cannot be written; a call limit holds.
import { describe, expect, it } from 'vitest';
import { CHAT_FORMATS, type ChatFormatName } from '../../../src/common/chat-format.ts';
import type { ConstrainedTool, ConstraintSpec } from '../../../src/engine/types.ts';
import { OutputParser, type ParseEvent } from '../../../src/responses/output-parser.ts';
import { compileConstraint, type Vocabulary } from '../../../src/sampling/constraints/index.ts';
import { validateJson } from '../constraints/json-schema-validator.ts';
import { decodeStrict, forcedWalk, randomWalk } from '../constraints/random-walk.ts';

const WEATHER = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['c', 'f'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const TOOLS: ConstrainedTool[] = [
  { type: 'function', name: 'get_weather', parameters: WEATHER, strict: true },
  { type: 'function', name: 'ping', parameters: null, strict: false },
  { type: 'custom', name: 'shell', grammar: { syntax: 'regex', definition: '(ls|cat) [a-z./]{1,12}' } },
];

/** A byte-level vocabulary with the formats' markers and JSON merges as whole tokens, and one end token. */
function vocabulary(): { vocab: Vocabulary; tokenBytes: Uint8Array[]; endTokenId: number } {
  const encoder = new TextEncoder();
  const tokenBytes: Uint8Array[] = [];
  for (let b = 0; b < 256; b++) tokenBytes.push(Uint8Array.of(b));
  const merges = ['[TOOL_CALLS]', '[ARGS]', '<|tool_call|>', '<|/tool_call|>', '<|python_tag|>', '```tool_call', '```', '\n```', '"parameters"', '"arguments"', '"name"', '"input"', '{"', '":', '": ', ', ', '"}', '}]', '[{', 'get_weather', 'ping', 'shell', 'ls ', 'cat ', ' the', 'hello'];
  for (const m of merges) tokenBytes.push(encoder.encode(m));
  const endTokenId = tokenBytes.length;
  return { vocab: { tokens: [...tokenBytes, null], endTokenIds: [endTokenId] }, tokenBytes, endTokenId };
}

interface ParsedCall {
  name: string;
  args: string;
  complete: boolean;
}

/** The output through the format's OutputParser, fed in small pieces: its calls and its text. */
function parse(format: ChatFormatName, text: string): { calls: ParsedCall[]; text: string } {
  const parser = new OutputParser({
    markers: CHAT_FORMATS[format].markers,
    format,
    toolCalls: true,
    declaredNames: new Set(TOOLS.map((t) => t.name)),
    customNames: new Set(TOOLS.filter((t) => t.type === 'custom').map((t) => t.name)),
    startsInReasoning: false,
  });
  const events: ParseEvent[] = [];
  for (let i = 0; i < text.length; i += 2) events.push(...parser.push(text.slice(i, i + 2)));
  events.push(...parser.finish());
  const calls: ParsedCall[] = [];
  let said = '';
  for (const e of events) {
    if (e.kind === 'call.start') calls.push({ name: e.name, args: '', complete: false });
    else if (e.kind === 'call.delta') calls.at(-1)!.args += e.text;
    else if (e.kind === 'call.end') calls.at(-1)!.complete = e.complete;
    else if (e.kind === 'text.delta') said += e.text;
  }
  return { calls, text: said };
}

function checkCall(call: ParsedCall): void {
  expect(call.complete, JSON.stringify(call)).toBe(true);
  const tool = TOOLS.find((t) => t.name === call.name);
  expect(tool?.name, call.name).toBe(call.name);
  if (tool!.type === 'custom') {
    expect(call.args).toMatch(/^(ls|cat) [a-z./]{1,12}$/);
    return;
  }
  const args: unknown = JSON.parse(call.args);
  expect(typeof args === 'object' && args !== null && !Array.isArray(args), call.args).toBe(true);
  if (tool!.name === 'get_weather') expect(validateJson(args, WEATHER), call.args).toBeNull();
}

const FORMATS: { format: ChatFormatName; markers: string[]; undeclared: string }[] = [
  { format: 'llama3', markers: ['<|python_tag|>'], undeclared: '{"name": "launch", "parameters": {}}' },
  { format: 'mistral', markers: ['[TOOL_CALLS]'], undeclared: '[TOOL_CALLS][{"name": "launch", "arguments": {}}]' },
  { format: 'gemma3', markers: ['```tool_call'], undeclared: '```tool_call\n{"name": "launch", "arguments": {}}\n```' },
  { format: 'mistral-v11', markers: ['[TOOL_CALLS]', '[ARGS]'], undeclared: '[TOOL_CALLS]launch[ARGS]{}' },
  { format: 'phi4', markers: ['<|tool_call|>', '<|/tool_call|>'], undeclared: '<|tool_call|>[{"name": "launch", "arguments": {}}]<|/tool_call|>' },
];

describe.each(FORMATS)('the $format tool-call constraint', ({ format, markers, undeclared }) => {
  const { vocab, tokenBytes, endTokenId } = vocabulary();
  const options = { format, markers: CHAT_FORMATS[format].markers, thinking: 'none' as const };

  it.each([
    ['required', { kind: 'tools', mode: 'required', tools: TOOLS }],
    ['named shell', { kind: 'tools', mode: 'named', name: 'shell', tools: TOOLS }],
    ['named get_weather', { kind: 'tools', mode: 'named', name: 'get_weather', tools: TOOLS }],
  ] as [string, ConstraintSpec][])('%s: every finished walk is calls the parser reads back, no text', (_label, spec) => {
    let ended = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const constraint = compileConstraint(spec, vocab, options);
      const walk = randomWalk(constraint, tokenBytes, endTokenId, seed * 7919, 700);
      if (!walk.ended) continue;
      ended++;
      const text = decodeStrict(walk.bytes);
      const parsed = parse(format, text);
      expect(parsed.calls.length, text).toBeGreaterThan(0);
      expect(parsed.text.trim(), text).toBe('');
      for (const call of parsed.calls) {
        checkCall(call);
        if (spec.kind === 'tools' && spec.mode === 'named') expect(call.name).toBe(spec.name);
      }
    }
    expect(ended).toBeGreaterThan(10);
  });

  it('auto: walks are text or calls to declared tools; no marker reaches the text', () => {
    let calls = 0;
    let texts = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const constraint = compileConstraint({ kind: 'tools', mode: 'auto', tools: TOOLS }, vocab, options);
      // Half the walks are pushed into a call's opening, as a model choosing to call would be.
      const prefix = seed % 2 === 0 ? markers[0]! : '';
      for (const byte of new TextEncoder().encode(prefix)) constraint.accept(byte);
      const walk = randomWalk(constraint, tokenBytes, endTokenId, seed * 104729, 600);
      if (!walk.ended) continue;
      const text = prefix + decodeStrict(walk.bytes);
      const parsed = parse(format, text);
      for (const call of parsed.calls) checkCall(call);
      for (const marker of markers) expect(parsed.text, text).not.toContain(marker);
      if (parsed.calls.length > 0) calls++;
      else texts++;
    }
    expect(calls).toBeGreaterThan(3);
    expect(texts).toBeGreaterThan(3);
  });

  it('a call to an undeclared tool cannot be written, though the parser would keep it as text', () => {
    for (const mode of ['auto', 'required'] as const) {
      const constraint = compileConstraint({ kind: 'tools', mode, tools: TOOLS }, vocab, options);
      expect(forcedWalk(constraint, undeclared)).toBeLessThan(undeclared.length);
    }
    expect(parse(format, undeclared)).toMatchObject({ calls: [], text: expect.stringContaining('launch') });
  });

  it('a well-formed declared call is accepted whole and ends the constraint', () => {
    const call = {
      llama3: '{"name": "get_weather", "parameters": {"city": "Oslo", "unit": "c"}}',
      mistral: '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "c"}}]',
      gemma3: '```tool_call\n{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "c"}}\n```',
      'mistral-v11': '[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo", "unit": "c"}',
      phi4: '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "c"}}]<|/tool_call|>',
    }[format as 'llama3' | 'mistral' | 'gemma3' | 'mistral-v11' | 'phi4'];
    const constraint = compileConstraint({ kind: 'tools', mode: 'required', tools: TOOLS, maxCalls: 1 }, vocab, options);
    expect(forcedWalk(constraint, call)).toBe(call.length);
    expect(constraint.canEnd()).toBe(true);
    expect(parse(format, call).calls).toEqual([{ name: 'get_weather', args: '{"city": "Oslo", "unit": "c"}', complete: true }]);
  });

  it('maxCalls 1: a second call cannot start', () => {
    for (let seed = 1; seed <= 15; seed++) {
      const constraint = compileConstraint({ kind: 'tools', mode: 'required', tools: TOOLS, maxCalls: 1 }, vocab, options);
      const walk = randomWalk(constraint, tokenBytes, endTokenId, seed * 31337, 600);
      if (!walk.ended) continue;
      expect(parse(format, decodeStrict(walk.bytes)).calls).toHaveLength(1);
    }
  });
});
