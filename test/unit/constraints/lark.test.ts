// Lark grammars: the apply_patch grammar (a fixture written from the patch format) yields only patches that an
// independent line-based checker accepts, accepts hand-written patches and rejects broken ones; the parser
// handles the Lark features custom tools use and reports syntax errors with their position.
import { describe, expect, it } from 'vitest';
import { ConstraintError, checkConstraintSpec, compileConstraint, customToolGrammar } from '../../../src/sampling/constraints/index.ts';
import { textMatcher } from './matcher-for-tests.ts';
import { applyPatchLarkGrammar } from '../../../src/demo/apply-patch-grammar.ts';
import { checkPatch } from './patch-checker.ts';
import { decodeStrict, extractToolCalls, randomWalk } from './random-walk.ts';
import { byteLevelVocabulary } from './test-vocabulary.ts';

// The product's apply_patch grammar (the demo and the web-IDE example send it), not a copy of it.
const APPLY_PATCH = applyPatchLarkGrammar;
const lark = (definition: string) => textMatcher(customToolGrammar('t', { syntax: 'lark', definition }));

const VALID_PATCHES = [
  '*** Begin Patch\n*** Add File: src/hello.py\n+def main():\n+    print("hi")\n*** End Patch\n',
  '*** Begin Patch\n*** Delete File: old.txt\n*** End Patch',
  '*** Begin Patch\n*** Update File: a/b.ts\n*** Move to: a/c.ts\n@@ function f() {\n-  return 1;\n+  return 2;\n   }\n*** End of File\n*** Delete File: x\n*** End Patch\n',
  '*** Begin Patch\n*** Update File: only-rename.md\n*** Move to: renamed.md\n*** End Patch\n',
  '*** Begin Patch\n*** Update File: f\n@@\n \n-\n+\n*** End Patch\n',
];
const INVALID_PATCHES = [
  '*** Begin Patch\n*** End Patch\n', // no operation
  '*** Begin Patch\n*** Add File: x\n*** End Patch\n', // add without lines
  '*** Begin Patch\n*** Add File: x\n+a\n', // no end
  '*** Begin Patch\n*** Update File: f\n@@\n*** End Patch\n', // empty hunk
  '*** Begin Patch\n*** Update File: f\nno prefix\n*** End Patch\n',
  '*** Begin Patch\n*** Delete File: \n*** End Patch\n', // empty path
  '*** Begin Patch\n*** Delete File: x\n*** End Patch\nmore',
  '** Begin Patch\n*** Delete File: x\n*** End Patch\n',
];

describe('Lark grammars', () => {
  it('the apply_patch grammar and the patch checker agree on hand-written patches', () => {
    const matches = lark(APPLY_PATCH);
    for (const p of VALID_PATCHES) {
      expect(checkPatch(p).ok, p).toBe(true);
      expect(matches(p), p).toBe(true);
    }
    for (const p of INVALID_PATCHES) {
      expect(checkPatch(p).ok, p).toBe(false);
      expect(matches(p), p).toBe(false);
    }
  });

  it('walks of an apply_patch custom tool yield only valid patches (many seeds)', () => {
    const { vocab, tokenBytes, endTokenId } = byteLevelVocabulary();
    const spec = {
      kind: 'tools' as const,
      mode: 'required' as const,
      tools: [{ type: 'custom' as const, name: 'apply_patch', grammar: { syntax: 'lark' as const, definition: APPLY_PATCH } }],
    };
    let ended = 0;
    let operations = 0;
    for (let seed = 1; seed <= 36; seed++) {
      const walk = randomWalk(compileConstraint(spec, vocab, { thinking: 'none' }), tokenBytes, endTokenId, seed, 900);
      if (!walk.ended) continue;
      ended++;
      const { calls } = extractToolCalls(decodeStrict(walk.bytes), false);
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) {
        expect(call.name).toBe('apply_patch');
        const input = call.arguments.input;
        expect(typeof input).toBe('string');
        const checked = checkPatch(input as string);
        expect(checked, JSON.stringify(input)).toMatchObject({ ok: true });
        if (checked.ok) operations += checked.operations.length;
      }
    }
    expect(ended).toBeGreaterThanOrEqual(10);
    expect(operations).toBeGreaterThan(ended);
  });

  it('supports rules, terminals, ranges, ~ repetition, [optional], aliases, imports and %ignore', () => {
    const g = lark(`
      ?start: greeting ("," greeting)* [END]
      greeting: WORD ~ 1..2 -> hi
              | "x"i NUMBER
      END: "!" | "?"
      DIGITS.2: "0".."9"+
      %import common.WORD
      %import common (NUMBER, WS)
      %ignore WS
    `);
    for (const s of ['hello', 'hello world', 'hello , X12', 'ab,cd ef!', 'x 1.5e3 ?', ' hello ']) expect(g(s), s).toBe(true);
    for (const s of ['', 'hello world again', 'hello,', '12', 'x!!']) expect(g(s), s).toBe(false);
  });

  it.each([
    ['start: "a" b', "'b' is used but not defined"],
    ['start: ("a"', "expected ')'"],
    ['start: "a\n', 'unterminated string'],
    ['start: /a(/', 'Invalid regular expression at position 9'],
    ['start: a\na: a "x" | "y"', 'Left-recursive'],
    ['start: x{"a"}', 'templates are not supported'],
    ['%import foo.BAR\nstart: "a"', "only '%import common'"],
    ['%declare X\nstart: "a"', 'unsupported directive %declare'],
    ['rule: "a"', "no 'start' rule"],
    ['start: "a" $', "unexpected character '$'"],
    ['start: a\na: "x" a', 'cannot match any text'],
  ])('rejects %j', (definition, words) => {
    let error: unknown;
    try {
      checkConstraintSpec({ kind: 'tools', mode: 'auto', tools: [{ type: 'custom', name: 'p', grammar: { syntax: 'lark', definition } }] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConstraintError);
    expect((error as Error).message).toContain("Custom tool 'p'");
    expect((error as Error).message).toContain(words);
  });

  it('reports the position of a syntax error', () => {
    try {
      customToolGrammar('t', { syntax: 'lark', definition: 'start: "a"\n  | ) "b"' });
      expect.unreachable();
    } catch (e) {
      expect((e as ConstraintError).position).toBe(15);
    }
  });
});
