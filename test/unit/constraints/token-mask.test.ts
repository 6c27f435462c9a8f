// Token masks: the trie walk gives exactly the tokens whose bytes, stepped one by one from the current state,
// stay in the language (checked token by token along walks), end tokens are allowed exactly when the output may
// end, and `accept` refuses what the mask refused.
import { describe, expect, it } from 'vitest';
import { ConstraintError, compileConstraint } from '../../../src/sampling/constraints/index.ts';
import type { ConstraintSpec } from '../../../src/engine/types.ts';
import { grammarForConstraint } from '../../../src/sampling/constraints/constraint-grammar.ts';
import { compileGrammar } from '../../../src/sampling/constraints/byte-automaton.ts';
import { PdaRuntime } from '../../../src/sampling/constraints/pda-matcher.ts';
import { computeMask } from '../../../src/sampling/constraints/token-constraint.ts';
import { tokenTrieFor } from '../../../src/sampling/constraints/token-trie.ts';
import { allowedIds, seededRandom } from './random-walk.ts';
import { byteLevelVocabulary } from './test-vocabulary.ts';

describe('token masks', () => {
  const { vocab, tokenBytes, endTokenId } = byteLevelVocabulary();

  it('equal a token-by-token check along random walks', () => {
    const specs: ConstraintSpec[] = [
      { kind: 'json_schema', schema: { type: 'object', properties: { s: { type: 'string', pattern: '^(ab|a[0-9é]+|日本語)+$' }, n: { type: 'number' } }, required: ['s', 'n'], additionalProperties: false } },
      { kind: 'tools', mode: 'auto', tools: [{ type: 'custom', name: 't', grammar: { syntax: 'lark', definition: 'start: ("ab" | "a" /[0-9é]+/ | "{\\"x\\": " /[a-z]*/ "}")+' } }] },
    ];
    const random = seededRandom(5);
    for (const spec of specs) {
      for (let walk = 0; walk < 3; walk++) {
        const constraint = compileConstraint(spec, vocab);
        // The same grammar in a separate runtime (no shared memo or mask cache), stepped token by token.
        const reference = new PdaRuntime(compileGrammar(grammarForConstraint(spec)));
        let state = reference.initial;
        for (let step = 0; step < 40; step++) {
          const mask = constraint.allowedMask();
          // The walk with the subtree shortcut tried everywhere gives the same mask.
          expect(computeMask(reference, state, tokenTrieFor(vocab), 1)).toEqual(mask);
          for (let id = 0; id < vocab.tokens.length; id++) {
            const inMask = (mask[id >> 5] & (1 << (id & 31))) !== 0;
            const expected = id === endTokenId ? state.accepting : id < tokenBytes.length && reference.stepBytes(state, tokenBytes[id]) !== null;
            if (inMask !== expected) throw new Error(`token ${id} in mask: ${inMask}, expected ${expected} (step ${step})`);
            expect(constraint.isAllowed(id)).toBe(expected);
          }
          const allowed = allowedIds(mask, vocab.tokens.length);
          const id = allowed[Math.floor(random() * allowed.length)];
          constraint.accept(id);
          if (id === endTokenId) {
            expect(constraint.isComplete()).toBe(true);
            expect(allowedIds(constraint.allowedMask(), vocab.tokens.length)).toEqual([]);
            break;
          }
          state = reference.stepBytes(state, tokenBytes[id])!;
          expect(constraint.canEnd()).toBe(state.accepting);
        }
      }
    }
  });

  it('refuses tokens outside the mask, and end tokens before the output is complete', () => {
    const c = compileConstraint({ kind: 'json_schema', schema: { enum: ['yes', 'no'] } }, vocab);
    expect(() => c.accept('x'.charCodeAt(0))).toThrow(ConstraintError);
    expect(() => c.accept(endTokenId)).toThrow(/before the constrained output is complete/);
    for (const b of new TextEncoder().encode('"no"')) c.accept(b);
    expect(c.canEnd()).toBe(true);
    expect(c.isComplete()).toBe(false); // trailing whitespace may still follow
    expect(allowedIds(c.allowedMask(), vocab.tokens.length)).toContain(endTokenId);
    c.accept(endTokenId);
    expect(c.isComplete()).toBe(true);
    expect(() => c.accept('"'.charCodeAt(0))).toThrow(ConstraintError);
  });

  it('a string vocabulary and kind none', () => {
    const words = { tokens: ['{', '}', '"a"', ':', '1', ' ', 'hello', null], endTokenIds: [7] };
    const c = compileConstraint({ kind: 'json_schema', schema: { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'], additionalProperties: false } }, words);
    expect(allowedIds(c.allowedMask(), 8)).toEqual([0, 5]);
    for (const id of [0, 2, 3, 4, 1]) c.accept(id);
    expect(allowedIds(c.allowedMask(), 8)).toEqual([5, 7]);
    const none = compileConstraint({ kind: 'none' }, words);
    expect(allowedIds(none.allowedMask(), 8)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
