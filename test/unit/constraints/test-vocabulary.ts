// A byte-level test vocabulary shaped like a real BPE one: all 256 single bytes (so any text, including a UTF-8
// character split across tokens, can be produced), multi-byte merges that cross grammar boundaries (`{"`, `":`,
// `<tool_call>`, `*** Begin Patch`, words with leading spaces), whole multi-byte characters, and end tokens.
import type { Vocabulary } from '../../../src/sampling/constraints/index.ts';

const MERGES = [
  '{"', '"}', '":', '": ', '",', '", "', '{}', '[]', '["', '"]', '},', '}}', '}]', '],', '\n', '\n\n', '  ', '    ', ' {', ' [',
  'true', 'false', 'null', 'tru', 'nul', '"name"', '"arguments"', '"input"', 'name', 'arguments', 'input', '12', '0.', '-1', 'e+',
  '\\n', '\\"', '\\\\', '\\u00', '\\t', 'é', '日本', '😀', ' the', ' a', 'hello', ' world', 'ing', 'foo', 'bar', '.py', '.ts',
  '<tool_call>', '</tool_call>', '<tool', '_call>', '</', '<think>', '</think>', 'think', '<', '>\n',
  '*** ', '*** Begin Patch', '*** End Patch', '*** Add File: ', '*** Delete File: ', '*** Update File: ', '*** Move to: ',
  '*** End of File', '@@', '@@ ', '\n+', '\n-', '\n ', '+', 'src/', 'main', 'def ', 'return', ' =', '();', 'x', 'y', '-',
];

export function byteLevelVocabulary(): { vocab: Vocabulary; tokenBytes: Uint8Array[]; endTokenId: number } {
  const encoder = new TextEncoder();
  const tokenBytes: Uint8Array[] = [];
  for (let b = 0; b < 256; b++) tokenBytes.push(Uint8Array.of(b));
  for (const m of new Set(MERGES)) if (encoder.encode(m).length > 1) tokenBytes.push(encoder.encode(m));
  const endTokenId = tokenBytes.length;
  const tokens: (Uint8Array | null)[] = [...tokenBytes, null, null]; // <eos>, and a special token never allowed
  return { vocab: { tokens, endTokenIds: [endTokenId] }, tokenBytes, endTokenId };
}
