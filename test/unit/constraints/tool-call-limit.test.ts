// The tool-call constraint counts calls: with `maxCalls` N, once N calls are complete the only token it allows is
// the end of the turn (in auto, required and named mode), while without a limit another call may start. Checked
// on forced walks (the text of calls fed byte by byte), on random walks read by the Responses output parser, and
// through the path the handler takes (request body -> preparePrompt -> GenerateRequest.constraint -> compiled).
import { describe, expect, it } from 'vitest';
import type { ConstrainedTool, ConstraintSpec } from '../../../src/engine/types.ts';
import { OutputParser } from '../../../src/responses/output-parser.ts';
import {
  ConstraintError,
  MAX_COUNTED_TOOL_CALLS,
  type TokenConstraint,
  type ToolsConstraintSpec,
  compileConstraint,
} from '../../../src/sampling/constraints/index.ts';
import { FAKE_MODEL } from '../../support/fake-engine.ts';
import { post, setup } from '../responses/harness.ts';
import { allowedIds, forcedWalk, seededRandom } from './random-walk.ts';
import { byteLevelVocabulary } from './test-vocabulary.ts';

const TOOLS: ConstrainedTool[] = [
  { type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false }, strict: true },
  { type: 'function', name: 'loose', parameters: null, strict: false },
  { type: 'custom', name: 'shell', grammar: { syntax: 'regex', definition: '(ls|cat) [a-z./]{1,8}' } },
];
const { vocab, tokenBytes, endTokenId } = byteLevelVocabulary();
const encoder = new TextEncoder();
const START = encoder.encode('<tool_call>');

const callText = (i: number) =>
  i % 2 === 0
    ? `<tool_call>\n{"name": "lookup", "arguments": {"q": "call ${i}"}}\n</tool_call>`
    : `<tool_call>{"name": "shell", "arguments": {"input": "ls a${'/'.repeat(i % 3)}b"}}</tool_call>`;

/** Feeds `text` one byte token at a time (the first 256 ids of the test vocabulary are the single bytes). */
function feed(constraint: TokenConstraint, text: string): void {
  for (const byte of encoder.encode(text)) constraint.accept(byte);
}

/** Whether the marker `<tool_call>` can be produced next, one byte token after the other. */
function callCanStart(constraint: TokenConstraint): boolean {
  return constraint.isAllowed(START[0]!);
}

function compile(mode: 'auto' | 'required' | 'named', maxCalls?: number): TokenConstraint {
  const spec: ToolsConstraintSpec = { kind: 'tools', mode, ...(mode === 'named' ? { name: 'shell' } : {}), tools: TOOLS, ...(maxCalls === undefined ? {} : { maxCalls }) };
  return compileConstraint(spec, vocab, { thinking: 'none' });
}

describe('tool-call limit in the constraint (forced walks)', () => {
  it.each([
    ['auto', 1],
    ['auto', 3],
    ['required', 1],
    ['required', 2],
    ['named', 1],
    ['named', 2],
  ] as const)('mode %s, limit %i: after that many calls every allowed token ends the turn', (mode, limit) => {
    const constraint = compile(mode, limit);
    if (mode === 'auto') feed(constraint, 'Let me look. ');
    for (let i = 0; i < limit; i++) {
      if (i > 0) feed(constraint, mode === 'auto' ? ' and ' : '\n');
      // Before the limit is reached, another call may start.
      expect(callCanStart(constraint)).toBe(true);
      feed(constraint, callText(mode === 'named' ? 1 : i));
    }
    expect(allowedIds(constraint.allowedMask(), constraint.vocabSize)).toEqual([endTokenId]);
    expect(constraint.canEnd()).toBe(true);
    expect(() => constraint.accept(START[0]!)).toThrow(ConstraintError);
    constraint.accept(endTokenId);
    expect(constraint.isComplete()).toBe(true);
  });

  it.each(['auto', 'required', 'named'] as const)('mode %s without a limit: a second call can start after the first', (mode) => {
    for (const maxCalls of [undefined, Infinity, MAX_COUNTED_TOOL_CALLS + 1]) {
      const constraint = compile(mode, maxCalls);
      feed(constraint, callText(1));
      expect(callCanStart(constraint)).toBe(true);
      feed(constraint, callText(1));
      expect(callCanStart(constraint)).toBe(true);
      expect(constraint.canEnd()).toBe(true);
    }
  });

  it('limit 0 in auto mode admits text but never a whole call marker; forced modes refuse it', () => {
    const constraint = compile('auto', 0);
    feed(constraint, 'No calls here, <tool_call');
    expect(constraint.isAllowed('>'.charCodeAt(0))).toBe(false);
    expect(constraint.canEnd()).toBe(true);
    expect(() => compile('required', 0)).toThrow(/requires a tool call/);
    expect(() => compile('auto', 1.5)).toThrow(ConstraintError);
    expect(() => compile('auto', -1)).toThrow(ConstraintError);
  });
});

describe('tool-call limit in the constraint (random walks read by the output parser)', () => {
  it.each([
    ['auto', 1],
    ['required', 1],
    ['required', 2],
  ] as const)('mode %s, limit %i: once the parser has read that many calls only the end token is allowed', (mode, limit) => {
    let reachedLimit = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const constraint = compile(mode, limit);
      const parser = new OutputParser({ markers: FAKE_MODEL.markers, toolCalls: true, customNames: new Set(['shell']), startsInReasoning: false });
      const random = seededRandom(seed);
      let complete = 0;
      // Auto mode rarely opens a call by chance: start it, as a model deciding to call would.
      if (mode === 'auto') {
        feed(constraint, '<tool_call>');
        parser.push('<tool_call>');
      }
      for (let step = 0; step < 400; step++) {
        const allowed = allowedIds(constraint.allowedMask(), constraint.vocabSize);
        if (complete === limit) {
          expect(allowed).toEqual([endTokenId]);
          reachedLimit++;
          break;
        }
        expect(complete).toBeLessThan(limit);
        // Lean towards short structural tokens and starting the next call, so walks reach the limit.
        const structural = allowed.filter((id) => id !== endTokenId && !/[0-9A-Za-z]/.test(String.fromCharCode(...tokenBytes[id]!)));
        const opening = allowed.filter((id) => id === START[0]);
        const pool = opening.length > 0 && random() < 0.7 ? opening : structural.length > 0 && random() < 0.6 ? structural : allowed;
        const id = pool[Math.floor(random() * pool.length)]!;
        constraint.accept(id);
        if (id === endTokenId) break;
        const events = parser.push(new TextDecoder().decode(tokenBytes[id]!));
        complete += events.filter((e) => e.kind === 'call.end' && e.complete).length;
      }
    }
    expect(reachedLimit).toBeGreaterThanOrEqual(6);
  });
});

describe('tool-call limit through the handler path', () => {
  const lookup = { type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false };
  const twoCalls = `${callText(0)}${callText(0)}`;

  /** The constraint the handler hands the engine for `body`, compiled as an engine compiles it. */
  async function constraintOf(body: Record<string, unknown>): Promise<{ spec: ConstraintSpec; constraint: TokenConstraint }> {
    const { handler, engine } = setup([{ tokens: ['ok'] }]);
    const response = await post(handler, '/responses', { input: 'weather?', tools: [lookup], ...body });
    expect(response.status).toBe(200);
    const spec = engine.requests[0]!.constraint;
    return { spec, constraint: compileConstraint(spec, vocab, { thinking: 'none' }) };
  }

  it.each(['auto', 'required', 'named'] as const)('parallel_tool_calls false, tool_choice %s: a second call cannot start', async (choice) => {
    const toolChoice = choice === 'named' ? { type: 'function', name: 'lookup' } : choice;
    const { spec, constraint } = await constraintOf({ parallel_tool_calls: false, tool_choice: toolChoice });
    expect(spec).toMatchObject({ kind: 'tools', maxCalls: 1 });
    expect(forcedWalk(constraint, twoCalls)).toBe(encoder.encode(callText(0)).length);
    expect(allowedIds(constraint.allowedMask(), constraint.vocabSize)).toEqual([endTokenId]);
  });

  it('max_tool_calls limits the same way; parallel calls without a limit stay possible', async () => {
    const limited = await constraintOf({ max_tool_calls: 2, tool_choice: 'required' });
    expect(limited.spec).toMatchObject({ maxCalls: 2 });
    const three = `${twoCalls}${callText(0)}`;
    expect(forcedWalk(limited.constraint, three)).toBe(encoder.encode(twoCalls).length);

    const free = await constraintOf({ tool_choice: 'required' });
    expect(free.spec).not.toHaveProperty('maxCalls');
    expect(forcedWalk(free.constraint, three)).toBe(encoder.encode(three).length);
  });

  it('a forced call with max_tool_calls 0 is refused before generating', async () => {
    const { handler, engine } = setup([{ tokens: ['never'] }]);
    const response = await post(handler, '/responses', { input: 'x', tools: [lookup], tool_choice: 'required', max_tool_calls: 0 });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { param: string } }).error.param).toBe('max_tool_calls');
    expect(engine.requests).toHaveLength(0);
  });
});
