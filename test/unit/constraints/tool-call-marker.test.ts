// The tool-call constraint and the Responses output parser agree on where a call ends: the constraint never lets
// a call's JSON hold the end marker `</tool_call>` as raw text (inside strings it must be escaped: `<\/tool_call>`
// or `</tool_call\u003e`), so the first marker after `<tool_call>` is the end for any reader; and the escaped
// spellings decode back to the original text through the parser, apply_patch payloads included.
import { describe, expect, it } from 'vitest';
import { applyPatchLarkGrammar } from '../../../src/demo/apply-patch-grammar.ts';
import type { ConstrainedTool, ConstraintSpec } from '../../../src/engine/types.ts';
import { OutputParser, type ParseEvent } from '../../../src/responses/output-parser.ts';
import { ANY_CHAR, chars, lit, ref, repeat, seq, without } from '../../../src/sampling/constraints/grammar-ir.ts';
import { ConstraintError, type TokenConstraint, compileConstraint } from '../../../src/sampling/constraints/index.ts';
import { FAKE_MODEL } from '../../support/fake-engine.ts';
import { textMatcher } from './matcher-for-tests.ts';
import { allowedIds, forcedWalk, seededRandom } from './random-walk.ts';
import { byteLevelVocabulary } from './test-vocabulary.ts';

const TOOLS: ConstrainedTool[] = [
  { type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false }, strict: true },
  { type: 'function', name: 'anything', parameters: null, strict: false },
  { type: 'custom', name: 'free' },
  { type: 'custom', name: 'apply_patch', grammar: { syntax: 'lark', definition: applyPatchLarkGrammar } },
  { type: 'custom', name: 'tagged', grammar: { syntax: 'regex', definition: '<[a-z_/]{1,12}>' } },
];
const CUSTOM = new Set(['free', 'apply_patch', 'tagged']);
const SPEC: ConstraintSpec = { kind: 'tools', mode: 'required', tools: TOOLS };
const { vocab, tokenBytes, endTokenId } = byteLevelVocabulary();
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const END = '</tool_call>';
const END_TOKEN = tokenBytes.findIndex((b) => decoder.decode(b) === END);

const compile = (): TokenConstraint => compileConstraint(SPEC, vocab, { thinking: 'none' });

/** Whether `text` (JSON, possibly cut short) stops inside a string. */
function endsInsideString(text: string): boolean {
  let inside = false;
  for (let i = 0; i < text.length; i++) {
    if (inside && text[i] === '\\') i++;
    else if (text[i] === '"') inside = !inside;
  }
  return inside;
}

/** The calls the Responses output parser reads from `text` (fed in small pieces). */
function parseCalls(text: string): { name: string; args: string; complete: boolean }[] {
  const parser = new OutputParser({ markers: FAKE_MODEL.markers, toolCalls: true, customNames: CUSTOM, startsInReasoning: false });
  const events: ParseEvent[] = [];
  for (let i = 0; i < text.length; i += 3) events.push(...parser.push(text.slice(i, i + 3)));
  events.push(...parser.finish());
  const calls: { name: string; args: string; complete: boolean }[] = [];
  for (const e of events) {
    if (e.kind === 'call.start') calls.push({ name: e.name, args: '', complete: false });
    else if (e.kind === 'call.delta') calls.at(-1)!.args += e.text;
    else if (e.kind === 'call.end') calls.at(-1)!.complete = e.complete;
    else if (e.kind === 'text.delta' && e.text.trim() !== '') throw new Error(`text outside calls: ${JSON.stringify(e.text)}`);
  }
  return calls;
}

const call = (name: string, args: unknown, escape: (json: string) => string = (j) => j) =>
  `<tool_call>\n${escape(JSON.stringify({ name, arguments: args }))}\n</tool_call>`;
const solidus = (json: string) => json.replaceAll('</', '<\\/');
const unicode = (json: string) => json.replaceAll(END, '</tool_call\\u003e');

const PATCH = '*** Begin Patch\n*** Add File: notes.md\n+Hermes calls end with </tool_call> and start with <tool_call>.\n+done\n*** End Patch\n';

describe('the end marker inside a call (forced walks)', () => {
  const cases: [string, unknown, (args: unknown) => unknown][] = [
    ['lookup', { q: `say ${END} twice ${END}` }, (a) => a],
    ['anything', { nested: [{ k: END }], [`key${END}`]: 1 }, (a) => a],
    ['free', { input: `raw ${END} inside` }, (a) => (a as { input: string }).input],
    ['apply_patch', { input: PATCH }, (a) => (a as { input: string }).input],
    ['tagged', { input: END }, (a) => (a as { input: string }).input],
  ];

  it.each(cases)('%s: a raw marker in a string is refused at its last character', (name, args) => {
    const text = call(name, args);
    const refusedAt = forcedWalk(compile(), text);
    const prefix = `<tool_call>\n${JSON.stringify({ name, arguments: args })}`;
    // The refusal comes exactly where the first raw marker inside the JSON would be complete.
    expect(refusedAt).toBe(encoder.encode(prefix.slice(0, prefix.indexOf(END, 1) + END.length - 1)).length);
  });

  it.each(cases)('%s: escaped as <\\/ or \\u003e it is accepted and parses back to the original', (name, args, expected) => {
    for (const escape of [solidus, unicode]) {
      const text = call(name, args, escape);
      const constraint = compile();
      expect(forcedWalk(constraint, text)).toBe(encoder.encode(text).length);
      expect(constraint.canEnd()).toBe(true);
      const [parsed, ...rest] = parseCalls(text);
      expect(rest).toEqual([]);
      expect(parsed).toMatchObject({ name, complete: true });
      const value = CUSTOM.has(name) ? parsed!.args : JSON.parse(parsed!.args);
      expect(value).toEqual(expected(args));
    }
  });

  it('the tool name and the envelope are unaffected; the marker after the JSON still ends the call', () => {
    const constraint = compile();
    const text = call('lookup', { q: 'plain' });
    expect(forcedWalk(constraint, text)).toBe(encoder.encode(text).length);
    expect(parseCalls(text)).toEqual([{ name: 'lookup', args: '{"q":"plain"}', complete: true }]);
  });
});

describe('the end marker inside a call (random walks)', () => {
  it('wherever the marker may come next, the text since <tool_call> is a whole call: no raw marker inside the JSON', () => {
    let markersInStrings = 0;
    let ended = 0;
    for (let seed = 1; seed <= 16; seed++) {
      const constraint = compile();
      const random = seededRandom(seed);
      let text = '';
      // Where the current call's JSON starts (-1 between calls), reading markers as the parser does.
      let open = -1;
      let searchFrom = 0;
      const bodies: string[] = [];
      for (let step = 0; step < 500; step++) {
        const allowed = allowedIds(constraint.allowedMask(), constraint.vocabSize);
        const inCall = open >= 0;
        const markerNext = allowed.includes(END_TOKEN) || (text.endsWith(END.slice(0, -1)) && allowed.includes(0x3e));
        if (inCall && markerNext) {
          // A marker allowed here must close the call: what precedes it is the call's whole JSON.
          const body = text.slice(open, text.endsWith(END.slice(0, -1)) ? -(END.length - 1) : undefined);
          expect(() => JSON.parse(body), `${seed}: ${JSON.stringify(text)}`).not.toThrow();
        }
        const inString = inCall && endsInsideString(text.slice(open));
        // Lean hard towards the marker and its pieces, inside strings above all, and towards finishing late.
        const tempting = allowed.filter((id) => id === END_TOKEN || ['<', '/', '</', '>'].includes(decoder.decode(tokenBytes[id] ?? new Uint8Array())));
        let pool = allowed;
        if (allowed.includes(endTokenId) && random() < 0.3) pool = [endTokenId];
        else if (tempting.length > 0 && random() < (inString ? 0.6 : 0.2)) pool = tempting;
        const id = pool[Math.floor(random() * pool.length)]!;
        if (inString && id === END_TOKEN) markersInStrings++;
        constraint.accept(id);
        if (id === endTokenId) {
          ended++;
          // Cutting each call at its first marker (the parser's reading) gives whole JSON calls.
          expect(bodies.length).toBeGreaterThan(0);
          for (const body of bodies) expect(() => JSON.parse(body), body).not.toThrow();
          expect(parseCalls(text).every((c) => c.complete)).toBe(true);
          break;
        }
        text += decoder.decode(tokenBytes[id]!);
        if (open < 0 && text.indexOf('<tool_call>', searchFrom) >= 0) open = text.indexOf('<tool_call>', searchFrom) + '<tool_call>'.length;
        if (open >= 0 && text.indexOf(END, open) >= 0) {
          bodies.push(text.slice(open, text.indexOf(END, open)));
          searchFrom = text.indexOf(END, open) + END.length;
          open = -1;
        }
      }
    }
    expect(ended).toBeGreaterThanOrEqual(8);
    expect(markersInStrings).toBe(0);
  });
});

describe('exclusion regions (without) in the matcher', () => {
  it('match exactly the texts of the item that do not contain the literal, through called rules too', () => {
    // The item reaches its text through a rule, so the literal is tracked across calls and returns.
    const rules = new Map([
      ['start', seq(lit('['), without(repeat(ref('piece'), 0), 'abab'), lit(']'))],
      ['piece', chars([0x61, 0x63])],
    ]);
    const matches = textMatcher({ rules, start: 'start' });
    const random = seededRandom(5);
    for (let n = 0; n < 400; n++) {
      const inner = Array.from({ length: Math.floor(random() * 10) }, () => 'abc'[Math.floor(random() * 3)]).join('');
      expect(matches(`[${inner}]`), inner).toBe(!inner.includes('abab'));
    }
    expect(matches('[ababab]')).toBe(false);
    expect(matches('[abaab]')).toBe(true);
  });

  it('do not nest', () => {
    const rules = new Map([['start', without(seq(lit('x'), ref('inner')), 'ab')], ['inner', without(repeat(chars(ANY_CHAR), 0), 'cd')]]);
    expect(() => textMatcher({ rules, start: 'start' })).toThrow(ConstraintError);
  });
});
