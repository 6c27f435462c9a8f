// The web IDE's one-line patch grammar (src/demo/apply-patch-grammar.ts singleLineEditGrammar): a patch replaces
// one existing line of the open file with a different line, or keeps it and adds one; a patch that would leave the
// file unchanged (the line replaced by itself, as the bundled model wrote in the web-IDE e2e run) is not in the
// grammar. Checked against an independent definition over every short string near each line.
import { describe, expect, it } from 'vitest';
import { customToolGrammar } from '../../../src/sampling/constraints/index.ts';
import { singleLineEditGrammar } from '../../../src/demo/apply-patch-grammar.ts';
import { textMatcher } from './matcher-for-tests.ts';

const FILE = "export function greet(name: string) {\n  return 'Hello ' + name;\n}\n// ünï 😀 /x/ [a-z] \\n \"q\"\n";
const NAME = 'src/greet.ts';
const patch = (old: string, ...added: string[]) =>
  `*** Begin Patch\n*** Update File: ${NAME}\n@@\n-${old}\n${added.map((l) => `+${l}`).join('\n')}\n*** End Patch\n`;

describe('singleLineEditGrammar', () => {
  const matches = textMatcher(customToolGrammar('apply_patch', { syntax: 'lark', definition: singleLineEditGrammar(NAME, FILE, 40) }));
  const lines = FILE.split('\n').filter((l) => l.length > 0);

  it('accepts a changed line, a kept line with one added, and a changed line with one added', () => {
    expect(matches(patch(lines[0], 'export function welcome(name: string) {'))).toBe(true);
    expect(matches(patch(lines[1], lines[1], '  // done'))).toBe(true);
    expect(matches(patch(lines[1], "  return 'Hi ' + name;", '  // done'))).toBe(true);
    expect(matches(patch(lines[3], ''))).toBe(true); // the line emptied
    expect(matches(patch(lines[3], lines[3].slice(0, -1)))).toBe(true); // a prefix of it
    expect(matches(patch(lines[2], '}}'))).toBe(true); // longer, starting with it
  });

  it('refuses a patch that replaces a line by itself, a line not in the file, and lines over the length bound', () => {
    for (const l of lines) expect(matches(patch(l, l)), l).toBe(false);
    expect(matches(patch('export function greet(name) {', 'x'))).toBe(false);
    expect(matches(patch(lines[2], 'y'.repeat(41)))).toBe(false);
    expect(matches(patch(lines[2], 'y'.repeat(40)))).toBe(true);
  });

  it('equals "a line of at most 40 characters other than the old one" on every edit of one or two characters', () => {
    const alphabet = ['a', '}', '😀', ' ', "'"];
    for (const old of lines) {
      const chars = [...old];
      const near = new Set<string>([old]);
      for (let i = 0; i <= chars.length; i++) {
        near.add([...chars.slice(0, i)].join('')); // prefixes
        for (const c of alphabet) {
          near.add([...chars.slice(0, i), c, ...chars.slice(i)].join('')); // insertions
          if (i < chars.length) near.add([...chars.slice(0, i), c, ...chars.slice(i + 1)].join('')); // substitutions
        }
        if (i < chars.length) near.add([...chars.slice(0, i), ...chars.slice(i + 1)].join('')); // deletions
      }
      for (const neu of near) {
        const expected = neu !== old && [...neu].length <= 40;
        expect(matches(patch(old, neu)), JSON.stringify([old, neu])).toBe(expected);
      }
    }
  });
});
