// The tools the demo page runs itself when the model calls them: a calculator, a clock, and a custom
// `apply_patch` tool (Codex's patch format) that edits the in-page file.
import { applyPatchLarkGrammar } from './apply-patch-grammar';

export const demoFileName = 'notes.txt';

export interface DemoToolState {
  file: string;
}

/** Rounds of tool calls in one turn; after them the model answers in words. */
export const MAX_TOOL_ROUNDS = 4;

/** A tool output that reports a failure (runDemoTool's errors, or a call of a tool the page does not run). */
export const isToolError = (output: string) => /^(Error\b|Unknown tool)/.test(output);

/**
 * One user turn's tool loop, as the demo page runs it: the model may call tools for MAX_TOOL_ROUNDS rounds; after
 * the last one, or as soon as it repeats a call that already failed in this turn (a small model retries the same
 * bad patch), the next request must answer in words. That request keeps the tools in the prompt (the cached
 * prefix stays valid) and sends `max_tool_calls: 0`, so the decoder cannot start a call: every turn ends with an
 * answer, never with a dangling call.
 */
export class ToolRounds {
  private rounds = 0;
  private readonly failed = new Set<string>();
  /** A call that had failed in this turn came again. */
  private retriedFailure = false;

  /** The next request must answer without calling a tool. */
  get answerOnly(): boolean {
    return this.retriedFailure || this.rounds >= MAX_TOOL_ROUNDS;
  }

  /** Notes a round's calls and their outputs (in order). */
  record(calls: readonly { name: string; input: string }[], outputs: readonly string[]): void {
    this.rounds++;
    calls.forEach((call, i) => {
      const key = `${call.name}\u0000${call.input}`;
      if (this.failed.has(key)) this.retriedFailure = true;
      if (isToolError(outputs[i] ?? '')) this.failed.add(key);
    });
  }

  /** The fields the next request adds to its body. */
  requestFields(): { max_tool_calls?: number } {
    return this.answerOnly ? { max_tool_calls: 0 } : {};
  }
}

/** The developer message that shows the model the demo file (demo_corpus.py trains on exactly this text). */
export function demoFileItem(file: string) {
  return { type: 'message' as const, role: 'developer' as const, content: `The file ${demoFileName} holds:\n${file}` };
}

/** The input item that answers a tool call with its output. */
export function toolOutputItem(call: { type: string; call_id: string }, output: string) {
  return { type: call.type === 'function_call' ? ('function_call_output' as const) : ('custom_tool_call_output' as const), call_id: call.call_id, output };
}

export const demoTools = [
  {
    type: 'function' as const,
    name: 'calculator',
    description: 'Evaluate an arithmetic expression with + - * / ( ) and decimals.',
    parameters: {
      type: 'object',
      properties: { expression: { type: 'string', description: 'e.g. (2 + 3) * 4.5' } },
      required: ['expression'],
      additionalProperties: false,
    },
    strict: true,
  },
  {
    type: 'function' as const,
    name: 'get_time',
    description: 'The current date and time in a time zone.',
    parameters: {
      type: 'object',
      properties: { timezone: { type: 'string', description: 'IANA name, e.g. Europe/Paris' } },
      required: ['timezone'],
      additionalProperties: false,
    },
    strict: true,
  },
  {
    type: 'custom' as const,
    name: 'apply_patch',
    description: `Edit ${demoFileName} with a patch in the apply_patch format (*** Begin Patch / *** Update File / @@ / -old / +new / *** End Patch).`,
    format: { type: 'grammar' as const, syntax: 'lark' as const, definition: applyPatchLarkGrammar },
  },
];

/** Runs a tool call and returns its output text (errors are outputs too: the model reads them). */
export function runDemoTool(name: string, input: string, state: DemoToolState): string {
  try {
    if (name === 'calculator') {
      const { expression } = JSON.parse(input) as { expression: string };
      return String(evaluateArithmetic(expression));
    }
    if (name === 'get_time') {
      const { timezone } = JSON.parse(input) as { timezone: string };
      return new Date().toLocaleString('en-GB', { timeZone: timezone, dateStyle: 'full', timeStyle: 'long' });
    }
    if (name === 'apply_patch') {
      state.file = applyPatch(state.file, input);
      return `Done. ${demoFileName} now has ${state.file.split('\n').length} lines.`;
    }
    return `Unknown tool ${name}`;
  } catch (e) {
    return `Error: ${(e as Error).message}`;
  }
}

/** A recursive-descent evaluator for + - * / and parentheses: no eval. */
export function evaluateArithmetic(expression: string): number {
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/()]/g) ?? [];
  if (tokens.join('') !== expression.replace(/\s+/g, '')) throw new Error(`not an arithmetic expression: ${expression}`);
  let i = 0;
  const peek = () => tokens[i];
  const sum = (): number => {
    let v = product();
    while (peek() === '+' || peek() === '-') v = tokens[i++] === '+' ? v + product() : v - product();
    return v;
  };
  const product = (): number => {
    let v = unary();
    while (peek() === '*' || peek() === '/') v = tokens[i++] === '*' ? v * unary() : v / unary();
    return v;
  };
  const unary = (): number => {
    if (peek() === '-') return i++, -unary();
    if (peek() === '(') {
      i++;
      const v = sum();
      if (tokens[i++] !== ')') throw new Error('missing )');
      return v;
    }
    const t = tokens[i++];
    if (t === undefined || !/^\d/.test(t)) throw new Error('expected a number');
    return Number(t);
  };
  const v = sum();
  if (i !== tokens.length) throw new Error(`unexpected ${tokens[i]}`);
  return v;
}

/** Applies an apply_patch-format patch with Update File hunks for the demo file. */
export function applyPatch(file: string, patch: string): string {
  const lines = patch.replace(/\r\n/g, '\n').split('\n');
  if (lines[0]?.trim() !== '*** Begin Patch') throw new Error('patch must start with *** Begin Patch');
  if (!lines.some((l) => l.trim() === '*** End Patch')) throw new Error('patch must end with *** End Patch');
  let text = file.split('\n');
  let hunk: { old: string[]; neu: string[] } | null = null;
  const flush = () => {
    if (!hunk) return;
    const at = findLines(text, hunk.old);
    if (at < 0) throw new Error(`hunk does not match the file: ${hunk.old.join('\\n')}`);
    text = [...text.slice(0, at), ...hunk.neu, ...text.slice(at + hunk.old.length)];
    hunk = null;
  };
  for (const line of lines.slice(1)) {
    if (line.startsWith('*** End Patch')) break;
    if (line.startsWith('*** Update File:') || line.startsWith('*** Add File:') || line.startsWith('*** Delete File:')) {
      flush();
      if (!line.startsWith('*** Update File:')) throw new Error('the demo file can only be updated');
      continue;
    }
    if (line.startsWith('@@')) {
      flush();
      hunk = { old: [], neu: [] };
      continue;
    }
    hunk ??= { old: [], neu: [] };
    if (line.startsWith('-')) hunk.old.push(line.slice(1));
    else if (line.startsWith('+')) hunk.neu.push(line.slice(1));
    else {
      const context = line.startsWith(' ') ? line.slice(1) : line;
      hunk.old.push(context);
      hunk.neu.push(context);
    }
  }
  flush();
  return text.join('\n');
}

function findLines(text: string[], needle: string[]): number {
  if (needle.length === 0) return text.length;
  for (let i = 0; i + needle.length <= text.length; i++) {
    if (needle.every((l, j) => text[i + j] === l)) return i;
  }
  return -1;
}
