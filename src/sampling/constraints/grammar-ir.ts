// The one representation every constraint compiles to: a context-free grammar whose terminals are sets of
// Unicode code points (and literal strings), with EBNF repetition. The byte automaton (byte-automaton.ts) turns
// it into per-rule NFAs over UTF-8 bytes. Also: code-point set algebra and the JSON-string escaping transform
// (a grammar for a string's *decoded* value -> a grammar for its JSON-escaped text).

/** Sorted, disjoint, non-adjacent inclusive ranges [lo0, hi0, lo1, hi1, ...] of code points. */
export type CodePointSet = readonly number[];

export const MAX_CODE_POINT = 0x10ffff;

export type GrammarExpr =
  /** One code point from the set (surrogates are never matched: they have no UTF-8 form). */
  | { kind: 'chars'; set: CodePointSet }
  | { kind: 'literal'; text: string }
  | { kind: 'seq'; items: GrammarExpr[] }
  | { kind: 'alt'; items: GrammarExpr[] }
  /** `max` may be Infinity. */
  | { kind: 'repeat'; item: GrammarExpr; min: number; max: number }
  | { kind: 'rule'; name: string }
  /** Any text (any code points) that does not contain `literal` (used for free text before a marker). */
  | { kind: 'textWithout'; literal: string }
  /**
   * Text matching `item` whose bytes (those matched inside called rules included) never contain `literal`. The
   * matcher tracks the literal through the region, so `item` itself stays a plain grammar; the grammar's author
   * must leave a way around the literal wherever it could complete (an alternative spelling of its last
   * character), or the matcher can reach a dead end. Regions do not nest.
   */
  | { kind: 'without'; item: GrammarExpr; literal: string };

export interface Grammar {
  rules: Map<string, GrammarExpr>;
  start: string;
}

// ---- constructors ----------------------------------------------------------------------------------------

export const EMPTY: GrammarExpr = { kind: 'seq', items: [] };

export function lit(text: string): GrammarExpr {
  return { kind: 'literal', text };
}
export function chars(set: CodePointSet): GrammarExpr {
  return { kind: 'chars', set };
}
export function seq(...items: GrammarExpr[]): GrammarExpr {
  const flat: GrammarExpr[] = [];
  for (const item of items) {
    if (item.kind === 'seq') flat.push(...item.items);
    else flat.push(item);
  }
  return flat.length === 1 ? flat[0] : { kind: 'seq', items: flat };
}
export function alt(...items: GrammarExpr[]): GrammarExpr {
  return items.length === 1 ? items[0] : { kind: 'alt', items };
}
export function repeat(item: GrammarExpr, min: number, max = Infinity): GrammarExpr {
  return { kind: 'repeat', item, min, max };
}
export function optional(item: GrammarExpr): GrammarExpr {
  return repeat(item, 0, 1);
}
export function ref(name: string): GrammarExpr {
  return { kind: 'rule', name };
}
export function without(item: GrammarExpr, literal: string): GrammarExpr {
  return { kind: 'without', item, literal };
}

// ---- code-point sets ---------------------------------------------------------------------------------------

export function range(lo: number, hi: number): CodePointSet {
  return lo <= hi ? [lo, hi] : [];
}
export function single(cp: number): CodePointSet {
  return [cp, cp];
}
export function setOfChars(text: string): CodePointSet {
  let out: CodePointSet = [];
  for (const ch of text) out = union(out, single(ch.codePointAt(0)!));
  return out;
}

/** Normalises a list of (possibly overlapping, unsorted) ranges. */
export function normalize(ranges: readonly number[]): CodePointSet {
  const pairs: [number, number][] = [];
  for (let i = 0; i < ranges.length; i += 2) if (ranges[i] <= ranges[i + 1]) pairs.push([ranges[i], ranges[i + 1]]);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [lo, hi] of pairs) {
    const n = out.length;
    if (n > 0 && lo <= out[n - 1] + 1) out[n - 1] = Math.max(out[n - 1], hi);
    else out.push(lo, hi);
  }
  return out;
}
export function union(a: CodePointSet, b: CodePointSet): CodePointSet {
  return normalize([...a, ...b]);
}
export function complement(a: CodePointSet): CodePointSet {
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i < a.length; i += 2) {
    if (a[i] > next) out.push(next, a[i] - 1);
    next = a[i + 1] + 1;
  }
  if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT);
  return out;
}
export function subtract(a: CodePointSet, b: CodePointSet): CodePointSet {
  return intersect(a, complement(b));
}
export function intersect(a: CodePointSet, b: CodePointSet): CodePointSet {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i], b[j]);
    const hi = Math.min(a[i + 1], b[j + 1]);
    if (lo <= hi) out.push(lo, hi);
    if (a[i + 1] < b[j + 1]) i += 2;
    else j += 2;
  }
  return out;
}
export function contains(a: CodePointSet, cp: number): boolean {
  for (let i = 0; i < a.length; i += 2) if (cp >= a[i] && cp <= a[i + 1]) return true;
  return false;
}
export function isEmptySet(a: CodePointSet): boolean {
  return a.length === 0;
}

/** ASCII case folding for case-insensitive literals and classes. */
export function caseInsensitive(a: CodePointSet): CodePointSet {
  const extra: number[] = [];
  const lower = intersect(a, range(0x61, 0x7a));
  const upper = intersect(a, range(0x41, 0x5a));
  for (let i = 0; i < lower.length; i += 2) extra.push(lower[i] - 32, lower[i + 1] - 32);
  for (let i = 0; i < upper.length; i += 2) extra.push(upper[i] + 32, upper[i + 1] + 32);
  return normalize([...a, ...extra]);
}

export const ANY_CHAR: CodePointSet = [0, MAX_CODE_POINT];
export const DIGITS: CodePointSet = range(0x30, 0x39);
export const WORD_CHARS: CodePointSet = normalize([0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a]);
/** ECMAScript `\s`: whitespace and line terminators. */
export const SPACE_CHARS: CodePointSet = normalize([
  0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f,
  0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff,
]);
/** ECMAScript line terminators (what `.` does not match). */
export const LINE_TERMINATORS: CodePointSet = normalize([0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029]);

// ---- JSON string escaping ------------------------------------------------------------------------------------

/** Characters that must be escaped inside a JSON string: `"`, `\` and the controls U+0000..U+001F. */
const JSON_SPECIALS: CodePointSet = normalize([0x00, 0x1f, 0x22, 0x22, 0x5c, 0x5c]);
const SHORT_ESCAPES: Record<number, string> = { 0x08: '\\b', 0x09: '\\t', 0x0a: '\\n', 0x0c: '\\f', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' };

/** The escape sequences a JSON string may use for a special character (the short form if any, else `\u00XX`). */
function jsonEscapesOf(cp: number): GrammarExpr {
  const hex = cp.toString(16).padStart(4, '0');
  const forms = [lit(`\\u${hex}`)];
  if (hex !== hex.toUpperCase()) forms.push(lit(`\\u${hex.toUpperCase()}`));
  const short = SHORT_ESCAPES[cp];
  if (short) forms.unshift(lit(short));
  return alt(...forms);
}

/**
 * The escapes of every code point in `special` (a subset of JSON_SPECIALS), and `\/` when `solidus`, as one
 * compact expression: `\` then a short-escape letter, or `u00`, the third hex digit and the fourth in either case.
 * The same language as the alternation of each code point's jsonEscapesOf, in a few states instead of ~18 per
 * code point (a JSON string with maxLength 1000 repeats this a thousand times).
 */
function escapesOfSet(special: CodePointSet, solidus: boolean): GrammarExpr | null {
  const letters: number[] = solidus ? [SOLIDUS, SOLIDUS] : [];
  const fourthDigits = new Map<string, number[]>();
  for (let i = 0; i < special.length; i += 2) {
    for (let cp = special[i]; cp <= special[i + 1]; cp++) {
      const short = SHORT_ESCAPES[cp];
      if (short) letters.push(short.codePointAt(1)!, short.codePointAt(1)!);
      const hex = cp.toString(16).padStart(4, '0');
      const digits = fourthDigits.get(hex[2]) ?? [];
      for (const d of new Set([hex[3], hex[3].toUpperCase()])) digits.push(d.codePointAt(0)!, d.codePointAt(0)!);
      fourthDigits.set(hex[2], digits);
    }
  }
  const after: GrammarExpr[] = [];
  if (letters.length > 0) after.push(chars(normalize(letters)));
  if (fourthDigits.size > 0) {
    const groups = [...fourthDigits].map(([third, fourth]) => seq(lit(third), chars(normalize(fourth))));
    after.push(seq(lit('u00'), alt(...groups)));
  }
  return after.length === 0 ? null : seq(lit('\\'), alt(...after));
}

/** `/`, which a JSON string may write plainly or as `\/`. */
const SOLIDUS = 0x2f;

/**
 * The ways a JSON string may write `cp`, a character it can also write plainly: itself, then `\/` for `/`, else
 * `\uXXXX` (BMP only; hex letters in either case).
 */
export function jsonSpellingsOf(cp: number): GrammarExpr {
  const plain = lit(String.fromCodePoint(cp));
  if (cp === SOLIDUS) return alt(plain, lit('\\/'));
  if (cp > 0xffff) return plain;
  const hex = [...cp.toString(16).padStart(4, '0')].map((d) => (/[a-f]/.test(d) ? chars(setOfChars(d + d.toUpperCase())) : lit(d)));
  return alt(plain, seq(lit('\\u'), ...hex));
}

/**
 * `expr` (JSON-escaped text, not following rules) with every plain `cp` -- in a character set or a literal --
 * also spellable as its escape (jsonSpellingsOf). Only for text where a plain `cp` can stand inside a JSON string
 * alone, never in its structure or inside an escape sequence.
 */
export function withEscapedSpelling(expr: GrammarExpr, cp: number): GrammarExpr {
  switch (expr.kind) {
    case 'chars':
      return contains(expr.set, cp) ? alt(chars(subtract(expr.set, single(cp))), jsonSpellingsOf(cp)) : expr;
    case 'literal': {
      const ch = String.fromCodePoint(cp);
      if (!expr.text.includes(ch)) return expr;
      const parts = expr.text.split(ch);
      return seq(...parts.flatMap((part, i) => [...(i > 0 ? [jsonSpellingsOf(cp)] : []), ...(part ? [lit(part)] : [])]));
    }
    case 'seq':
    case 'alt':
      return { kind: expr.kind, items: expr.items.map((e) => withEscapedSpelling(e, cp)) };
    case 'repeat':
    case 'without':
      return { ...expr, item: withEscapedSpelling(expr.item, cp) };
    case 'rule':
    case 'textWithout':
      return expr;
  }
}

/**
 * A grammar for the JSON-escaped text of strings whose decoded value matches `expr`: ordinary characters stand
 * for themselves, `"`, `\` and control characters appear as their escapes, `/` as itself or `\/`. Rules are
 * renamed with `prefix`, so the escaped copy of a grammar lives next to the original.
 */
export function jsonEscaped(expr: GrammarExpr, prefix: string): GrammarExpr {
  switch (expr.kind) {
    case 'chars': {
      const plain = subtract(expr.set, JSON_SPECIALS);
      const special = intersect(expr.set, JSON_SPECIALS);
      const forms: GrammarExpr[] = [];
      if (!isEmptySet(plain)) forms.push(chars(plain));
      const escape = escapesOfSet(special, contains(plain, SOLIDUS));
      if (escape) forms.push(escape);
      return forms.length === 0 ? chars([]) : alt(...forms);
    }
    case 'literal': {
      if (!/["\\/\u0000-\u001f]/.test(expr.text)) return expr;
      const parts: GrammarExpr[] = [];
      let run = '';
      for (const ch of expr.text) {
        const cp = ch.codePointAt(0)!;
        if (contains(JSON_SPECIALS, cp) || cp === SOLIDUS) {
          if (run) parts.push(lit(run));
          run = '';
          parts.push(cp === SOLIDUS ? jsonSpellingsOf(cp) : jsonEscapesOf(cp));
        } else run += ch;
      }
      if (run) parts.push(lit(run));
      return seq(...parts);
    }
    case 'seq':
      return { kind: 'seq', items: expr.items.map((e) => jsonEscaped(e, prefix)) };
    case 'alt':
      return { kind: 'alt', items: expr.items.map((e) => jsonEscaped(e, prefix)) };
    case 'repeat':
      return { ...expr, item: jsonEscaped(expr.item, prefix) };
    case 'rule':
      return ref(prefix + expr.name);
    case 'textWithout':
    case 'without':
      throw new Error(`${expr.kind} cannot be JSON-escaped`);
  }
}

/** Copies `grammar`'s rules into `into` under `prefix`, JSON-escaped; returns the escaped start expression. */
export function embedJsonEscaped(grammar: Grammar, into: Map<string, GrammarExpr>, prefix: string): GrammarExpr {
  for (const [name, expr] of grammar.rules) into.set(prefix + name, jsonEscaped(expr, prefix));
  return ref(prefix + grammar.start);
}

/** Copies `grammar`'s rules into `into` under `prefix` unchanged; returns the start expression. */
export function embedGrammar(grammar: Grammar, into: Map<string, GrammarExpr>, prefix: string): GrammarExpr {
  const rename = (e: GrammarExpr): GrammarExpr => {
    switch (e.kind) {
      case 'rule':
        return ref(prefix + e.name);
      case 'seq':
      case 'alt':
        return { kind: e.kind, items: e.items.map(rename) };
      case 'repeat':
      case 'without':
        return { ...e, item: rename(e.item) };
      default:
        return e;
    }
  };
  for (const [name, expr] of grammar.rules) into.set(prefix + name, rename(expr));
  return ref(prefix + grammar.start);
}
