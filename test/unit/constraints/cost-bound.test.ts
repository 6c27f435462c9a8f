// Cost bounds on compiled constraints (issue 22 item 2): a grammar whose expansion is huge is refused before it
// is built -- a 400 naming the tool (or schema path) and the bound, fast and with bounded memory -- the size
// estimate is an upper bound of what the builder makes, the time budget stops a compile, and the
// compiled-grammar cache is bounded by bytes.
import { describe, expect, it } from 'vitest';
import type { ConstraintSpec } from '../../../src/engine/types.ts';
import { EngineError } from '../../../src/common/engine-error.ts';
import { DEFAULT_COMPILE_BUDGET, compileGrammar, estimateGrammarStates } from '../../../src/sampling/constraints/byte-automaton.ts';
import { ConstraintTooLargeError } from '../../../src/sampling/constraints/constraint-error.ts';
import { grammarForConstraint } from '../../../src/sampling/constraints/constraint-grammar.ts';
import { jsonEscaped, lit, repeat, seq, chars, ANY_CHAR } from '../../../src/sampling/constraints/grammar-ir.ts';
import { checkConstraintForRequest } from '../../../src/sampling/constraints/request-check.ts';
import { GRAMMAR_CACHE_BYTES, checkConstraintSpec, compiledCacheStats } from '../../../src/sampling/constraints/token-constraint.ts';
import { textMatcher } from './matcher-for-tests.ts';

const HOSTILE = '(a{1,1000}){1,1000}';

function customRegexTool(definition: string, name = 'evil'): ConstraintSpec {
  return { kind: 'tools', mode: 'required', tools: [{ type: 'custom', name, grammar: { syntax: 'regex', definition } }] };
}

/** Runs `check`, returning the EngineError it throws, the milliseconds it took and the heap it grew by. */
function measure(check: () => void): { error: EngineError; ms: number; heapGrowth: number } {
  globalThis.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  let peak = heap0;
  const t0 = performance.now();
  let error: unknown = null;
  try {
    check();
  } catch (e) {
    error = e;
  }
  const ms = performance.now() - t0;
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  expect(error).toBeInstanceOf(EngineError);
  return { error: error as EngineError, ms, heapGrowth: peak - heap0 };
}

describe('constraint cost bound', () => {
  it(`a custom regex tool ${HOSTILE} (tool_choice required) is a 400 naming the tool and the bound, in well under a second`, () => {
    const { error, ms, heapGrowth } = measure(() => checkConstraintForRequest(customRegexTool(HOSTILE)));
    expect(error.kind).toBe('invalid_request');
    expect(error.code).toBe('invalid_grammar');
    expect(error.param).toBe('tools');
    expect(error.message).toContain("Custom tool 'evil'");
    expect(error.message).toContain(String(DEFAULT_COMPILE_BUDGET.maxStates));
    expect(ms).toBeLessThan(300);
    expect(heapGrowth).toBeLessThan(64 * 1024 * 1024);
  });

  it('the same pattern as a JSON Schema pattern (text.format) is a 400 naming the schema path', () => {
    const spec: ConstraintSpec = { kind: 'json_schema', schema: { type: 'object', properties: { s: { type: 'string', pattern: HOSTILE } }, required: ['s'] } };
    const { error, ms, heapGrowth } = measure(() => checkConstraintForRequest(spec));
    expect(error.kind).toBe('invalid_request');
    expect(error.code).toBe('invalid_json_schema');
    expect(error.param).toBe('text.format.schema');
    expect(error.message).toContain('$.properties.s.pattern');
    expect(error.message).toContain(String(DEFAULT_COMPILE_BUDGET.maxStates));
    expect(ms).toBeLessThan(300);
    expect(heapGrowth).toBeLessThan(64 * 1024 * 1024);
  });

  it('the pattern in a strict function tool names the function tool', () => {
    const spec: ConstraintSpec = {
      kind: 'tools',
      mode: 'required',
      tools: [{ type: 'function', name: 'lookup', strict: true, parameters: { type: 'object', properties: { s: { type: 'string', pattern: HOSTILE } }, required: ['s'], additionalProperties: false } }],
    };
    const { error, ms } = measure(() => checkConstraintForRequest(spec));
    expect(error.kind).toBe('invalid_request');
    expect(error.param).toBe('tools');
    expect(error.message).toContain("Tool 'lookup'");
    expect(ms).toBeLessThan(300);
  });

  it('a Lark grammar with nested bounded repetition is refused the same way', () => {
    const spec: ConstraintSpec = {
      kind: 'tools',
      mode: 'auto',
      tools: [{ type: 'custom', name: 'lark_tool', grammar: { syntax: 'lark', definition: 'start: (("a" ~ 1..1000) ~ 1..1000)' } }],
    };
    const { error, ms } = measure(() => checkConstraintForRequest(spec));
    expect(error.code).toBe('invalid_grammar');
    expect(error.message).toContain("Custom tool 'lark_tool'");
    expect(ms).toBeLessThan(300);
  });

  it('many empty repetitions are build steps too (no states, but a billion loop iterations)', () => {
    const nested = repeat(repeat(repeat(seq(), 1000, 1000), 1000, 1000), 1000, 1000);
    expect(() => compileGrammar({ rules: new Map([['start', nested]]), start: 'start' })).toThrow(ConstraintTooLargeError);
  });

  it('large but reasonable constraints still compile: maxLength 1000, a custom regex .{0,1000}, [a-z]{1,1000}', () => {
    for (const spec of [
      { kind: 'json_schema', schema: { type: 'string', maxLength: 1000 } },
      customRegexTool('.{0,1000}', 'dots'),
      customRegexTool('[a-z0-9]{1,1000}', 'word'),
    ] satisfies ConstraintSpec[]) {
      expect(() => checkConstraintSpec(spec)).not.toThrow();
    }
  });

  it('the size estimate is an upper bound of the states the builder makes', () => {
    const specs: ConstraintSpec[] = [
      { kind: 'json_schema', schema: { type: 'string', maxLength: 300 } },
      { kind: 'json_schema', schema: { type: 'array', items: { type: 'object', properties: { a: { type: 'string', pattern: '^[a-f]{2,40}$' }, b: { enum: ['x', 'y'] } } }, maxItems: 50 } },
      { kind: 'json_schema', schema: null },
      customRegexTool('(ab|c){0,200}d+'),
      { kind: 'tools', mode: 'auto', tools: [{ type: 'custom', name: 'l', grammar: { syntax: 'lark', definition: 'start: item+\nitem: /[0-9]{1,20}/ ","' } }] },
    ];
    for (const spec of specs) {
      const grammar = grammarForConstraint(spec);
      const estimate = estimateGrammarStates(grammar);
      const actual = compileGrammar(grammar).stateCount;
      expect(estimate).toBeGreaterThanOrEqual(actual);
      expect(estimate).toBeLessThan(actual * 8 + 100); // an estimate, not an unrelated number
    }
  });

  it('the time budget stops a compilation', () => {
    const grammar = grammarForConstraint({ kind: 'json_schema', schema: { type: 'string', maxLength: 1000 } });
    let error: unknown;
    try {
      compileGrammar(grammar, { maxStates: 1_000_000, maxMillis: 0 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConstraintTooLargeError);
    expect((error as ConstraintTooLargeError).bound).toBe('time');
  });

  it('the compact escape set matches exactly the escapes JSON allows for the characters it stands for', () => {
    // Decoded: any one character; escaped: its JSON text inside quotes.
    const match = textMatcher({ rules: new Map([['start', seq(lit('"'), jsonEscaped(chars(ANY_CHAR), 'p_'), lit('"'))]]), start: 'start' });
    for (const ok of ['"a"', '"\\n"', '"\\u001f"', '"\\u001F"', '"\\u0000"', '"\\""', '"\\\\"', '"\\/"', '"/"', '"\\u0022"', '"\\u005c"', '"\\u005C"', '"é"']) {
      expect(match(ok), ok).toBe(true);
    }
    for (const bad of ['"\\u001G"', '"\\u0020"', '"\\u0041"', '"\\x"', '"\\U001f"', '"\\u00"', '"\n"', '"""']) expect(match(bad), bad).toBe(false);
    // A character class without the controls escapes only what it holds.
    const digitsOrNewline = textMatcher({ rules: new Map([['start', jsonEscaped(chars([0x0a, 0x0a, 0x30, 0x39]), 'q_')]]), start: 'start' });
    expect(['5', '\\n', '\\u000a', '\\u000A'].every(digitsOrNewline)).toBe(true);
    expect(['\\t', '\\u0009', '\\/', 'a'].some(digitsOrNewline)).toBe(false);
  });

  it('the compiled-grammar cache is bounded by bytes, not entries', () => {
    // Each differs (its description) and is ~40k states; together they are above the byte budget.
    for (let i = 0; i < 10; i++) {
      checkConstraintSpec({ kind: 'json_schema', schema: { type: 'string', maxLength: 1000, description: `variant ${i}` } });
      expect(compiledCacheStats().bytes).toBeLessThanOrEqual(GRAMMAR_CACHE_BYTES);
    }
    const { entries, bytes } = compiledCacheStats();
    expect(entries).toBeGreaterThan(0);
    expect(entries).toBeLessThan(10);
    expect(bytes).toBeGreaterThan(GRAMMAR_CACHE_BYTES / 4);
  });
});
