// Constrained decoding: JSON Schema, regular expressions and Lark grammars compiled to token masks.
export { ConstraintError } from './constraint-error.ts';
export {
  type ChatFormatMarkers,
  type ChatFormatOptions,
  DEFAULT_MARKERS,
  MAX_COUNTED_TOOL_CALLS,
  type ThinkingMode,
  type ToolsConstraintSpec,
  customToolGrammar,
  grammarForConstraint,
} from './constraint-grammar.ts';
export { type CompileOptions, type TokenConstraint, checkConstraintSpec, compileConstraint } from './token-constraint.ts';
export type { Vocabulary } from './token-trie.ts';
export { type TokenTextEncoding, type VocabularyInput, buildVocabulary, byteLevelTokenBytes, sentencePieceTokenBytes, tokenTextEncodingOf } from './vocabulary.ts';
export { checkConstraintForRequest } from './request-check.ts';
