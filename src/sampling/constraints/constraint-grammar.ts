// A ConstraintSpec as one grammar. `json_schema`: the whole answer is one JSON value matching the schema
// (whitespace around it allowed). `tools`: the chat format of tool calls -- free text that does not contain the
// tool-call marker (mode `auto`), or, for `required`/`named`, an optional thinking block and then a call;
// each call is `<tool_call>{"name": <declared>, "arguments": <its schema>}</tool_call>`, and a custom tool's
// arguments are `{"input": "<JSON-escaped text matching its Lark/regex grammar>"}`. With `maxCalls` the turn
// makes at most that many calls: after the last one allowed, the only continuation is the end of the turn.
// A call's JSON never holds the end marker as raw text (inside strings it is written with an escape, e.g.
// `<\/tool_call>` or `</tool_call\u003e`), so the first end marker after `<tool_call>` ends the call for any
// reader, the Responses output parser included.
import { type ChatFormatMarkers, DEFAULT_MARKERS } from '../../common/chat.ts';
import type { ConstrainedTool, ConstraintSpec } from '../../common/constraint-spec.ts';
import { type ChatFormatName, chatFormatByName } from '../../common/chat-format.ts';
import { jsonCallsStart } from './json-call-grammar.ts';
import { harmonyBeforeFinal, harmonyStart } from './harmony-grammar.ts';

export { type ChatFormatMarkers, DEFAULT_MARKERS };
import { DEFAULT_COMPILE_BUDGET, compileGrammar, estimateExprStates } from './byte-automaton.ts';
import { ConstraintError, ConstraintTooLargeError } from './constraint-error.ts';
import {
  EMPTY,
  type Grammar,
  type GrammarExpr,
  alt,
  contains,
  embedJsonEscaped,
  lit,
  optional,
  ref,
  repeat,
  seq,
  setOfChars,
  withEscapedSpelling,
  without,
} from './grammar-ir.ts';
import { addGenericJsonRules, anyJsonObjectExpr, blockGapExpr, jsonSchemaExpr } from './json-schema.ts';
import { parseLark } from './lark-parser.ts';
import { parseRegex } from './regex-parser.ts';

/**
 * Thinking before a forced tool call: 'none' (the call comes first), 'optional' (the output may start with a
 * `<think>…</think>` block), 'open' (the prompt already opened the block: the output starts inside it and must
 * close it before the call). For json_schema only 'open' matters: the JSON follows the closing marker.
 */
export type ThinkingMode = 'none' | 'optional' | 'open';

export interface ChatFormatOptions {
  markers: ChatFormatMarkers;
  thinking: ThinkingMode;
  /** The chat format (src/common/chat-format.ts); absent or `hermes`: `<tool_call>` with `markers` as above. */
  format?: ChatFormatName;
}

export const DEFAULT_CHAT_FORMAT: ChatFormatOptions = { markers: DEFAULT_MARKERS, thinking: 'optional' };

/** The `tools` constraint, with the most calls the turn may make (`maxCalls`: a non-negative integer; absent: no limit). */
export type ToolsConstraintSpec = Extract<ConstraintSpec, { kind: 'tools' }>;

/**
 * Above this many calls the grammar does not count (each counted call is one more copy of the call in the
 * automaton); the Responses pipeline still drops calls over the limit.
 */
export const MAX_COUNTED_TOOL_CALLS = 128;

export function grammarForConstraint(spec: ConstraintSpec, format: ChatFormatOptions = DEFAULT_CHAT_FORMAT): Grammar {
  const rules = new Map<string, GrammarExpr>();
  switch (spec.kind) {
    case 'none': {
      rules.set('start', repeat({ kind: 'chars', set: [0, 0x10ffff] }, 0));
      return { rules, start: 'start' };
    }
    case 'json_schema': {
      const value = spec.schema === null ? anyJsonObjectExpr(rules, 'schema_') : jsonSchemaExpr(spec.schema, rules, 'schema_');
      // When the prompt opened a thinking block, the answer is constrained only after the block closes.
      // Harmony: the JSON is the final channel's message, after any analysis.
      const thinking =
        format.format === 'harmony'
          ? harmonyBeforeFinal()
          : format.thinking === 'open'
            ? seq({ kind: 'textWithout', literal: format.markers.thinkEnd }, lit(format.markers.thinkEnd))
            : EMPTY;
      const gap = blockGapExpr();
      rules.set('start', seq(thinking, gap, value, gap));
      return { rules, start: 'start' };
    }
    case 'tools':
      return toolsGrammar(spec, format, rules);
  }
}

function toolsGrammar(
  spec: ToolsConstraintSpec,
  options: ChatFormatOptions,
  rules: Map<string, GrammarExpr>,
): Grammar {
  const { markers, thinking } = options;
  let tools = spec.tools;
  if (spec.mode === 'named') {
    tools = tools.filter((t) => t.name === spec.name);
    if (tools.length === 0) throw new ConstraintError(`Tool '${spec.name ?? ''}' is not declared in tools`, { subject: 'tool_choice' });
  }
  const maxCalls = callLimit(spec);
  if (spec.mode !== 'auto' && maxCalls === 0) {
    throw new ConstraintError('tool_choice requires a tool call, but the turn may make no tool calls (max_tool_calls is 0)', { subject: 'tool_choice' });
  }
  if (tools.length === 0) {
    if (spec.mode !== 'auto') throw new ConstraintError('tool_choice requires a tool call, but no function or custom tool is declared', { subject: 'tool_choice' });
    rules.set('start', repeat({ kind: 'chars', set: [0, 0x10ffff] }, 0));
    return { rules, start: 'start' };
  }
  const ws = ref(addGenericJsonRules(rules, 'json_').ws);
  const gap = blockGapExpr();
  const format = chatFormatByName(options.format);
  if (format.name === 'harmony') {
    // Harmony's channels and headers: harmony-grammar.ts writes the shape.
    const harmonyTools = tools.map((tool, i) => ({ name: tool.name, args: toolArgumentsWithinBudget(tool, rules, `tool${i}_`) }));
    rules.set('start', harmonyStart(harmonyTools, spec.mode, maxCalls));
    return { rules, start: 'start' };
  }
  if (format.name !== 'hermes') {
    // The JSON-call formats (Llama 3.x, Mistral): json-call-grammar.ts writes the shape.
    const jsonTools = tools.map((tool, i) => ({ name: tool.name, args: toolArgumentsWithinBudget(tool, rules, `tool${i}_`) }));
    const calls = jsonCallsStart(format.calls, jsonTools, spec.mode, maxCalls, ws, gap);
    // A Mistral template that writes `[THINK]…[/THINK]` (chat-format.ts withMistralThinking): a forced call may
    // follow a reasoning block, as Hermes's may.
    rules.set('start', spec.mode !== 'auto' && markers.thinkStart ? seq(thinkingBlockOf(markers, thinking, gap), calls) : calls);
    return { rules, start: 'start' };
  }
  const calls = tools.map((tool, i) => {
    const prefix = `tool${i}_`;
    const args = toolArgumentsWithinBudget(tool, rules, prefix);
    const body = seq(
      lit('{'), ws, lit('"name"'), ws, lit(':'), ws, lit(JSON.stringify(tool.name)), ws, lit(','), ws,
      lit('"arguments"'), ws, lit(':'), ws, args, ws, lit('}'),
    );
    rules.set(`${prefix}call`, body);
    return ref(`${prefix}call`);
  });
  const body = excludeEndMarker(alt(...calls), markers.toolCallEnd, rules);
  rules.set('tool_call', seq(lit(markers.toolCallStart), ws, body, ws, lit(markers.toolCallEnd)));
  const call = ref('tool_call');
  if (spec.mode === 'auto') {
    const text = { kind: 'textWithout', literal: markers.toolCallStart } as const;
    // Text, then calls each followed by text; the last call the limit allows ends the turn.
    const calls = maxCalls === Infinity ? repeat(seq(call, text), 0) : maxCalls === 0 ? EMPTY : seq(repeat(seq(call, text), 0, maxCalls - 1), optional(call));
    rules.set('start', seq(text, calls));
  } else {
    const thinkingBlock = thinkingBlockOf(markers, thinking, gap);
    // Unlimited: calls separated and followed by a short gap. Limited: nothing follows the last call.
    const calls = maxCalls === Infinity ? seq(call, repeat(seq(gap, call), 0), gap) : seq(call, repeat(seq(gap, call), 0, maxCalls - 1));
    rules.set('start', seq(thinkingBlock, calls));
  }
  return { rules, start: 'start' };
}

/** Characters JSON text may hold outside strings (structure, whitespace, numbers, literals), or never plainly. */
const NOT_ONLY_IN_STRINGS = setOfChars(' \t\n\r{}[],:"\\0123456789+-.eEtrufalsn');

/**
 * The call's JSON (`body`) held to never contain `marker` as raw text. The marker's last character is one JSON
 * only writes inside strings, so the marker can only occur there, and every place in the call's JSON that
 * writes that character plainly may also write its escape (`>` as `\u003e`): wherever the raw text would
 * complete the marker, the escaped spelling remains, so no value becomes inexpressible and the matcher never
 * reaches a dead end. Rules the body uses are rewritten in place (only JSON inside the call uses them with that
 * character). A marker whose last character can stand outside JSON strings is left unguarded.
 */
function excludeEndMarker(body: GrammarExpr, marker: string, rules: Map<string, GrammarExpr>): GrammarExpr {
  const last = [...marker].at(-1)?.codePointAt(0);
  if (last === undefined || last > 0xffff || contains(NOT_ONLY_IN_STRINGS, last)) return body;
  for (const name of rulesUsedBy(body, rules)) rules.set(name, withEscapedSpelling(rules.get(name)!, last));
  return without(withEscapedSpelling(body, last), marker);
}

/** Names of the rules `expr` uses, directly or through other rules. */
function rulesUsedBy(expr: GrammarExpr, rules: Map<string, GrammarExpr>): Set<string> {
  const used = new Set<string>();
  const visit = (e: GrammarExpr): void => {
    switch (e.kind) {
      case 'seq':
      case 'alt':
        e.items.forEach(visit);
        return;
      case 'repeat':
      case 'without':
        visit(e.item);
        return;
      case 'rule': {
        if (used.has(e.name)) return;
        used.add(e.name);
        const rule = rules.get(e.name);
        if (rule) visit(rule);
        return;
      }
      default:
        return;
    }
  };
  visit(expr);
  return used;
}

/** What may come before forced calls: the rest of a thinking block the prompt opened, an optional one, or nothing. */
function thinkingBlockOf(markers: ChatFormatOptions['markers'], thinking: ThinkingMode, gap: GrammarExpr): GrammarExpr {
  const thinkingText = seq({ kind: 'textWithout', literal: markers.thinkEnd }, lit(markers.thinkEnd), gap);
  return thinking === 'open' ? thinkingText : thinking === 'optional' ? optional(seq(lit(markers.thinkStart), thinkingText)) : EMPTY;
}

/** The spec's call limit as the grammar counts it: Infinity when absent or above MAX_COUNTED_TOOL_CALLS. */
function callLimit(spec: ToolsConstraintSpec): number {
  const { maxCalls } = spec;
  if (maxCalls === undefined || maxCalls === Infinity) return Infinity;
  if (typeof maxCalls !== 'number' || !Number.isInteger(maxCalls) || maxCalls < 0) {
    throw new ConstraintError(`The tool call limit must be a non-negative integer, not ${String(maxCalls)}`);
  }
  return maxCalls > MAX_COUNTED_TOOL_CALLS ? Infinity : maxCalls;
}

/**
 * toolArguments, refused (naming the tool) when its arguments' rules alone are above the states bound; the
 * whole grammar's bound in compileGrammar is the backstop for many tools that are only together too large.
 */
function toolArgumentsWithinBudget(tool: ConstrainedTool, rules: Map<string, GrammarExpr>, prefix: string): GrammarExpr {
  const label = `${tool.type === 'custom' ? 'Custom tool' : 'Tool'} '${tool.name}': `;
  try {
    const args = toolArguments(tool, rules, prefix);
    const { maxStates } = DEFAULT_COMPILE_BUDGET;
    let states = estimateExprStates(args, maxStates);
    for (const [name, expr] of rules) {
      if (states > maxStates) break;
      if (name.startsWith(prefix)) states += estimateExprStates(expr, maxStates);
    }
    if (states > maxStates) {
      throw new ConstraintTooLargeError(
        `${label}its ${tool.type === 'custom' ? 'grammar' : 'parameters schema'} is too large to compile (more than ${maxStates} automaton states); reduce repetition counts or nesting`,
        { bound: 'states', limit: maxStates, toolName: tool.name },
      );
    }
    return args;
  } catch (e) {
    if (e instanceof ConstraintTooLargeError && e.toolName === undefined) throw e.withPrefix(label, tool.name);
    throw e;
  }
}

function toolArguments(tool: ConstrainedTool, rules: Map<string, GrammarExpr>, prefix: string): GrammarExpr {
  if (tool.type === 'function') {
    if (tool.parameters === null) return anyJsonObjectExpr(rules, prefix);
    if (tool.strict) return jsonSchemaExpr(tool.parameters, rules, prefix);
    // Non-strict tools are not validated by the API; hold them to the schema when it compiles, else any object.
    const attempt = new Map(rules);
    try {
      const expr = jsonSchemaExpr(tool.parameters, attempt, prefix);
      for (const [k, v] of attempt) rules.set(k, v);
      return expr;
    } catch (e) {
      if (!(e instanceof ConstraintError)) throw e;
      return anyJsonObjectExpr(rules, prefix);
    }
  }
  const ws = ref(addGenericJsonRules(rules, `${prefix}json_`).ws);
  let input: GrammarExpr;
  if (!tool.grammar) input = ref(addGenericJsonRules(rules, `${prefix}json_`).string);
  else {
    const decoded = customToolGrammar(tool.name, tool.grammar);
    input = seq(lit('"'), embedJsonEscaped(decoded, rules, `${prefix}g_`), lit('"'));
  }
  return seq(lit('{'), ws, lit('"input"'), ws, lit(':'), ws, input, ws, lit('}'));
}

/** A custom tool's grammar for the decoded input text; errors name the tool. */
export function customToolGrammar(toolName: string, grammar: { syntax: 'lark' | 'regex'; definition: string }): Grammar {
  try {
    let parsed: Grammar;
    if (grammar.syntax === 'lark') parsed = parseLark(grammar.definition);
    else if (grammar.syntax === 'regex') parsed = { rules: new Map([['start', parseRegex(grammar.definition)]]), start: 'start' };
    else throw new ConstraintError(`Unknown grammar syntax '${String(grammar.syntax)}'`, { subject: 'grammar' });
    compileGrammar(parsed); // on its own, so left recursion or an empty language is reported for this tool
    return parsed;
  } catch (e) {
    if (e instanceof ConstraintTooLargeError) throw e.withPrefix(`Custom tool '${toolName}': `, toolName);
    if (e instanceof ConstraintError) throw e.withPrefix(`Custom tool '${toolName}': `, 'grammar');
    throw e;
  }
}

