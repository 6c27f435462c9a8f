// Regular expressions: the compiled automaton agrees with JavaScript's RegExp (full match) on generated
// strings, constrained walks produce only matching text, and unsupported or malformed patterns are
// ConstraintErrors with a position.
import { describe, expect, it } from 'vitest';
import { ConstraintError, compileConstraint } from '../../../src/sampling/constraints/index.ts';
import { customToolGrammar } from '../../../src/sampling/constraints/constraint-grammar.ts';
import { textMatcher } from './matcher-for-tests.ts';
import { decodeStrict, extractToolCalls, randomWalk, seededRandom } from './random-walk.ts';
import { byteLevelVocabulary } from './test-vocabulary.ts';

const PATTERNS = [
  'abc',
  'a|bc|',
  '[a-c]+x?',
  '(ab|c)*d{2,3}',
  '\\d{3}-\\d{4}',
  '[^a-z\\n]{1,4}',
  '(?:\\w+\\.)+(py|ts)',
  '.{0,3}é.',
  '[\\u00e0-\\u00ff]*',
  '\\s*\\S+',
  'x{2,}',
  '^(yes|no)$',
  '(?<year>[0-9]{4})-(0[1-9]|1[0-2])',
  '[\\]\\-\\\\]+',
  '[a-]\\[\\(\\)',
  '日本?語*',
  'a+?b*?',
];

/** Random strings over an alphabet that exercises each pattern (its own characters plus a few others). */
function samples(pattern: string, count: number, seed: number): string[] {
  const alphabet = [...new Set([...pattern.replace(/\\[dws]/g, ''), '0', '5', '9', 'a', 'z', 'Q', '_', ' ', '\n', '.', '-', 'é', 'ÿ', '日', '語'])];
  const random = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const length = Math.floor(random() * 9);
    let s = '';
    for (let k = 0; k < length; k++) s += alphabet[Math.floor(random() * alphabet.length)];
    out.push(s);
  }
  return out;
}

describe('regex compiler', () => {
  it.each(PATTERNS)('agrees with RegExp on generated strings: /%s/', (pattern) => {
    const matches = textMatcher(customToolGrammar('t', { syntax: 'regex', definition: pattern }));
    const reference = new RegExp(`^(?:${pattern.replace(/^\^/, '').replace(/\$$/, '')})$`, 'u');
    let positives = 0;
    for (const s of samples(pattern, 400, pattern.length)) {
      expect(matches(s), JSON.stringify(s)).toBe(reference.test(s));
      if (reference.test(s)) positives++;
    }
    // Also strings built to match: walks of the constraint itself, checked by RegExp.
    const { vocab, tokenBytes, endTokenId } = byteLevelVocabulary();
    const spec = { kind: 'tools' as const, mode: 'required' as const, tools: [{ type: 'custom' as const, name: 't', grammar: { syntax: 'regex' as const, definition: pattern } }] };
    let ended = 0;
    for (let seed = 1; seed <= 20; seed++) {
      // 1200 steps: after a call only a short gap may precede the end (bounded whitespace), so fewer steps can end the walk.
      const walk = randomWalk(compileConstraint(spec, vocab, { thinking: 'none' }), tokenBytes, endTokenId, seed, 1200);
      if (!walk.ended) continue;
      ended++;
      const text = decodeStrict(walk.bytes);
      const { calls } = extractToolCalls(text, false);
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) {
        expect(call.name).toBe('t');
        expect(Object.keys(call.arguments)).toEqual(['input']);
        expect(reference.test(call.arguments.input as string), JSON.stringify(call.arguments.input)).toBe(true);
      }
      positives++;
    }
    expect(ended).toBeGreaterThan(10);
    expect(positives).toBeGreaterThan(0);
  });

  it.each([
    ['(ab', 0, 'unterminated group'],
    ['ab)', 2, 'unbalanced'],
    ['a{3,2}', 1, 'out of order'],
    ['*a', 0, 'nothing to repeat'],
    ['(?=a)b', 0, 'lookaround'],
    ['(a)\\1', 3, 'backreferences'],
    ['\\bword', 0, 'word-boundary'],
    ['[z-a]', 0, 'out of order'],
    ['[abc', 0, 'unterminated character class'],
    ['a\\', 1, 'end of pattern'],
  ])('rejects %s with its position', (pattern, position, words) => {
    try {
      customToolGrammar('t', { syntax: 'regex', definition: pattern });
      expect.unreachable('should have thrown');
    } catch (e) {
      expect(e).toBeInstanceOf(ConstraintError);
      expect((e as ConstraintError).position).toBe(position);
      expect((e as Error).message).toContain(words);
      expect((e as Error).message).toContain("Custom tool 't'");
    }
  });
});
