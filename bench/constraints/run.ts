// Constraint costs, printed as JSON: compile time per constraint kind (cold), token-trie build time, and the
// per-token cost of `allowedMask()` + `accept()` while feeding a valid document token by token (greedy
// longest-match tokenization) through a synthetic byte-level vocabulary of realistic size.
// Run: npx tsx bench/constraints/run.ts [vocabSize=151936]
import { applyPatchLarkGrammar } from '../../src/demo/apply-patch-grammar.ts';
import type { ConstraintSpec } from '../../src/engine/types.ts';
import { checkConstraintSpec, compileConstraint, type Vocabulary } from '../../src/sampling/constraints/index.ts';
import { tokenTrieFor } from '../../src/sampling/constraints/token-trie.ts';

const vocabSize = Number(process.argv[2] ?? 151936);

/** A deterministic byte-level BPE-like vocabulary: 256 bytes, then words, code and JSON fragments with variants. */
function syntheticVocabulary(size: number): Vocabulary {
  let seed = 12345;
  const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  const syllables = ['th', 'e', 'an', 'in', 'er', 're', 'on', 'at', 'en', 'nd', 'ti', 'es', 'or', 'te', 'of', 'ed', 'is', 'it', 'al', 'ar', 'st', 'to', 'nt', 'ng', 'se', 'ha', 'as', 'ou', 'io', 'le', 've', 'co', 'me', 'de', 'hi', 'ri', 'ro', 'ic', 'ne', 'ea', 'ra', 'ce', 'li', 'ch', 'll', 'be', 'ma', 'si', 'om', 'ur'];
  const punct = ['{"', '"}', '":', '": "', '",', '", "', '{', '}', '[', ']', '(', ')', ';', '.', ',', '\n', '\n\n', '  ', '    ', '//', '==', '=>', '->', '*** ', '@@', '+', '-', '"', '\\n', '\\"', '<tool_call>', '</tool_call>', '<think>', '</think>'];
  const tokens: (string | Uint8Array | null)[] = [];
  const seen = new Set<string>();
  for (let b = 0; b < 256; b++) tokens.push(Uint8Array.of(b));
  for (const p of punct) if (!seen.has(p)) (seen.add(p), tokens.push(p));
  while (tokens.length < size - 2) {
    const n = 1 + Math.floor(random() * 4);
    let word = '';
    for (let i = 0; i < n; i++) word += syllables[Math.floor(random() * syllables.length)];
    const r = random();
    if (r < 0.45) word = ' ' + word;
    else if (r < 0.55) word = word[0].toUpperCase() + word.slice(1);
    else if (r < 0.62) word = punct[Math.floor(random() * punct.length)] + word;
    else if (r < 0.66) word = String(Math.floor(random() * 1000));
    if (!seen.has(word)) (seen.add(word), tokens.push(word));
  }
  tokens.push(null, null); // end-of-text, and a control token
  return { tokens, endTokenIds: [size - 2] };
}

/** Greedy longest-match tokenization of text over the vocabulary. */
function tokenize(text: string, vocab: Vocabulary): number[] {
  const byString = new Map<string, number>();
  vocab.tokens.forEach((t, id) => {
    if (typeof t === 'string') byString.set(t, id);
    else if (t && t.length === 1 && t[0] < 0x80) byString.set(String.fromCharCode(t[0]), id);
  });
  const bytes = new TextEncoder().encode(text);
  const ids: number[] = [];
  let i = 0;
  const str = text; // ASCII documents only
  void bytes;
  while (i < str.length) {
    let best = -1;
    let bestLen = 0;
    for (let len = Math.min(16, str.length - i); len >= 1; len--) {
      const id = byString.get(str.slice(i, i + len));
      if (id !== undefined) {
        best = id;
        bestLen = len;
        break;
      }
    }
    if (best < 0) throw new Error(`cannot tokenize at ${i}`);
    ids.push(best);
    i += bestLen;
  }
  return ids;
}

const patchGrammar = applyPatchLarkGrammar;
const weather = {
  type: 'object',
  properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
  required: ['location', 'unit', 'days', 'tags'],
  additionalProperties: false,
};
const patchText = '*** Begin Patch\n*** Update File: src/main.ts\n@@ function start() {\n-  return 1;\n+  return 2;\n   }\n*** Add File: notes/readme.md\n+# Notes\n+These are the release notes.\n*** End Patch\n';
const cases: { name: string; spec: ConstraintSpec; document: string }[] = [
  {
    name: 'json_schema',
    spec: { kind: 'json_schema', schema: weather },
    document: JSON.stringify({ location: 'The ancient city of Alexandria on the coast', unit: 'celsius', days: 14, tags: ['travel', 'history', 'weather report'] }, null, 1),
  },
  {
    name: 'tools_auto_function',
    spec: { kind: 'tools', mode: 'auto', tools: [{ type: 'function', name: 'get_weather', parameters: weather, strict: true }] },
    document: `I will look that up for you now.\n<tool_call>\n${JSON.stringify({ name: 'get_weather', arguments: { location: 'Rome', unit: 'celsius', days: 3, tags: [] } })}\n</tool_call>`,
  },
  {
    name: 'tools_required_apply_patch',
    spec: { kind: 'tools', mode: 'required', tools: [{ type: 'custom', name: 'apply_patch', grammar: { syntax: 'lark', definition: patchGrammar } }] },
    document: `<tool_call>\n${JSON.stringify({ name: 'apply_patch', arguments: { input: patchText } })}\n</tool_call>`,
  },
  {
    name: 'regex_custom_tool',
    spec: { kind: 'tools', mode: 'required', tools: [{ type: 'custom', name: 'date', grammar: { syntax: 'regex', definition: '[0-9]{4}-[0-9]{2}-[0-9]{2}( [a-z ]+)?' } }] },
    document: `<tool_call>\n${JSON.stringify({ name: 'date', arguments: { input: '2026-11-29 the first sunday' } })}\n</tool_call>`,
  },
];

function stats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const pick = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return { n: values.length, mean_ms: round(values.reduce((a, b) => a + b, 0) / values.length), p50_ms: round(pick(0.5)), p95_ms: round(pick(0.95)), max_ms: round(sorted[sorted.length - 1]) };
}

const vocab = syntheticVocabulary(vocabSize);
let t = performance.now();
const trie = tokenTrieFor(vocab);
const trieMs = performance.now() - t;
const results: Record<string, unknown>[] = [];
for (const c of cases) {
  t = performance.now();
  checkConstraintSpec(c.spec);
  const compileMs = performance.now() - t;
  const ids = tokenize(c.document, vocab);
  const run = () => {
    const constraint = compileConstraint(c.spec, vocab);
    const perToken: number[] = [];
    for (const id of ids) {
      const start = performance.now();
      const mask = constraint.allowedMask();
      if (!(mask[id >> 5] & (1 << (id & 31)))) throw new Error(`${c.name}: the document's token ${id} is not allowed`);
      constraint.accept(id);
      perToken.push(performance.now() - start);
    }
    return perToken;
  };
  const cold = run(); // first request: matcher states and masks are built
  const warm = run(); // the same constraint again: memoized transitions and cached masks
  results.push({ constraint: c.name, compile_ms: Math.round(compileMs * 100) / 100, tokens: ids.length, first_request_per_token: stats(cold), repeat_request_per_token: stats(warm) });
}
console.log(JSON.stringify({ vocab_size: vocabSize, trie_nodes: trie.nodeCount, trie_build_ms: Math.round(trieMs), node: process.version, results }, null, 2));
