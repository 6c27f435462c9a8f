// JSON Schema constraints: every walk that ends is JSON that an independent validator accepts; documents
// serialised from valid values are accepted and invalid ones rejected; unsupported keywords and bad schemas are
// ConstraintErrors naming the keyword and its JSON path.
import { describe, expect, it } from 'vitest';
import { ConstraintError, checkConstraintSpec, compileConstraint } from '../../../src/sampling/constraints/index.ts';
import { DEFAULT_MARKERS, grammarForConstraint } from '../../../src/sampling/constraints/constraint-grammar.ts';
import { validateJson } from './json-schema-validator.ts';
import { textMatcher } from './matcher-for-tests.ts';
import { decodeStrict, randomWalk } from './random-walk.ts';
import { byteLevelVocabulary } from './test-vocabulary.ts';

const SCHEMAS: Record<string, Record<string, unknown>> = {
  weather: {
    type: 'object',
    properties: {
      location: { type: 'string', description: 'City' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer' },
    },
    required: ['location', 'unit', 'days'],
    additionalProperties: false,
  },
  nested: {
    type: 'object',
    properties: {
      tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
      score: { type: 'number' },
      ok: { type: 'boolean' },
      nothing: { type: 'null' },
      maybe: { type: ['string', 'null'] },
      point: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'], additionalProperties: false },
    },
    required: ['tags', 'score', 'ok', 'nothing', 'maybe', 'point'],
    additionalProperties: false,
  },
  optionalProps: {
    type: 'object',
    properties: { a: { type: 'integer' }, b: { const: 'fixed' }, c: { type: 'boolean' }, d: { type: 'string', maxLength: 4 } },
    required: ['b'],
  },
  anyOfAndDefs: {
    $defs: {
      leaf: { type: 'object', properties: { value: { type: 'integer' } }, required: ['value'], additionalProperties: false },
      tree: {
        anyOf: [
          { $ref: '#/$defs/leaf' },
          { type: 'object', properties: { children: { type: 'array', items: { $ref: '#/$defs/tree' }, maxItems: 2 } }, required: ['children'], additionalProperties: false },
        ],
      },
    },
    type: 'object',
    properties: { root: { $ref: '#/$defs/tree' }, kind: { anyOf: [{ type: 'integer' }, { enum: ['x', 2.5, null, true] }] } },
    required: ['root', 'kind'],
    additionalProperties: false,
  },
  patterned: {
    type: 'object',
    properties: { id: { type: 'string', pattern: '^[A-Z]{2}-\\d{3}$' }, email: { type: 'string', pattern: '^[a-z]+@[a-z]+\\.(com|org)$' }, quote: { type: 'string', pattern: '^"\\\\\\n' } },
    required: ['id', 'email', 'quote'],
    additionalProperties: false,
  },
  arrays: { type: 'array', items: { type: 'array', items: { type: 'integer' }, minItems: 1, maxItems: 2 }, minItems: 2 },
};

describe('JSON Schema constraint', () => {
  const { vocab, tokenBytes, endTokenId } = byteLevelVocabulary();

  it.each(Object.keys(SCHEMAS))('walks with many seeds yield valid JSON: %s', (name) => {
    const schema = SCHEMAS[name];
    let ended = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const constraint = compileConstraint({ kind: 'json_schema', schema }, vocab);
      const walk = randomWalk(constraint, tokenBytes, endTokenId, seed * 7919);
      if (!walk.ended) continue;
      ended++;
      const text = decodeStrict(walk.bytes);
      let value: unknown;
      expect(() => (value = JSON.parse(text)), text).not.toThrow();
      expect(validateJson(value, schema), text).toBeNull();
    }
    expect(ended).toBeGreaterThanOrEqual(30);
  });

  it('json_object (schema null) yields JSON objects', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const walk = randomWalk(compileConstraint({ kind: 'json_schema', schema: null }, vocab), tokenBytes, endTokenId, seed);
      if (!walk.ended) continue;
      const value: unknown = JSON.parse(decodeStrict(walk.bytes));
      expect(typeof value === 'object' && value !== null && !Array.isArray(value)).toBe(true);
    }
  });

  it('accepts serialised valid values and rejects invalid ones', () => {
    const matches = textMatcher(grammarForConstraint({ kind: 'json_schema', schema: SCHEMAS.weather }));
    const valid = { location: 'Paris "centre"\n\u0001é😀', unit: 'celsius', days: -12 };
    expect(matches(JSON.stringify(valid))).toBe(true);
    expect(matches(JSON.stringify(valid, null, 2))).toBe(true);
    expect(matches(`\n ${JSON.stringify(valid)} `)).toBe(true);
    expect(matches(JSON.stringify({ ...valid, unit: 'kelvin' }))).toBe(false);
    expect(matches(JSON.stringify({ ...valid, days: 1.5 }))).toBe(false);
    expect(matches(JSON.stringify({ location: 'x', unit: 'celsius' }))).toBe(false);
    expect(matches(JSON.stringify({ ...valid, extra: 1 }))).toBe(false);
    expect(matches('{"location": "a\\qb", "unit": "celsius", "days": 1}')).toBe(false); // bad escape
    expect(matches('{"location": "a\\u00e9", "unit": "celsius", "days": 01}')).toBe(false); // leading zero

    const optional = textMatcher(grammarForConstraint({ kind: 'json_schema', schema: SCHEMAS.optionalProps }));
    for (const v of [{ b: 'fixed' }, { a: 1, b: 'fixed' }, { b: 'fixed', c: true }, { a: 0, b: 'fixed', c: false, d: 'abcd' }]) {
      expect(optional(JSON.stringify(v)), JSON.stringify(v)).toBe(true);
    }
    for (const v of [{}, { a: 1 }, { b: 'other' }, { b: 'fixed', d: 'abcde' }, { c: true, b: 'fixed' }]) {
      expect(optional(JSON.stringify(v)), JSON.stringify(v)).toBe(false);
    }
    const afterThinking = textMatcher(grammarForConstraint({ kind: 'json_schema', schema: SCHEMAS.weather }, { markers: DEFAULT_MARKERS, thinking: 'open' }));
    expect(afterThinking(`Let me think { about it.</think>\n${JSON.stringify(valid)}`)).toBe(true);
    expect(afterThinking(JSON.stringify(valid))).toBe(false);
    const tree = textMatcher(grammarForConstraint({ kind: 'json_schema', schema: SCHEMAS.anyOfAndDefs }));
    expect(tree(JSON.stringify({ root: { children: [{ value: 1 }, { children: [] }] }, kind: 2.5 }))).toBe(true);
    expect(tree(JSON.stringify({ root: { children: [{ value: 'x' }] }, kind: 1 }))).toBe(false);
  });

  it.each([
    [{ type: 'object', properties: { a: { type: 'string', format: 'email' } } }, 'format', '$.properties.a.format'],
    [{ type: 'object', properties: { n: { type: 'number', minimum: 0 } } }, 'minimum', '$.properties.n.minimum'],
    [{ allOf: [{ type: 'string' }] }, 'allOf', '$.allOf'],
    [{ type: 'object', properties: { a: { oneOf: [] } } }, 'oneOf', '$.properties.a.oneOf'],
    [{ type: 'object', additionalProperties: { type: 'string' } }, 'additionalProperties', '$.additionalProperties'],
    [{ type: 'strin' }, 'type', '$.type'],
    [{ enum: [] }, 'enum', '$.enum'],
    [{ $ref: '#/$defs/missing' }, '$ref', '$.$ref'],
    [{ type: 'object', properties: {}, required: ['x'] }, 'required', '$.required'],
    [{ type: 'string', pattern: '(' }, 'pattern', '$.pattern'],
  ])('rejects %j naming %s at %s', (schema, keyword, path) => {
    try {
      checkConstraintSpec({ kind: 'json_schema', schema });
      expect.unreachable('should have thrown');
    } catch (e) {
      expect(e).toBeInstanceOf(ConstraintError);
      expect((e as ConstraintError).keyword).toBe(keyword);
      expect((e as ConstraintError).jsonPath).toBe(path);
      expect((e as Error).message).toContain(path);
    }
  });

  it('rejects left-recursive references', () => {
    expect(() => checkConstraintSpec({ kind: 'json_schema', schema: { $defs: { a: { anyOf: [{ $ref: '#/$defs/a' }, { type: 'null' }] } }, $ref: '#/$defs/a' } })).toThrow(/Left-recursive/);
  });
});
