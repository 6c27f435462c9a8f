// The tool-call grammar of Harmony (gpt-oss, src/common/harmony.ts). The answer starts after the prompt's
// `<|start|>assistant` and is a run of messages, each a header, `<|message|>` and a body:
// - analysis: `<|channel|>analysis<|message|>` text `<|end|><|start|>assistant` (any number, first);
// - a preamble: `<|channel|>commentary<|message|>` text `<|end|><|start|>assistant` (any number);
// - a call: `<|channel|>commentary to=functions.<name> <|constrain|>json<|message|>` + its arguments (the tool's
//   schema, or a custom tool's `{"input": …}` under its grammar); the turn then ends (`<|call|>`, a stop token);
// - the final answer: `<|channel|>final<|message|>` text; the turn then ends (`<|return|>`, a stop token).
// Forced (`required`/`named`): analysis and preambles, then a call to one of the tools (or the named one). Auto:
// analysis and preambles, then a call or the final answer; with a call limit of 0 only the final answer. A turn makes
// at most one call (the model stops at `<|call|>`), so any limit of 1 or more is met. Text never holds `<|`, so no
// header or message end can be written inside it. The headers' special tokens are written as their text (the
// engine makes them writable: ChatFormat.controlTokens).
import { HARMONY_TOKENS as T } from '../../common/harmony.ts';
import { type GrammarExpr, alt, lit, repeat, seq } from './grammar-ir.ts';

export interface HarmonyCallTool {
  name: string;
  /** The tool's arguments value (its schema, or a custom tool's `{"input": …}`). */
  args: GrammarExpr;
}

/** The `start` expression for these tools; `maxCalls` Infinity for no limit. */
export function harmonyStart(tools: readonly HarmonyCallTool[], mode: 'auto' | 'required' | 'named', maxCalls: number): GrammarExpr {
  const text: GrammarExpr = { kind: 'textWithout', literal: '<|' };
  const next = lit(`${T.end}${T.start}assistant`);
  const analysis = seq(lit(`${T.channel}analysis${T.message}`), text, next);
  const preamble = seq(lit(`${T.channel}commentary${T.message}`), text, next);
  const before = repeat(alt(analysis, preamble), 0);
  const call = alt(...tools.map((tool) => seq(lit(`${T.channel}commentary to=functions.${tool.name} ${T.constrain}json${T.message}`), tool.args)));
  const final = seq(lit(`${T.channel}final${T.message}`), text);
  if (mode !== 'auto') return seq(before, call);
  if (maxCalls === 0 || tools.length === 0) return seq(before, final);
  return seq(before, alt(call, final));
}

/** What comes before a JSON answer (text.format json_schema): analysis and preambles, then the final channel's header. */
export function harmonyBeforeFinal(): GrammarExpr {
  const text: GrammarExpr = { kind: 'textWithout', literal: '<|' };
  const next = lit(`${T.end}${T.start}assistant`);
  const before = repeat(alt(seq(lit(`${T.channel}analysis${T.message}`), text, next), seq(lit(`${T.channel}commentary${T.message}`), text, next)), 0);
  return seq(before, lit(`${T.channel}final${T.message}`));
}
