// Renders every conversation of a corpus JSONL (corpus.py's output) with the runtime's chat template through
// @huggingface/jinja and checks that it equals the text corpus.py rendered itself, byte for byte.
//   npx tsx tools/train-toy-model/check-render.ts .tmp/toy/train.jsonl
import { readFileSync } from 'node:fs';
import { Template } from '@huggingface/jinja';
import { CHATML_TOOLS_TEMPLATE } from '../make-test-model/chatml-template.ts';

interface Line {
  prefix?: string;
  segments: [string, boolean][];
  render: { messages: unknown[]; tools: unknown[]; add_generation_prompt: boolean; enable_thinking: boolean; suffix: string };
}

const path = process.argv[2] ?? '.tmp/toy/train.jsonl';
const template = new Template(CHATML_TOOLS_TEMPLATE);
let checked = 0;
let bad = 0;
for (const raw of readFileSync(path, 'utf8').split('\n')) {
  if (!raw) continue;
  const line = JSON.parse(raw) as Line;
  const r = line.render;
  const text =
    template.render({ messages: r.messages, tools: r.tools, add_generation_prompt: r.add_generation_prompt, enable_thinking: r.enable_thinking }) + r.suffix;
  const ours = (line.prefix ?? "") + line.segments.map(([t]) => t).join("");
  checked++;
  if (text !== ours) {
    bad++;
    if (bad <= 3) {
      let i = 0;
      while (i < text.length && text[i] === ours[i]) i++;
      console.error(`line ${checked}: differs at ${i}:\n jinja: ${JSON.stringify(text.slice(i - 40, i + 60))}\n ours:  ${JSON.stringify(ours.slice(i - 40, i + 60))}`);
    }
  }
}
console.log(`${checked} conversations, ${bad} differ from the template`);
process.exit(bad === 0 ? 0 : 1);
