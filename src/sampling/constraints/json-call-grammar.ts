// The tool-call grammar of the chat formats whose calls are plain JSON objects (src/common/chat-format.ts):
// Llama 3.x (`<|python_tag|>`? then `{"name": …, "parameters": …}` calls separated by `;`, only at the start of the
// answer), Mistral (`[TOOL_CALLS]` then a JSON list of `{"name": …, "arguments": …}`) and Gemma 3's prompt
// convention (```tool_call, one call, ``` per block), Phi-4-mini (`<|tool_call|>[…]<|/tool_call|>`: the list in
// one block) and Mistral v11 (`[TOOL_CALLS]name[ARGS]{…}` per call, no space between). constraint-grammar.ts
// resolves the tools (named mode, the call limit, each tool's arguments expression) and calls this for the shape.
// - forced (`required`/`named`): the answer is the calls, nothing before or after (these formats have no
//   reasoning block);
// - auto: text, or the calls. Llama: text may not start with `{` (after spaces) nor hold `<|python_tag|>`, so any
//   answer that begins like a call is a call to a declared tool. Mistral: text without `[TOOL_CALLS]`, then
//   optionally the calls, which end the answer.
// With a call limit the calls are at most that many; a limit of 0 leaves only text.
import type { ToolCallSyntax } from '../../common/chat-format.ts';
import {
  EMPTY,
  type GrammarExpr,
  SPACE_CHARS,
  alt,
  chars,
  complement,
  lit,
  optional,
  repeat,
  seq,
  setOfChars,
  union,
} from './grammar-ir.ts';

export interface JsonCallTool {
  name: string;
  /** The tool's arguments value (its schema, or a custom tool's `{"input": …}`). */
  args: GrammarExpr;
}

/**
 * The `start` expression for these tools in this syntax. `ws` is the JSON whitespace rule (between tokens of a
 * call, and between a marker and its JSON), `gap` what may stand between blocks and after the last call (both
 * bounded: json-schema.ts); `maxCalls` Infinity for no limit. Nothing follows a close marker that ends the list of
 * calls (phi4's `<|/tool_call|>`): the answer ends there.
 */
export function jsonCallsStart(syntax: ToolCallSyntax, tools: readonly JsonCallTool[], mode: 'auto' | 'required' | 'named', maxCalls: number, ws: GrammarExpr, gap: GrammarExpr = ws): GrammarExpr {
  if (syntax.nameArgs !== undefined) return nameArgsStart(syntax, syntax.nameArgs, tools, mode, maxCalls);
  const call = alt(
    ...tools.map((tool) =>
      seq(lit('{'), ws, lit('"name"'), ws, lit(':'), ws, lit(JSON.stringify(tool.name)), ws, lit(','), ws, lit(JSON.stringify(syntax.argumentsKey)), ws, lit(':'), ws, tool.args, ws, lit('}')),
    ),
  );
  const separator = syntax.list ? seq(ws, lit(','), ws) : seq(ws, lit(syntax.separator), ws);
  const more = maxCalls === Infinity ? repeat(seq(separator, call), 0) : repeat(seq(separator, call), 0, Math.max(0, maxCalls - 1));
  const sequence = seq(call, more);
  // A format with a close marker writes one block per call.
  const block = seq(lit(syntax.open), ws, call, ws, lit(syntax.close));
  const moreBlocks = maxCalls === Infinity ? repeat(seq(gap, block), 0) : repeat(seq(gap, block), 0, Math.max(0, maxCalls - 1));
  const calls = syntax.close && syntax.list
    ? seq(lit(syntax.open), ws, lit('['), ws, sequence, ws, lit(']'), ws, lit(syntax.close))
    : syntax.close
    ? seq(block, moreBlocks, gap)
    : syntax.list
    ? seq(lit(syntax.open), ws, lit('['), ws, sequence, ws, lit(']'))
    : syntax.bareAtStart
      ? seq(ws, optional(seq(lit(syntax.open), ws)), sequence, gap)
      : seq(lit(syntax.open), ws, sequence, gap);
  if (mode !== 'auto') return calls;
  const text = autoText(syntax);
  if (maxCalls === 0) return text;
  return syntax.bareAtStart ? alt(text, calls) : seq(text, optional(calls));
}

/** Mistral v11: `open` + name + `[ARGS]` + arguments per call, the calls back to back; in auto mode after text. */
function nameArgsStart(syntax: ToolCallSyntax, marker: string, tools: readonly JsonCallTool[], mode: 'auto' | 'required' | 'named', maxCalls: number): GrammarExpr {
  const call = alt(...tools.map((tool) => seq(lit(syntax.open), lit(tool.name), lit(marker), tool.args)));
  const more = maxCalls === Infinity ? repeat(call, 0) : repeat(call, 0, Math.max(0, maxCalls - 1));
  const calls = seq(call, more);
  if (mode !== 'auto') return calls;
  const text = autoText(syntax);
  return maxCalls === 0 ? text : seq(text, optional(calls));
}

/** Free text in auto mode that the parser never reads as a call. */
function autoText(syntax: ToolCallSyntax): GrammarExpr {
  const notOpen = { kind: 'textWithout', literal: syntax.open } as const;
  if (!syntax.bareAtStart) return notOpen;
  // Spaces, then a first character that opens neither a bare call (`{`) nor the marker (`<`), then text without
  // the marker; or a `<` that does not go on to spell the marker.
  const spaces = repeat(chars(SPACE_CHARS), 0);
  const first = chars(complement(union(SPACE_CHARS, setOfChars(`{${syntax.open[0] ?? ''}`))));
  const rest = syntax.open ? alt(seq(first, notOpen), seq(lit(syntax.open[0]!), { kind: 'textWithout', literal: syntax.open.slice(1) })) : seq(first, notOpen);
  return seq(spaces, optional(rest), EMPTY);
}
