// JSON Schema (the subset strict structured outputs allow) compiled to the grammar IR: object (properties in
// declared order, `required`, `additionalProperties`), array (`items`, `minItems`, `maxItems`), string
// (`pattern`, `minLength`, `maxLength`), number, integer, boolean, null, `enum`, `const`, `anyOf`, type lists,
// and `$ref` into `$defs`/`definitions` (recursion allowed). Annotations (description, title, default, ...) are
// ignored; any other keyword is a ConstraintError naming the keyword and its JSON path. A null or `{}` schema
// means any JSON value (for json_object: any object). Whitespace between tokens is allowed, bounded: one space, or
// a newline and an indent of at most MAX_JSON_INDENT (jsonWhitespaceExpr).
import { estimateExprStates, DEFAULT_COMPILE_BUDGET } from './byte-automaton.ts';
import { ConstraintError, ConstraintTooLargeError } from './constraint-error.ts';
import {
  ANY_CHAR,
  EMPTY,
  type GrammarExpr,
  alt,
  chars,
  jsonEscaped,
  lit,
  normalize,
  optional,
  range,
  ref,
  repeat,
  seq,
  setOfChars,
} from './grammar-ir.ts';
import { parseRegex } from './regex-parser.ts';

const ANNOTATIONS = new Set([
  'description', 'title', '$schema', '$id', '$comment', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly',
]);
const SUPPORTED = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'minItems', 'maxItems', 'enum', 'const',
  'anyOf', '$ref', '$defs', 'definitions', 'pattern', 'minLength', 'maxLength', 'strict',
]);
const MAX_BOUND = 1000;
/**
 * The longest indent (spaces or tabs) accepted after a newline between two JSON tokens: 4-space pretty-printing five
 * levels deep (a call in a list, its arguments' nested arrays), llama.cpp's json-schema-to-grammar bound too.
 */
export const MAX_JSON_INDENT = 20;

/**
 * Whitespace between two JSON tokens: none, one space, or one newline and an indent of at most MAX_JSON_INDENT
 * spaces or tabs. Pretty-printed JSON (2- or 4-space indents, as models write it) fits; a run of blanks does not,
 * so a constrained model (random weights, or a model stuck on a whitespace token) cannot spend its tokens on it.
 */
export function jsonWhitespaceExpr(): GrammarExpr {
  return optional(alt(lit(' '), seq(lit('\n'), repeat(chars(setOfChars(' \t')), 0, MAX_JSON_INDENT))));
}

/**
 * Whitespace between the blocks around JSON (between calls, after a reasoning block, around a JSON answer): what
 * jsonWhitespaceExpr allows, or two newlines (`</think>\n\n`).
 */
export function blockGapExpr(): GrammarExpr {
  return alt(jsonWhitespaceExpr(), lit('\n\n'));
}
const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

/** Adds the generic JSON rules (any value) to `rules` under `prefix` once; returns the rule names. */
export function addGenericJsonRules(rules: Map<string, GrammarExpr>, prefix: string) {
  const name = {
    ws: `${prefix}ws`,
    value: `${prefix}value`,
    object: `${prefix}object`,
    array: `${prefix}array`,
    string: `${prefix}string`,
    number: `${prefix}number`,
    integer: `${prefix}integer`,
  };
  if (rules.has(name.value)) return name;
  const ws = ref(name.ws);
  rules.set(name.ws, jsonWhitespaceExpr());
  const stringChar = alt(
    chars(normalize([0x20, 0x21, 0x23, 0x5b, 0x5d, 0x10ffff])),
    seq(lit('\\'), chars(setOfChars('"\\/bfnrt'))),
    seq(lit('\\u'), repeat(chars(normalize([0x30, 0x39, 0x41, 0x46, 0x61, 0x66])), 4, 4)),
  );
  rules.set(name.string, seq(lit('"'), repeat(stringChar, 0), lit('"')));
  const digits = repeat(chars(range(0x30, 0x39)), 0);
  const intPart = seq(optional(lit('-')), alt(lit('0'), seq(chars(range(0x31, 0x39)), digits)));
  rules.set(name.integer, intPart);
  rules.set(
    name.number,
    seq(
      ref(name.integer),
      optional(seq(lit('.'), repeat(chars(range(0x30, 0x39)), 1))),
      optional(seq(chars(setOfChars('eE')), optional(chars(setOfChars('+-'))), repeat(chars(range(0x30, 0x39)), 1))),
    ),
  );
  const member = seq(ref(name.string), ws, lit(':'), ws, ref(name.value));
  rules.set(name.object, seq(lit('{'), ws, optional(seq(member, repeat(seq(ws, lit(','), ws, member), 0), ws)), lit('}')));
  rules.set(
    name.array,
    seq(lit('['), ws, optional(seq(ref(name.value), repeat(seq(ws, lit(','), ws, ref(name.value)), 0), ws)), lit(']')),
  );
  rules.set(
    name.value,
    alt(ref(name.object), ref(name.array), ref(name.string), ref(name.number), lit('true'), lit('false'), lit('null')),
  );
  return name;
}

type Schema = Record<string, unknown>;

class SchemaCompiler {
  private readonly json: ReturnType<typeof addGenericJsonRules>;
  private readonly refRules = new Map<string, string>();
  private counter = 0;

  constructor(
    private readonly root: Schema,
    private readonly rules: Map<string, GrammarExpr>,
    private readonly prefix: string,
  ) {
    this.json = addGenericJsonRules(rules, `${prefix}json_`);
  }

  private fail(message: string, path: string, keyword?: string): never {
    throw new ConstraintError(`Invalid JSON schema at ${path}: ${message}`, { jsonPath: path, keyword });
  }

  private get ws(): GrammarExpr {
    return ref(this.json.ws);
  }

  compile(schema: unknown, path: string): GrammarExpr {
    if (schema === true || schema === undefined) return ref(this.json.value);
    if (schema === false) this.fail('a false schema matches nothing', path);
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) this.fail('a schema must be an object', path);
    const s = schema as Schema;
    for (const key of Object.keys(s)) {
      if (!SUPPORTED.has(key) && !ANNOTATIONS.has(key)) this.fail(`unsupported keyword '${key}'`, `${path}.${key}`, key);
    }
    if ('$ref' in s) return this.reference(s.$ref, `${path}.$ref`);
    if ('const' in s) return lit(jsonText(s.const, `${path}.const`));
    if ('enum' in s) {
      if (!Array.isArray(s.enum) || s.enum.length === 0) this.fail("'enum' must be a non-empty array", `${path}.enum`, 'enum');
      return alt(...s.enum.map((v, i) => lit(jsonText(v, `${path}.enum[${i}]`))));
    }
    if ('anyOf' in s) {
      if (!Array.isArray(s.anyOf) || s.anyOf.length === 0) this.fail("'anyOf' must be a non-empty array", `${path}.anyOf`, 'anyOf');
      return alt(...s.anyOf.map((sub, i) => this.compile(sub, `${path}.anyOf[${i}]`)));
    }
    const type = s.type;
    if (type === undefined) {
      if ('properties' in s) return this.object(s, path);
      if ('items' in s) return this.array(s, path);
      return ref(this.json.value);
    }
    const types = Array.isArray(type) ? type : [type];
    if (types.length === 0) this.fail("'type' must not be empty", `${path}.type`, 'type');
    return alt(
      ...types.map((t, i) => {
        if (typeof t !== 'string' || !TYPES.has(t)) this.fail(`unknown type ${JSON.stringify(t)}`, `${path}.type${Array.isArray(type) ? `[${i}]` : ''}`, 'type');
        return this.typed(t, s, path);
      }),
    );
  }

  private typed(type: string, s: Schema, path: string): GrammarExpr {
    switch (type) {
      case 'object':
        return this.object(s, path);
      case 'array':
        return this.array(s, path);
      case 'string':
        return this.string(s, path);
      case 'number':
        return ref(this.json.number);
      case 'integer':
        return ref(this.json.integer);
      case 'boolean':
        return alt(lit('true'), lit('false'));
      default:
        return lit('null');
    }
  }

  private reference(target: unknown, path: string): GrammarExpr {
    if (typeof target !== 'string') this.fail("'$ref' must be a string", path, '$ref');
    let name = this.refRules.get(target);
    if (name) return ref(name);
    if (!target.startsWith('#')) this.fail(`only local references ('#/$defs/…') are supported, not '${target}'`, path, '$ref');
    let node: unknown = this.root;
    const parts = target.slice(1).split('/').filter((p) => p !== '');
    for (const part of parts) {
      const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
      if (typeof node !== 'object' || node === null || !(key in (node as Schema))) this.fail(`reference '${target}' does not resolve`, path, '$ref');
      node = (node as Schema)[key];
    }
    name = `${this.prefix}ref${this.counter++}`;
    this.refRules.set(target, name);
    this.rules.set(name, EMPTY); // placeholder so recursive references resolve
    this.rules.set(name, this.compile(node, `$${parts.map((p) => `.${p}`).join('')}`));
    return ref(name);
  }

  private object(s: Schema, path: string): GrammarExpr {
    const props = s.properties ?? {};
    if (typeof props !== 'object' || props === null || Array.isArray(props)) this.fail("'properties' must be an object", `${path}.properties`, 'properties');
    const required = s.required ?? [];
    if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) this.fail("'required' must be an array of strings", `${path}.required`, 'required');
    const additional = s.additionalProperties;
    if (additional !== undefined && typeof additional !== 'boolean') {
      this.fail("'additionalProperties' must be false (or true)", `${path}.additionalProperties`, 'additionalProperties');
    }
    const names = Object.keys(props as Schema);
    for (const r of required) if (!names.includes(r)) this.fail(`required property '${r}' is not in 'properties'`, `${path}.required`, 'required');
    if (names.length === 0) return additional === false ? seq(lit('{'), this.ws, lit('}')) : ref(this.json.object);
    const ws = this.ws;
    const members = names.map((n) => seq(lit(JSON.stringify(n)), ws, lit(':'), ws, this.compile((props as Schema)[n], `${path}.properties.${n}`)));
    const isOptional = names.map((n) => !required.includes(n));
    // after(i): members i.. may follow an emitted member; first(i): nothing emitted yet.
    const id = this.counter++;
    const afterName = (i: number) => `${this.prefix}obj${id}_after${i}`;
    for (let i = names.length; i >= 0; i--) {
      const branches: GrammarExpr[] = [];
      for (let j = i; j < names.length; j++) {
        branches.push(seq(ws, lit(','), ws, members[j], ref(afterName(j + 1))));
        if (!isOptional[j]) break;
      }
      if (isOptional.slice(i).every(Boolean)) branches.push(EMPTY);
      this.rules.set(afterName(i), alt(...branches));
    }
    const firsts: GrammarExpr[] = [];
    for (let j = 0; j < names.length; j++) {
      firsts.push(seq(members[j], ref(afterName(j + 1))));
      if (!isOptional[j]) break;
    }
    const body = isOptional.every(Boolean) ? optional(alt(...firsts)) : alt(...firsts);
    return seq(lit('{'), ws, body, ws, lit('}'));
  }

  private array(s: Schema, path: string): GrammarExpr {
    const item = this.compile(s.items, `${path}.items`);
    const min = this.bound(s.minItems, `${path}.minItems`, 'minItems') ?? 0;
    const max = this.bound(s.maxItems, `${path}.maxItems`, 'maxItems') ?? Infinity;
    if (max < min) this.fail("'maxItems' is less than 'minItems'", path, 'maxItems');
    const ws = this.ws;
    const rule = `${this.prefix}items${this.counter++}`;
    this.rules.set(rule, item);
    const rest = repeat(seq(ws, lit(','), ws, ref(rule)), Math.max(0, min - 1), max === Infinity ? Infinity : max - 1);
    const nonEmpty = seq(ref(rule), rest);
    if (max === 0) return seq(lit('['), ws, lit(']'));
    return seq(lit('['), ws, min === 0 ? optional(seq(nonEmpty, ws)) : seq(nonEmpty, ws), lit(']'));
  }

  private string(s: Schema, path: string): GrammarExpr {
    const minLength = this.bound(s.minLength, `${path}.minLength`, 'minLength');
    const maxLength = this.bound(s.maxLength, `${path}.maxLength`, 'maxLength');
    if (s.pattern !== undefined) {
      if (typeof s.pattern !== 'string') this.fail("'pattern' must be a string", `${path}.pattern`, 'pattern');
      if (minLength !== undefined || maxLength !== undefined) this.fail("'pattern' together with a length bound is not supported", path, 'pattern');
      let decoded: GrammarExpr;
      try {
        decoded = parseRegex(s.pattern);
      } catch (e) {
        this.fail(e instanceof Error ? e.message : String(e), `${path}.pattern`, 'pattern');
      }
      // JSON Schema patterns are unanchored: allow any text around them unless anchored.
      const anyText = repeat(chars(ANY_CHAR), 0);
      const body = seq(
        s.pattern.startsWith('^') ? EMPTY : anyText,
        decoded,
        /(^|[^\\])\$$/.test(s.pattern) ? EMPTY : anyText,
      );
      const escaped = jsonEscaped(body, this.prefix);
      // Refused here, before anything is built, so the error names the pattern (the grammar's bound is the backstop).
      const { maxStates } = DEFAULT_COMPILE_BUDGET;
      if (estimateExprStates(escaped, maxStates) > maxStates) {
        throw new ConstraintTooLargeError(
          `Invalid JSON schema at ${path}.pattern: the pattern is too large to compile (more than ${maxStates} automaton states); reduce repetition counts or nesting`,
          { jsonPath: `${path}.pattern`, bound: 'states', limit: maxStates },
        );
      }
      return seq(lit('"'), escaped, lit('"'));
    }
    if (minLength === undefined && maxLength === undefined) return ref(this.json.string);
    const min = minLength ?? 0;
    const max = maxLength ?? Infinity;
    if (max < min) this.fail("'maxLength' is less than 'minLength'", path, 'maxLength');
    return seq(lit('"'), jsonEscaped(repeat(chars(ANY_CHAR), min, max), this.prefix), lit('"'));
  }

  private bound(value: unknown, path: string, keyword: string): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) this.fail(`'${keyword}' must be a non-negative integer`, path, keyword);
    if (value > MAX_BOUND) this.fail(`'${keyword}' above ${MAX_BOUND} is not supported`, path, keyword);
    return value;
  }
}

function jsonText(value: unknown, path: string): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new ConstraintError(`Invalid JSON schema at ${path}: not a JSON value`, { jsonPath: path });
  return text;
}

/**
 * Adds the rules for `schema` to `rules` (names prefixed with `prefix`) and returns the expression for one JSON
 * value that matches it. `schema` null means any JSON value.
 */
export function jsonSchemaExpr(schema: Record<string, unknown> | null, rules: Map<string, GrammarExpr>, prefix: string): GrammarExpr {
  if (schema === null) return ref(addGenericJsonRules(rules, `${prefix}json_`).value);
  return new SchemaCompiler(schema, rules, prefix).compile(schema, '$');
}

/** The rule for any JSON object (json_object mode, non-strict arguments). */
export function anyJsonObjectExpr(rules: Map<string, GrammarExpr>, prefix: string): GrammarExpr {
  return ref(addGenericJsonRules(rules, `${prefix}json_`).object);
}
