// Reasoning summaries when `reasoning.summary` (or its older name `generate_summary`) asks for one. This runtime
// has no second model to write a summary with, so the summary is extractive: the reasoning text's whitespace
// collapsed, then its opening sentences, as many as fit a budget that depends on the asked level (`concise` 200
// characters, `auto` 400, `detailed` 800), never cutting a sentence unless the first alone is longer (then it is
// cut at a word and ends with `…`). The summary is made when the reasoning block closes and streams as one
// `response.reasoning_summary_part.added` / `.reasoning_summary_text.delta` / `.done` / `.part.done` sequence.

export type SummaryLevel = 'auto' | 'concise' | 'detailed';

const BUDGET: Record<SummaryLevel, number> = { concise: 200, auto: 400, detailed: 800 };

export function summarizeReasoning(text: string, level: SummaryLevel): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const budget = BUDGET[level];
  if (flat.length <= budget) return flat;
  const sentences = flat.match(/[^.!?]+(?:[.!?]+|$)/g) ?? [flat];
  let out = '';
  for (const sentence of sentences) {
    const next = out === '' ? sentence.trim() : `${out} ${sentence.trim()}`;
    if (next.length > budget) break;
    out = next;
  }
  if (out !== '') return out;
  const cut = flat.slice(0, budget - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > budget / 2 ? cut.slice(0, space) : cut}…`;
}
