// Runs a grammar directly on text (bytes) through the byte automaton, for differential tests against RegExp.
import { compileGrammar } from '../../../src/sampling/constraints/byte-automaton.ts';
import type { Grammar } from '../../../src/sampling/constraints/grammar-ir.ts';
import { PdaRuntime } from '../../../src/sampling/constraints/pda-matcher.ts';

export function textMatcher(grammar: Grammar): (text: string) => boolean {
  const runtime = new PdaRuntime(compileGrammar(grammar));
  const encoder = new TextEncoder();
  return (text) => runtime.stepBytes(runtime.initial, encoder.encode(text))?.accepting === true;
}
