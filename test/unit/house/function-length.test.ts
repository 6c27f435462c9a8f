// No function in src/ is longer than MAX_LINES (its first line to its last, counted with the TypeScript compiler's
// parser): a reader should not have to hold more than a screen to change one step. What is longer today is listed
// in ALLOWED with the reason it stays; an entry that is no longer over the bound fails too, so the list stays true.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const MAX_LINES = 80;

/** `file#function` -> why it is still longer. Shorten one and delete its line. */
const ALLOWED: Record<string, string> = {
};

export interface LongFunction {
  /** `file#name`, a method as `Class.method`, an unnamed function by the variable or property that holds it. */
  key: string;
  lines: number;
}

/** The functions of one source text longer than `max` lines. */
export function longFunctions(file: string, text: string, max = MAX_LINES): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      if (last - first + 1 > max) found.push({ key: `${file}#${functionName(node)}`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function functionName(node: ts.Node): string {
  const own = (node as { name?: ts.Node }).name;
  let name = own && (ts.isIdentifier(own) || ts.isStringLiteral(own) || ts.isPrivateIdentifier(own)) ? own.text : undefined;
  if (name === undefined && ts.isConstructorDeclaration(node)) name = 'constructor';
  const parent = node.parent;
  if (name === undefined && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name)) name = parent.name.text;
  const owner = ts.isClassLike(parent) ? parent.name?.text : undefined;
  return owner ? `${owner}.${name ?? '(anonymous)'}` : (name ?? '(anonymous)');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

describe('function length', () => {
  const long = sourceFiles('src').flatMap((file) => longFunctions(file.split('\\').join('/'), readFileSync(file, 'utf8')));

  it(`no function in src/ is over ${MAX_LINES} lines, but those listed with a reason`, () => {
    expect(long.filter((f) => !(f.key in ALLOWED)).map((f) => `${f.key} (${f.lines} lines)`)).toEqual([]);
  });

  it('every listed function is still over the bound (a shortened one leaves the list)', () => {
    const over = new Set(long.map((f) => f.key));
    expect(Object.keys(ALLOWED).filter((key) => !over.has(key))).toEqual([]);
  });

  it('the count sees declarations, methods, arrow functions and object members, and names them', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = [
      `export function declared() {\n${body(85)}\n}`,
      `function short() {\n${body(10)}\n}`,
      `class Box {\n  method() {\n${body(85)}\n  }\n}`,
      `const arrow = () => {\n${body(85)}\n};`,
      `const object = { member() {\n${body(85)}\n} };`,
    ].join('\n');
    expect(longFunctions('x.ts', text).map((f) => f.key)).toEqual(['x.ts#declared', 'x.ts#Box.method', 'x.ts#arrow', 'x.ts#member']);
    expect(longFunctions('x.ts', `function f() {\n${body(78)}\n}`)).toEqual([]);
    expect(longFunctions('x.ts', `function f() {\n${body(79)}\n}`)).toEqual([{ key: 'x.ts#f', lines: 81 }]);
  });
});
