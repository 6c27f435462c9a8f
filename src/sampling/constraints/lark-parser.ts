// Lark grammars (the subset custom tools use) parsed into the grammar IR. Supported: rules (`name: …`, with
// the `?`/`!` modifiers and `.priority`, which do not change the language), terminals (`NAME: …`), string
// literals (with the `i` flag), regex terminals `/…/flags` (i, s), "a".."z" ranges, alternation `|`, grouping
// `( )`, optional `[ ]`, `* + ?`, `~ n` and `~ n..m`, aliases `-> name` (ignored), `%import common.X` (and
// `%import common (A, B)`) for the common terminals, and `%ignore`, which allows the ignored terminals between
// the terminals of rules. Templates, `%declare` and other imports raise a ConstraintError with the position.
import { ConstraintError } from './constraint-error.ts';
import { EMPTY, type Grammar, type GrammarExpr, alt, caseInsensitive, chars, lit, normalize, optional, ref, repeat, seq, single } from './grammar-ir.ts';
import { parseRegex } from './regex-parser.ts';

/** Lark's `common` terminals this parser can import, as regular expressions. */
const COMMON_TERMINALS: Record<string, string> = {
  DIGIT: '[0-9]',
  HEXDIGIT: '[a-fA-F0-9]',
  INT: '[0-9]+',
  SIGNED_INT: '[+-]?[0-9]+',
  DECIMAL: '[0-9]+\\.[0-9]*|\\.[0-9]+',
  FLOAT: '[0-9]+[eE][+-]?[0-9]+|([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?',
  SIGNED_FLOAT: '[+-]?([0-9]+[eE][+-]?[0-9]+|([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?)',
  NUMBER: '[0-9]+[eE][+-]?[0-9]+|([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+',
  SIGNED_NUMBER: '[+-]?([0-9]+[eE][+-]?[0-9]+|([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+)',
  ESCAPED_STRING: '"([^"\\\\\\n]|\\\\[^\\n])*"',
  LETTER: '[a-zA-Z]',
  LCASE_LETTER: '[a-z]',
  UCASE_LETTER: '[A-Z]',
  WORD: '[a-zA-Z]+',
  CNAME: '[_a-zA-Z][_a-zA-Z0-9]*',
  WS_INLINE: '[ \\t]+',
  WS: '[ \\t\\f\\r\\n]+',
  CR: '\\r',
  LF: '\\n',
  NEWLINE: '(\\r?\\n)+',
  SH_COMMENT: '#[^\\n]*',
  CPP_COMMENT: '//[^\\n]*',
  C_COMMENT: '/\\*([^*]|\\*+[^*/])*\\*+/',
};

type TokenKind = 'name' | 'string' | 'regex' | 'op' | 'number' | 'directive' | 'end';
interface Token {
  kind: TokenKind;
  text: string;
  pos: number;
  /** First token on its line. */
  lineStart: boolean;
}

function fail(message: string, pos: number): never {
  throw new ConstraintError(`Invalid Lark grammar at position ${pos}: ${message}`, { position: pos });
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  let lineStart = true;
  while (pos < source.length) {
    const c = source[pos];
    if (c === '\n') {
      lineStart = true;
      pos++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      pos++;
      continue;
    }
    if (source.startsWith('//', pos) || c === '#') {
      while (pos < source.length && source[pos] !== '\n') pos++;
      continue;
    }
    const start = pos;
    let kind: TokenKind;
    if (/[A-Za-z_]/.test(c)) {
      while (pos < source.length && /[A-Za-z0-9_]/.test(source[pos])) pos++;
      kind = 'name';
    } else if (/[0-9]/.test(c)) {
      while (pos < source.length && /[0-9]/.test(source[pos])) pos++;
      kind = 'number';
    } else if (c === '"') {
      pos++;
      while (pos < source.length && source[pos] !== '"') {
        if (source[pos] === '\n') fail('unterminated string', start);
        pos += source[pos] === '\\' ? 2 : 1;
      }
      if (pos >= source.length) fail('unterminated string', start);
      pos++;
      if (source[pos] === 'i') pos++;
      kind = 'string';
    } else if (c === '/' ) {
      pos++;
      while (pos < source.length && source[pos] !== '/') {
        if (source[pos] === '\n') fail('unterminated regular expression', start);
        pos += source[pos] === '\\' ? 2 : 1;
      }
      if (pos >= source.length) fail('unterminated regular expression', start);
      pos++;
      while (pos < source.length && /[a-z]/.test(source[pos])) pos++;
      kind = 'regex';
    } else if (c === '%') {
      pos++;
      while (pos < source.length && /[a-z]/.test(source[pos])) pos++;
      kind = 'directive';
    } else if (source.startsWith('->', pos) || source.startsWith('..', pos)) {
      pos += 2;
      kind = 'op';
    } else if (':|()[]?*+~.,{}!'.includes(c)) {
      pos++;
      kind = 'op';
    } else {
      fail(`unexpected character '${c}'`, pos);
    }
    tokens.push({ kind, text: source.slice(start, pos), pos: start, lineStart });
    lineStart = false;
  }
  tokens.push({ kind: 'end', text: '', pos: source.length, lineStart: true });
  return tokens;
}

/** The string value of a Lark string literal token (without quotes and the `i` flag). */
function stringValue(token: Token): { text: string; ignoreCase: boolean } {
  const ignoreCase = token.text.endsWith('i') && !token.text.endsWith('"');
  const body = token.text.slice(1, ignoreCase ? -2 : -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', '0': '\0', '\\': '\\', '"': '"', "'": "'", b: '\b', a: '\x07' };
    if (e in simple) out += simple[e];
    else if (e === 'x' || e === 'u' || e === 'U') {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) fail(`bad \\${e} escape in string`, token.pos + i);
      out += String.fromCodePoint(parseInt(hex, 16));
      i += len;
    } else out += '\\' + e; // Python keeps unknown escapes as written
  }
  return { text: out, ignoreCase };
}

class LarkParser {
  private i = 0;
  readonly rules = new Map<string, GrammarExpr>();
  private readonly terminalNames = new Set<string>();
  private readonly ignored: GrammarExpr[] = [];
  private readonly definedAt = new Map<string, number>();
  private readonly usedAt = new Map<string, number>();

  constructor(private readonly tokens: Token[]) {}

  private cur(): Token {
    return this.tokens[this.i];
  }

  parse(): Grammar {
    while (this.cur().kind !== 'end') {
      if (!this.cur().lineStart) fail(`unexpected '${this.cur().text}'`, this.cur().pos);
      if (this.cur().kind === 'directive') this.directive();
      else this.definition();
    }
    for (const [name, pos] of this.usedAt) if (!this.rules.has(name)) fail(`'${name}' is used but not defined`, pos);
    if (!this.rules.has('start')) fail("the grammar has no 'start' rule", 0);
    if (this.ignored.length === 0) return { rules: this.rules, start: 'start' };
    // %ignore: the ignored terminals may appear before any terminal of a rule and at the end.
    const ignore = repeat(ref('__ignored'), 0);
    const rules = new Map<string, GrammarExpr>();
    for (const [name, expr] of this.rules) rules.set(name, this.terminalNames.has(name) ? expr : this.withIgnored(expr, ignore));
    rules.set('__ignored', alt(...this.ignored));
    rules.set('__start_ignored', seq(ref('start'), ignore));
    return { rules, start: '__start_ignored' };
  }

  private withIgnored(e: GrammarExpr, ignore: GrammarExpr): GrammarExpr {
    switch (e.kind) {
      case 'literal':
      case 'chars':
        return seq(ignore, e);
      case 'rule':
        return this.terminalNames.has(e.name) ? seq(ignore, e) : e;
      case 'seq':
      case 'alt':
        return { kind: e.kind, items: e.items.map((x) => this.withIgnored(x, ignore)) };
      case 'repeat':
        return { ...e, item: this.withIgnored(e.item, ignore) };
      default:
        return e;
    }
  }

  private expectOp(text: string): Token {
    const t = this.cur();
    if (t.kind !== 'op' || t.text !== text) fail(`expected '${text}', found '${t.text || 'end of grammar'}'`, t.pos);
    this.i++;
    return t;
  }

  private directive(): void {
    const d = this.cur();
    this.i++;
    if (d.text === '%ignore') {
      const start = this.i;
      this.ignored.push(this.expansions(true));
      if (this.i === start) fail('%ignore needs a terminal', d.pos);
      return;
    }
    if (d.text === '%import') {
      const first = this.cur();
      if (first.kind !== 'name') fail('expected a module name after %import', first.pos);
      this.i++;
      const module = [first.text];
      let names: { name: string; alias: string; pos: number }[] = [];
      while (this.cur().kind === 'op' && this.cur().text === '.' && !this.cur().lineStart) {
        this.i++;
        if (this.cur().kind !== 'name') fail('expected a name after .', this.cur().pos);
        module.push(this.cur().text);
        this.i++;
      }
      if (this.cur().kind === 'op' && this.cur().text === '(' && !this.cur().lineStart) {
        this.i++;
        for (;;) {
          if (this.cur().kind !== 'name') fail('expected a terminal name', this.cur().pos);
          names.push({ name: this.cur().text, alias: this.cur().text, pos: this.cur().pos });
          this.i++;
          if (this.cur().kind === 'op' && this.cur().text === ',') this.i++;
          else break;
        }
        this.expectOp(')');
      } else {
        const name = module.pop()!;
        let alias = name;
        if (this.cur().kind === 'op' && this.cur().text === '->' && !this.cur().lineStart) {
          this.i++;
          alias = this.cur().text;
          this.i++;
        }
        names = [{ name, alias, pos: first.pos }];
      }
      if (module.join('.') !== 'common') fail(`only '%import common' is supported, not '${module.join('.')}'`, first.pos);
      for (const { name, alias, pos } of names) {
        const regex = COMMON_TERMINALS[name];
        if (!regex) fail(`common.${name} is not a supported import (have: ${Object.keys(COMMON_TERMINALS).join(', ')})`, pos);
        this.rules.set(alias, parseRegex(regex));
        this.terminalNames.add(alias);
      }
      return;
    }
    fail(`unsupported directive ${d.text}`, d.pos);
  }

  private definition(): void {
    let t = this.cur();
    if (t.kind === 'op' && (t.text === '?' || t.text === '!')) {
      this.i++;
      t = this.cur();
    }
    if (t.kind !== 'name') fail(`expected a rule or terminal name, found '${t.text}'`, t.pos);
    this.i++;
    const name = t.text;
    if (this.cur().kind === 'op' && this.cur().text === '{') fail('templates are not supported', this.cur().pos);
    if (this.cur().kind === 'op' && this.cur().text === '.') {
      this.i++;
      if (this.cur().kind === 'op' && this.cur().text === '-') this.i++;
      if (this.cur().kind !== 'number') fail('expected a priority number after .', this.cur().pos);
      this.i++;
    }
    this.expectOp(':');
    if (this.rules.has(name)) fail(`'${name}' is defined twice`, t.pos);
    const isTerminal = /^_?[A-Z][A-Z0-9_]*$/.test(name);
    if (isTerminal) this.terminalNames.add(name);
    this.definedAt.set(name, t.pos);
    this.rules.set(name, this.expansions(false));
  }

  /** Does the current token start a new definition (or directive) at the start of a line? */
  private atDefinitionStart(): boolean {
    const t = this.cur();
    if (t.kind === 'end') return true;
    if (!t.lineStart) return false;
    if (t.kind === 'directive') return true;
    let j = this.i;
    if (this.tokens[j].kind === 'op' && (this.tokens[j].text === '?' || this.tokens[j].text === '!')) j++;
    if (this.tokens[j].kind !== 'name') return false;
    j++;
    if (this.tokens[j].kind === 'op' && this.tokens[j].text === '.') j += this.tokens[j + 1]?.text === '-' ? 3 : 2;
    return this.tokens[j]?.kind === 'op' && this.tokens[j].text === ':';
  }

  private expansions(singleLine: boolean): GrammarExpr {
    const branches = [this.alternative(singleLine)];
    while (this.cur().kind === 'op' && this.cur().text === '|' && !(singleLine && this.cur().lineStart)) {
      this.i++;
      branches.push(this.alternative(singleLine));
    }
    return alt(...branches);
  }

  private alternative(singleLine: boolean): GrammarExpr {
    const items: GrammarExpr[] = [];
    for (;;) {
      const t = this.cur();
      if (t.kind === 'end' || (t.lineStart && (singleLine || this.atDefinitionStart()))) break;
      if (t.kind === 'op' && (t.text === '|' || t.text === ')' || t.text === ']')) break;
      if (t.kind === 'op' && t.text === '->') {
        this.i++;
        if (this.cur().kind !== 'name') fail('expected an alias name after ->', this.cur().pos);
        this.i++;
        break;
      }
      items.push(this.postfix(this.atom()));
    }
    return items.length === 0 ? EMPTY : seq(...items);
  }

  private postfix(atom: GrammarExpr): GrammarExpr {
    let expr = atom;
    for (;;) {
      const t = this.cur();
      if (t.kind !== 'op' || t.lineStart) return expr;
      if (t.text === '?') expr = optional(expr);
      else if (t.text === '*') expr = repeat(expr, 0);
      else if (t.text === '+') expr = repeat(expr, 1);
      else if (t.text === '~') {
        this.i++;
        const lo = this.cur();
        if (lo.kind !== 'number') fail('expected a number after ~', lo.pos);
        this.i++;
        let max = Number(lo.text);
        if (this.cur().kind === 'op' && this.cur().text === '..') {
          this.i++;
          if (this.cur().kind !== 'number') fail('expected a number after ..', this.cur().pos);
          max = Number(this.cur().text);
          this.i++;
        }
        if (max < Number(lo.text)) fail('repetition range out of order', lo.pos);
        if (max > 1000) fail('repetition count above 1000', lo.pos);
        expr = repeat(expr, Number(lo.text), max);
        continue;
      } else return expr;
      this.i++;
    }
  }

  private atom(): GrammarExpr {
    const t = this.cur();
    this.i++;
    switch (t.kind) {
      case 'string': {
        const { text, ignoreCase } = stringValue(t);
        if (this.cur().kind === 'op' && this.cur().text === '..' && !this.cur().lineStart) {
          this.i++;
          const hiTok = this.cur();
          if (hiTok.kind !== 'string') fail('expected a string after ..', hiTok.pos);
          this.i++;
          const hi = stringValue(hiTok).text;
          if ([...text].length !== 1 || [...hi].length !== 1) fail('a range needs single characters', t.pos);
          const set = normalize([text.codePointAt(0)!, hi.codePointAt(0)!]);
          if (set.length === 0) fail('range out of order', t.pos);
          return chars(set);
        }
        if (!ignoreCase) return lit(text);
        return seq(...[...text].map((ch) => chars(caseInsensitive(single(ch.codePointAt(0)!)))));
      }
      case 'regex': {
        const lastSlash = t.text.lastIndexOf('/');
        const body = t.text.slice(1, lastSlash);
        const flags = t.text.slice(lastSlash + 1);
        for (const f of flags) if (f !== 'i' && f !== 's') fail(`unsupported regex flag '${f}'`, t.pos + lastSlash + 1);
        return parseRegex(body, { ignoreCase: flags.includes('i'), dotAll: flags.includes('s') }, t.pos + 1);
      }
      case 'name':
        if (this.cur().kind === 'op' && this.cur().text === '{' && !this.cur().lineStart) fail('templates are not supported', this.cur().pos);
        if (!this.usedAt.has(t.text)) this.usedAt.set(t.text, t.pos);
        return ref(t.text);
      case 'op':
        if (t.text === '(') {
          const inner = this.expansionsInside();
          this.expectOp(')');
          return inner;
        }
        if (t.text === '[') {
          const inner = this.expansionsInside();
          this.expectOp(']');
          return optional(inner);
        }
        return fail(`unexpected '${t.text}'`, t.pos);
      default:
        return fail(`unexpected '${t.text || 'end of grammar'}'`, t.pos);
    }
  }

  /** Alternatives inside brackets, which may span lines. */
  private expansionsInside(): GrammarExpr {
    const branches: GrammarExpr[] = [];
    for (;;) {
      const items: GrammarExpr[] = [];
      for (;;) {
        const t = this.cur();
        if (t.kind === 'end' || (t.kind === 'op' && (t.text === '|' || t.text === ')' || t.text === ']'))) break;
        items.push(this.postfix(this.atom()));
      }
      branches.push(items.length === 0 ? EMPTY : seq(...items));
      if (this.cur().kind === 'op' && this.cur().text === '|') this.i++;
      else break;
    }
    return alt(...branches);
  }
}

/** Parses a Lark grammar (start rule `start`); throws ConstraintError with the position on a syntax error. */
export function parseLark(source: string): Grammar {
  return new LarkParser(tokenize(source)).parse();
}
