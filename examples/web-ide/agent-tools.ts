// The web-IDE agent's one tool, DOM-free so that scripts (tools/train-toy-model/page_eval.ts) send exactly what the
// page sends. Its grammar is made from the open file at each step, so the runtime constrains the model to patches
// that replace an existing line: every call parses and applies.
import type OpenAI from 'openai';
import { singleLineEditGrammar } from '../../src/demo/apply-patch-grammar';

export function agentTools(file: string, text: string): OpenAI.Responses.Tool[] {
  return [
    {
      type: 'custom',
      name: 'apply_patch',
      description: `Edit the open file ${file}: replace one line with one or two lines (*** Update File: ${file}, @@, -old line, +new lines).`,
      format: { type: 'grammar', syntax: 'lark', definition: singleLineEditGrammar(file, text) },
    },
  ];
}

/** The generation fields of every agent step's request (the page's main.ts; page_eval sends the same). */
export const AGENT_GENERATION = { max_output_tokens: 256, temperature: 0 } as const;

/** The developer message that opens each agent run. */
export function agentInstructions(file: string, text: string): string {
  return `You are a coding agent. The open file is ${file}:\n${text}`;
}
