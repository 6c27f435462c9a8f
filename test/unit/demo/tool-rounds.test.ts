import { describe, expect, it } from 'vitest';
import { applyPatch, isToolError, MAX_TOOL_ROUNDS, runDemoTool, ToolRounds } from '../../../src/demo/demo-tools';

const patch = (old: string, neu: string) => `*** Begin Patch\n*** Update File: notes.txt\n@@\n-${old}\n+${neu}\n*** End Patch`;

describe('the demo page tool loop (ToolRounds)', () => {
  it('lets the model call tools for MAX_TOOL_ROUNDS rounds, then asks for an answer with max_tool_calls 0', () => {
    const rounds = new ToolRounds();
    for (let i = 0; i < MAX_TOOL_ROUNDS; i++) {
      expect(rounds.answerOnly).toBe(false);
      expect(rounds.requestFields()).toEqual({});
      rounds.record([{ name: 'calculator', input: JSON.stringify({ expression: `${i} + 1` }) }], [String(i + 1)]);
    }
    expect(rounds.answerOnly).toBe(true);
    expect(rounds.requestFields()).toEqual({ max_tool_calls: 0 });
  });

  it('asks for an answer as soon as a call that failed in this turn comes again', () => {
    const state = { file: 'Shopping list\n- bread\n- milk\n' };
    const call = { name: 'apply_patch', input: patch('- cracking list', '- basil') };
    const rounds = new ToolRounds();
    const first = runDemoTool(call.name, call.input, state);
    expect(first).toMatch(/^Error: hunk does not match the file/);
    rounds.record([call], [first]);
    expect(rounds.answerOnly).toBe(false);
    rounds.record([call], [runDemoTool(call.name, call.input, state)]);
    expect(rounds.answerOnly).toBe(true);
    expect(state.file).toBe('Shopping list\n- bread\n- milk\n');
  });

  it('does not count a repeated call that worked, or a different failing call, as a retry loop', () => {
    const rounds = new ToolRounds();
    const ok = { name: 'calculator', input: '{"expression":"2 + 2"}' };
    rounds.record([ok], ['4']);
    rounds.record([ok], ['4']);
    expect(rounds.answerOnly).toBe(false);
    const bad1 = { name: 'get_time', input: '{"timezone":"Mars/Olympus"}' };
    const bad2 = { name: 'get_time', input: '{"timezone":"Mars/Base"}' };
    rounds.record([bad1], [runDemoTool(bad1.name, bad1.input, { file: '' })]);
    expect(rounds.answerOnly).toBe(false);
    rounds.record([bad2], ['Error: Invalid time zone specified: Mars/Base']);
    expect(rounds.answerOnly).toBe(true); // the fourth round
  });

  it('reads the page tool errors as errors and results as results', () => {
    expect(isToolError(runDemoTool('calculator', '{"expression":"19 grams"}', { file: '' }))).toBe(true);
    expect(isToolError('Error: there is no tool named weather here.')).toBe(true);
    expect(isToolError('Unknown tool weather')).toBe(true);
    expect(isToolError(runDemoTool('calculator', '{"expression":"(2 + 3) * 4.5"}', { file: '' }))).toBe(false);
    expect(isToolError(`Done. notes.txt now has 4 lines.`)).toBe(false);
    expect(applyPatch('Shopping list\n- bread\n', patch('- bread', '- Errors of mine'))).toBe('Shopping list\n- Errors of mine\n');
    expect(isToolError('Errors of mine')).toBe(false);
  });
});
