// The nesting-depth scan over raw JSON text (src/responses/json-depth.ts): where it says the nesting went too
// deep, that brackets inside strings (escaped quotes included) do not count, the boundary, and the field a path
// is reported as.
import { describe, expect, it } from 'vitest';
import { depthParam, findExcessDepth, MAX_JSON_DEPTH } from '../../../src/responses/json-depth.ts';

/** The true depth of a parsed value, for comparison (recursive: only for small test values). */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('findExcessDepth', () => {
  it('agrees with the parsed depth at and around the limit', () => {
    for (let levels = 1; levels <= 8; levels++) {
      const text = JSON.stringify(Array.from({ length: levels }).reduce<unknown>((inner) => ({ k: [inner] }), 1));
      const depth = depthOf(JSON.parse(text));
      expect(findExcessDepth(text, depth)).toBeNull();
      expect(findExcessDepth(text, depth - 1)).not.toBeNull();
    }
  });

  it('names the keys and indices that lead to the container that opened too deep', () => {
    const text = JSON.stringify({ a: 1, tools: [{ name: 'x' }, { name: 'y', parameters: { properties: { 'k"e\\y': { type: 'object' } } } }] });
    expect(findExcessDepth(text, 4)).toEqual(['tools', 1, 'parameters', 'properties']);
    expect(findExcessDepth(text, 5)).toEqual(['tools', 1, 'parameters', 'properties', 'k"e\\y']);
    expect(findExcessDepth(text, 6)).toBeNull();
  });

  it('does not count brackets inside strings, with escaped quotes and backslashes', () => {
    const tricky = JSON.stringify({ s: '[[[[{{{{ \\" \\\\" [[[[ "', t: ['\\', '"[', '\\"{'] });
    expect(JSON.parse(tricky)).toBeTruthy();
    expect(findExcessDepth(tricky, 2)).toBeNull();
    expect(findExcessDepth(tricky, 1)).toEqual(['t']);
  });

  it('scans 8 MB without recursion and fast (100,000 levels)', () => {
    const text = `{"input":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(findExcessDepth(text, MAX_JSON_DEPTH)).toEqual(['input', ...Array.from({ length: MAX_JSON_DEPTH - 1 }, () => 0)]);
    const flat = JSON.stringify({ input: 'x'.repeat(8 * 1024 * 1024 - 20) });
    const started = performance.now();
    expect(findExcessDepth(flat)).toBeNull();
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('reads invalid JSON as far as it goes without throwing', () => {
    expect(findExcessDepth('{"a": [[[', 2)).toEqual(['a', 0]);
    expect(findExcessDepth('"unterminated [[[[', 1)).toBeNull();
    expect(findExcessDepth(']]]}}}[', 1)).toBeNull();
  });
});

describe('depthParam', () => {
  it('reports a deep path as the request field it belongs to', () => {
    expect(depthParam(['tools', 0, 'parameters', 'properties', 'a'])).toBe('tools[0].parameters');
    expect(depthParam(['tools', 3, 'format', 'x'])).toBe('tools[3].format');
    expect(depthParam(['tools', 3, 'description'])).toBe('tools[3]');
    expect(depthParam(['text', 'format', 'schema', 'items'])).toBe('text.format.schema');
    expect(depthParam(['tool_choice', 'name', 0])).toBe('tool_choice');
    expect(depthParam(['input', 7, 'content', 0])).toBe('input[7]');
    expect(depthParam(['metadata', 'k'])).toBe('metadata');
    expect(depthParam([])).toBeNull();
  });
});
