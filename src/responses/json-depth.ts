// A bound on how deeply a request's JSON nests, checked on the raw text before it is parsed: everything after the
// parse (schema checks, translation, the constraint compilers, the chat template, JSON.stringify of the record)
// walks values recursively, and ~2,000 levels overflow the stack (a 500, or a stream that just stops). The scan is
// one loop with explicit stacks (no recursion), linear in the text, and it names where the nesting went too deep.
//
// Depth counts containers: `{}` at the top is depth 1, `{"a": []}` is 2. Invalid JSON is scanned as far as it
// goes (JSON.parse rejects it afterwards); what matters is that no value deeper than the limit is ever parsed.

/** How deeply a request body may nest (the body object itself is level 1). */
export const MAX_JSON_DEPTH = 64;

const OBJECT = 0;
const ARRAY = 1;

/**
 * The path of the first container that opens deeper than `limit` (the keys and indices leading to it, from the
 * top), or null when the text nests at most `limit` deep.
 */
export function findExcessDepth(text: string, limit: number = MAX_JSON_DEPTH): (string | number)[] | null {
  const kind: number[] = [];
  const index: number[] = [];
  const keyStart: number[] = [];
  const keyEnd: number[] = [];
  const expectKey: boolean[] = [];
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      i = stringEnd(text, i);
      const top = depth - 1;
      if (top >= 0 && kind[top] === OBJECT && expectKey[top]) {
        keyStart[top] = start;
        keyEnd[top] = i + 1;
        expectKey[top] = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (depth >= limit) return pathAt(text, depth, kind, index, keyStart, keyEnd);
      kind[depth] = c === 0x7b ? OBJECT : ARRAY;
      index[depth] = 0;
      keyStart[depth] = -1;
      keyEnd[depth] = -1;
      expectKey[depth] = c === 0x7b;
      depth++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (depth > 0) depth--;
    } else if (c === 0x2c /* , */ && depth > 0) {
      if (kind[depth - 1] === ARRAY) index[depth - 1]!++;
      else {
        expectKey[depth - 1] = true;
        keyStart[depth - 1] = -1;
      }
    }
  }
  return null;
}

/** The index of the quote that closes the string opening at `open` (or the end of the text). */
function stringEnd(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return text.length;
    let backslashes = 0;
    for (let b = quote - 1; b > open && text.charCodeAt(b) === 0x5c; b--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

function pathAt(text: string, depth: number, kind: number[], index: number[], keyStart: number[], keyEnd: number[]): (string | number)[] {
  const path: (string | number)[] = [];
  for (let d = 0; d < depth; d++) {
    if (kind[d] === ARRAY) path.push(index[d]!);
    else path.push(keyStart[d]! < 0 ? '?' : decodeKey(text.slice(keyStart[d], keyEnd[d])));
  }
  return path;
}

function decodeKey(raw: string): string {
  try {
    const key: unknown = JSON.parse(raw);
    return typeof key === 'string' ? key : raw;
  } catch {
    return raw.slice(1, -1);
  }
}

/** Fields a deep value is reported as (`null` matches any index): the most specific that the path starts with. */
const FIELDS: readonly (readonly (string | null)[])[] = [
  ['tools', null, 'parameters'],
  ['tools', null, 'format'],
  ['tools', null, 'tools'],
  ['text', 'format', 'schema'],
  ['input', null],
  ['tools', null],
];

/**
 * The request field a deep path belongs to, as `param` names it: `tools[0].parameters`, `text.format.schema`,
 * `tool_choice`, `input[3]`; otherwise the top-level field (with its index when it is a list).
 */
export function depthParam(path: readonly (string | number)[]): string | null {
  let best: readonly (string | number)[] | null = null;
  for (const field of FIELDS) {
    if (field.length > path.length) continue;
    if (field.every((part, i) => (part === null ? typeof path[i] === 'number' : path[i] === part))) {
      if (best === null || field.length > best.length) best = path.slice(0, field.length);
    }
  }
  if (best === null) best = path.length === 0 ? [] : typeof path[1] === 'number' ? path.slice(0, 2) : path.slice(0, 1);
  let out = '';
  for (const part of best) out += typeof part === 'number' ? `[${part}]` : out === '' ? part : `.${part}`;
  return out === '' ? null : out;
}
