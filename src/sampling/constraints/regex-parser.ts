// Regular expressions (the common ECMAScript subset, which is also what Lark's /…/ terminals use) parsed into the
// grammar IR: literals, escapes (\d \w \s \D \W \S \n \t \r \f \v \0 \xHH \uHHHH \u{…} and escaped
// punctuation), classes with ranges and negation, `.`, groups (capturing, `(?:…)`, named), alternation and the
// quantifiers * + ? {m} {m,} {m,n} (lazy forms match the same language). The pattern must match the whole
// text: a leading ^ and trailing $ are accepted and mean nothing more. Lookaround, backreferences and \b are
// not regular (or not supported) and raise a ConstraintError with the position.
import { ConstraintError } from './constraint-error.ts';
import {
  ANY_CHAR,
  type CodePointSet,
  DIGITS,
  EMPTY,
  type GrammarExpr,
  LINE_TERMINATORS,
  SPACE_CHARS,
  WORD_CHARS,
  alt,
  caseInsensitive,
  chars,
  complement,
  lit,
  normalize,
  repeat,
  seq,
  single,
  subtract,
  union,
} from './grammar-ir.ts';

export interface RegexFlags {
  ignoreCase?: boolean;
  dotAll?: boolean;
}

/** The largest {m,n} bound accepted (each repetition is a copy in the automaton). */
const MAX_REPEAT = 1000;

export function parseRegex(pattern: string, flags: RegexFlags = {}, basePosition = 0): GrammarExpr {
  return new RegexParser(pattern, flags, basePosition).parseWhole();
}

class RegexParser {
  private pos = 0;
  private readonly chars: string[];

  constructor(
    source: string,
    private readonly flags: RegexFlags,
    private readonly base: number,
  ) {
    this.chars = [...source];
  }

  private fail(message: string, at = this.pos): never {
    throw new ConstraintError(`Invalid regular expression at position ${this.base + at}: ${message}`, { position: this.base + at });
  }

  private peek(): string | undefined {
    return this.chars[this.pos];
  }

  parseWhole(): GrammarExpr {
    if (this.peek() === '^') this.pos++;
    const expr = this.alternation();
    if (this.pos < this.chars.length) this.fail(this.peek() === ')' ? 'unbalanced )' : `unexpected '${this.peek()}'`);
    return expr;
  }

  private alternation(): GrammarExpr {
    const branches = [this.sequence()];
    while (this.peek() === '|') {
      this.pos++;
      branches.push(this.sequence());
    }
    return alt(...branches);
  }

  private sequence(): GrammarExpr {
    const items: GrammarExpr[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') break;
      if (c === '$') {
        const next = this.chars[this.pos + 1];
        if (next === undefined || next === '|' || next === ')') {
          this.pos++;
          continue;
        }
        this.fail('$ is only supported at the end of the pattern');
      }
      if (c === '^') this.fail('^ is only supported at the start of the pattern');
      const atomStart = this.pos;
      const atom = this.atom();
      items.push(this.quantified(atom, atomStart));
    }
    return items.length === 0 ? EMPTY : seq(...items);
  }

  private quantified(atom: GrammarExpr, atomStart: number): GrammarExpr {
    let expr = atom;
    for (;;) {
      const c = this.peek();
      let min: number;
      let max: number;
      if (c === '*') [min, max] = [0, Infinity];
      else if (c === '+') [min, max] = [1, Infinity];
      else if (c === '?') [min, max] = [0, 1];
      else if (c === '{' && this.isBraceQuantifier()) {
        [min, max] = this.braceQuantifier();
        this.pos--; // braceQuantifier leaves pos after '}'; undo the ++ below
      } else return expr;
      this.pos++;
      if (this.peek() === '?') this.pos++; // lazy: same language
      if (this.peek() === '+') this.fail('possessive quantifiers are not supported');
      if (expr !== atom) this.fail('nothing to repeat', atomStart);
      expr = repeat(atom, min, max);
    }
  }

  private isBraceQuantifier(): boolean {
    return /^\{\d+(,\d*)?\}/.test(this.chars.slice(this.pos, this.pos + 24).join(''));
  }

  private braceQuantifier(): [number, number] {
    const start = this.pos;
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.chars.slice(this.pos, this.pos + 24).join(''))!;
    this.pos += m[0].length;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    if (max < min) this.fail('numbers out of order in {} quantifier', start);
    if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) this.fail(`repetition count above ${MAX_REPEAT}`, start);
    return [min, max];
  }

  private atom(): GrammarExpr {
    const start = this.pos;
    const c = this.chars[this.pos++];
    switch (c) {
      case '(':
        return this.group(start);
      case '[':
        return chars(this.maybeFold(this.charClass()));
      case '.':
        return chars(this.flags.dotAll ? ANY_CHAR : complement(LINE_TERMINATORS));
      case '\\':
        return this.escapeAtom();
      case '*':
      case '+':
      case '?':
        return this.fail('nothing to repeat', start);
      case '{':
        if (this.isBraceQuantifierAt(start)) return this.fail('nothing to repeat', start);
        return this.literalChar(c);
      default:
        return this.literalChar(c);
    }
  }

  private isBraceQuantifierAt(at: number): boolean {
    return /^\{\d+(,\d*)?\}/.test(this.chars.slice(at, at + 24).join(''));
  }

  private literalChar(c: string): GrammarExpr {
    const cp = c.codePointAt(0)!;
    if (this.flags.ignoreCase && /[a-zA-Z]/.test(c)) return chars(caseInsensitive(single(cp)));
    return lit(c);
  }

  private maybeFold(set: CodePointSet): CodePointSet {
    return this.flags.ignoreCase ? caseInsensitive(set) : set;
  }

  private group(start: number): GrammarExpr {
    if (this.peek() === '?') {
      const next = this.chars[this.pos + 1];
      if (next === ':') this.pos += 2;
      else if (next === '<' && this.chars[this.pos + 2] !== '=' && this.chars[this.pos + 2] !== '!') {
        const close = this.chars.indexOf('>', this.pos);
        if (close < 0) this.fail('unterminated group name', start);
        this.pos = close + 1;
      } else if (next === 'P' && this.chars[this.pos + 2] === '<') {
        const close = this.chars.indexOf('>', this.pos);
        if (close < 0) this.fail('unterminated group name', start);
        this.pos = close + 1;
      } else if (next === '=' || next === '!' || next === '<') this.fail('lookaround assertions are not supported', start);
      else this.fail('unsupported group syntax (?' + (next ?? '') + ')', start);
    }
    const inner = this.alternation();
    if (this.peek() !== ')') this.fail('unterminated group', start);
    this.pos++;
    return inner;
  }

  /** After a backslash outside a class. */
  private escapeAtom(): GrammarExpr {
    const start = this.pos - 1;
    const c = this.peek();
    if (c === undefined) this.fail('\\ at end of pattern', start);
    if (c === 'b' || c === 'B') this.fail('word-boundary assertions (\\b, \\B) are not supported', start);
    if (/[1-9]/.test(c) || c === 'k') this.fail('backreferences are not supported', start);
    if (c === 'A' || c === 'Z' || c === 'z') this.fail(`\\${c} anchors are not supported`, start);
    const set = this.escapeSet(start);
    return chars(this.maybeFold(set));
  }

  /** An escape (after the backslash) as a code-point set. */
  private escapeSet(start: number): CodePointSet {
    const c = this.chars[this.pos++];
    switch (c) {
      case 'd':
        return DIGITS;
      case 'D':
        return complement(DIGITS);
      case 'w':
        return WORD_CHARS;
      case 'W':
        return complement(WORD_CHARS);
      case 's':
        return SPACE_CHARS;
      case 'S':
        return complement(SPACE_CHARS);
      case 'n':
        return single(0x0a);
      case 't':
        return single(0x09);
      case 'r':
        return single(0x0d);
      case 'f':
        return single(0x0c);
      case 'v':
        return single(0x0b);
      case '0':
        return single(0);
      case 'x': {
        const hex = this.chars.slice(this.pos, this.pos + 2).join('');
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) this.fail('\\x needs two hex digits', start);
        this.pos += 2;
        return single(parseInt(hex, 16));
      }
      case 'u': {
        if (this.peek() === '{') {
          const close = this.chars.indexOf('}', this.pos);
          const hex = close < 0 ? '' : this.chars.slice(this.pos + 1, close).join('');
          if (!/^[0-9a-fA-F]{1,6}$/.test(hex) || parseInt(hex, 16) > 0x10ffff) this.fail('bad \\u{…} escape', start);
          this.pos = close + 1;
          return single(parseInt(hex, 16));
        }
        const hex = this.chars.slice(this.pos, this.pos + 4).join('');
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('\\u needs four hex digits', start);
        this.pos += 4;
        return single(parseInt(hex, 16));
      }
      default:
        if (c === undefined) return this.fail('\\ at end of pattern', start);
        if (/[a-zA-Z0-9]/.test(c)) return this.fail(`unsupported escape \\${c}`, start);
        return single(c.codePointAt(0)!);
    }
  }

  /** After '[': the class up to and including ']'. */
  private charClass(): CodePointSet {
    const start = this.pos - 1;
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.pos++;
    }
    let set: CodePointSet = [];
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === undefined) this.fail('unterminated character class', start);
      if (c === ']' && !first) {
        this.pos++;
        break;
      }
      if (c === ']' && first) {
        // ECMAScript: [] matches nothing, [^] matches anything.
        this.pos++;
        return negated ? ANY_CHAR : [];
      }
      first = false;
      const lo = this.classAtom(start);
      if (this.peek() === '-' && this.chars[this.pos + 1] !== ']' && this.chars[this.pos + 1] !== undefined) {
        this.pos++;
        const hi = this.classAtom(start);
        if (lo.single === undefined || hi.single === undefined) this.fail('a class escape cannot be a range bound', start);
        if (hi.single < lo.single) this.fail('range out of order in character class', start);
        set = union(set, normalize([lo.single, hi.single]));
      } else set = union(set, lo.set);
    }
    return negated ? subtract(ANY_CHAR, set) : set;
  }

  private classAtom(classStart: number): { set: CodePointSet; single?: number } {
    const c = this.chars[this.pos++];
    if (c === '\\') {
      const e = this.peek();
      if (e === 'b') {
        this.pos++;
        return { set: single(8), single: 8 };
      }
      if (e === '-') {
        this.pos++;
        return { set: single(0x2d), single: 0x2d };
      }
      const set = this.escapeSet(classStart);
      return set.length === 2 && set[0] === set[1] ? { set, single: set[0] } : { set };
    }
    if (c === '[' && this.peek() === ':') this.fail('POSIX classes like [:alpha:] are not supported', classStart);
    const cp = c.codePointAt(0)!;
    return { set: single(cp), single: cp };
  }
}
