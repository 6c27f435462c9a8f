// Whitespace in forced (required / named) tool calls is bounded in every chat format: between two JSON tokens at
// most one space, or one newline and an indent of at most MAX_JSON_INDENT spaces or tabs; between calls, after a
// reasoning block and at the end of the answer that or two newlines; nothing after phi4's
// `<|/tool_call|>`. Random weights otherwise fill every gap the grammar leaves open with whitespace tokens. JSON
// pretty-printed as models write it (2-space indent, a newline after `<tool_call>`, `</think>\n\n`) stays accepted.
import { describe, expect, it } from 'vitest';
import { CHAT_FORMATS, type ChatFormatName } from '../../../src/common/chat-format.ts';
import type { ConstrainedTool, ConstraintSpec } from '../../../src/engine/types.ts';
import { grammarForConstraint } from '../../../src/sampling/constraints/constraint-grammar.ts';
import { MAX_JSON_INDENT } from '../../../src/sampling/constraints/json-schema.ts';
import { textMatcher } from './matcher-for-tests.ts';

const WEATHER = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    unit: { enum: ['c', 'f'] },
    options: { type: 'object', properties: { days: { type: 'array', items: { type: 'integer' } }, hourly: { type: 'boolean' } }, required: ['days', 'hourly'], additionalProperties: false },
  },
  required: ['city', 'unit', 'options'],
  additionalProperties: false,
};
const TOOLS: ConstrainedTool[] = [
  { type: 'function', name: 'get_weather', parameters: WEATHER, strict: true },
  { type: 'function', name: 'ping', parameters: null, strict: false },
];
const ARGS = { city: 'Oslo', unit: 'c', options: { days: [1, 2], hourly: false } };

/** One call to get_weather in the format's shape, its JSON pretty-printed with `indent` (0: one line). */
function callText(format: ChatFormatName, indent: number): string {
  const json = (v: unknown) => (indent ? JSON.stringify(v, null, indent) : JSON.stringify(v));
  const call = (key: string) => json({ name: 'get_weather', [key]: ARGS });
  switch (format) {
    case 'hermes':
      return `<tool_call>\n${call('arguments')}\n</tool_call>`;
    case 'llama3':
      return call('parameters');
    case 'mistral':
      return `[TOOL_CALLS]${indent ? json([{ name: 'get_weather', arguments: ARGS }]) : `[${call('arguments')}]`}`;
    case 'gemma3':
      return '```tool_call\n' + call('arguments') + '\n```';
    case 'mistral-v11':
      return `[TOOL_CALLS]get_weather[ARGS]${json(ARGS)}`;
    case 'phi4':
      return `<|tool_call|>${indent ? json([{ name: 'get_weather', arguments: ARGS }]) : `[${call('arguments')}]`}<|/tool_call|>`;
    case 'harmony':
      return `<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>${json(ARGS)}`;
  }
}

const FORMATS = Object.keys(CHAT_FORMATS) as ChatFormatName[];

describe.each(FORMATS)('forced calls in %s', (format) => {
  const options = { format, markers: CHAT_FORMATS[format].markers, thinking: 'none' as const };
  const specs: [string, ConstraintSpec][] = [
    ['required', { kind: 'tools', mode: 'required', tools: TOOLS }],
    ['named', { kind: 'tools', mode: 'named', name: 'get_weather', tools: TOOLS }],
  ];

  it.each(specs)('%s: one-line and pretty-printed JSON (2- and 4-space, tab indents) are accepted', (_label, spec) => {
    const matches = textMatcher(grammarForConstraint(spec, options));
    for (const indent of [0, 2, 4]) expect(matches(callText(format, indent)), `indent ${indent}`).toBe(true);
    expect(matches(callText(format, 2).replaceAll('\n  ', '\n\t').replaceAll('  ', '\t'))).toBe(true);
    // An indent of MAX_JSON_INDENT is the most.
    const deepest = callText(format, 2).replace(/\n *"city"/, `\n${' '.repeat(MAX_JSON_INDENT)}"city"`);
    expect(deepest).toContain(' '.repeat(MAX_JSON_INDENT) + '"city"');
    expect(matches(deepest)).toBe(true);
    expect(matches(deepest.replace(' '.repeat(MAX_JSON_INDENT) + '"city"', ' '.repeat(MAX_JSON_INDENT + 1) + '"city"'))).toBe(false);
  });

  it.each(specs)('%s: a long whitespace run between JSON tokens is rejected', (_label, spec) => {
    const matches = textMatcher(grammarForConstraint(spec, options));
    const text = callText(format, 0);
    expect(text).toContain('"city":"Oslo"');
    for (const run of [' '.repeat(20), '  ', '\n\n', '\n\n\n\n', ' \n', '\t\t\t\t\t\t\t\t\t\t', '\r\n']) {
      expect(matches(text.replace('"city":"Oslo"', `"city":${run}"Oslo"`)), JSON.stringify(run)).toBe(false);
    }
    // One space, or one newline and an indent, is fine.
    for (const run of [' ', '\n', '\n    ']) expect(matches(text.replace('"city":"Oslo"', `"city":${run}"Oslo"`)), JSON.stringify(run)).toBe(true);
    // Between the arguments' last token and the close of the call.
    expect(matches(text.replace('false}}', `false}${' '.repeat(20)}}`))).toBe(false);
  });

  it.each(specs)('%s: whitespace after the call is at most two newlines (phi4: none after <|/tool_call|>)', (_label, spec) => {
    const matches = textMatcher(grammarForConstraint(spec, options));
    const text = callText(format, 2);
    expect(matches(text + ' '.repeat(20))).toBe(false);
    expect(matches(text + '\n\n\n')).toBe(false);
    const trailing = format === 'phi4' || format === 'mistral' || format === 'mistral-v11' || format === 'harmony' ? false : true;
    if (format === 'phi4') for (const run of [' ', '\n', '\n\n']) expect(matches(text + run), JSON.stringify(run)).toBe(false);
    if (trailing) expect(matches(text + '\n')).toBe(true);
  });
});

describe('between and before forced calls', () => {
  it('hermes: calls apart by at most two newlines; `</think>\\n\\n` before the call, not a longer run', () => {
    const options = { format: 'hermes' as const, markers: CHAT_FORMATS.hermes.markers, thinking: 'optional' as const };
    const matches = textMatcher(grammarForConstraint({ kind: 'tools', mode: 'required', tools: TOOLS }, options));
    const call = callText('hermes', 2);
    expect(matches(`${call}\n${call}`)).toBe(true);
    expect(matches(`${call}\n\n${call}`)).toBe(true);
    expect(matches(`${call}\n\n\n${call}`)).toBe(false);
    expect(matches(`${call}${' '.repeat(20)}${call}`)).toBe(false);
    expect(matches(`<think>\nhm\n</think>\n\n${call}`)).toBe(true);
    expect(matches(`<think>\nhm\n</think>\n\n\n\n${call}`)).toBe(false);
  });

  it('gemma3 blocks and llama3 calls apart by at most two newlines', () => {
    for (const [format, sep] of [['gemma3', ''], ['llama3', ';']] as const) {
      const options = { format, markers: CHAT_FORMATS[format].markers, thinking: 'none' as const };
      const matches = textMatcher(grammarForConstraint({ kind: 'tools', mode: 'required', tools: TOOLS }, options));
      const call = callText(format, 0);
      expect(matches(`${call}${sep}\n${call}`), format).toBe(true);
      expect(matches(`${call}${sep}${' '.repeat(20)}${call}`), format).toBe(false);
      expect(matches(`${call}${sep}\n\n\n\n${call}`), format).toBe(false);
    }
  });

  it('json_schema answers: the same bound inside the value and around it', () => {
    const matches = textMatcher(grammarForConstraint({ kind: 'json_schema', schema: WEATHER }));
    expect(matches(`\n${JSON.stringify(ARGS, null, 2)}\n`)).toBe(true);
    expect(matches(JSON.stringify(ARGS).replace('"city":', `"city":${' '.repeat(20)}`))).toBe(false);
    expect(matches(`${JSON.stringify(ARGS)}${' '.repeat(20)}`)).toBe(false);
  });
});
