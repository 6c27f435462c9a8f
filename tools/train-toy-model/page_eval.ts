// The held-out eval (demo_corpus.py's eval.jsonl and multiturn.jsonl) run as the pages run it: through the real
// runtime (`webgpu-responses serve`: the Responses handler and the WebGPU engine on Dawn) with the `openai` SDK,
// sending what the pages send. demo_eval.py decodes the same prompts in PyTorch without constraints; here the tool
// calls are decoded under the runtime's grammars: the demo's `strict` function schemas and apply_patch's Lark
// grammar, the web IDE's one-line-edit grammar made from the open file with the tool forced on its first step
// (examples/web-ide/agent-tools.ts). So this is what a person on the page gets, with the page's settings:
//   demo page: its Settings panel's defaults (src/demo/demo-settings.ts: temperature 0, reasoning on,
//              max_output_tokens 128, truncation auto, its three tools);
//   web IDE:   examples/web-ide/agent-tools.ts's AGENT_GENERATION (temperature 0, max_output_tokens 256),
//              tool_choice apply_patch on the first step, auto after.
// Single turns are scored as demo_eval.py scores them (right tool, exact arguments, then given the expected tool
// result a text answer that quotes it); multi-turn chats run the page's loop (its tools run by src/demo/demo-tools.ts,
// ToolRounds: at most 4 rounds of calls a turn, then (or after a repeated failing call) an answer with
// max_tool_calls 0; the file re-sent at the next user turn after it changed, chained with
// previous_response_id, a turn cut off at max_output_tokens left out of the chain).
//
//   npx tsx tools/train-toy-model/page_eval.ts --data .tmp/toy7 [--model public/models/toy-qwen3/model.gguf]
//     [--limit N] [--multiturn N] [--json out.json]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { DEMO_DEFAULT_SETTINGS, demoGenerationFields } from '../../src/demo/demo-settings';
import { demoFileItem, isToolError, runDemoTool, toolOutputItem, ToolRounds } from '../../src/demo/demo-tools';
import { DEVELOPER_LABEL } from '../../src/responses/translate';
import { AGENT_GENERATION, agentInstructions, agentTools } from '../../examples/web-ide/agent-tools';
import { startServe, stopServe, TOY_MODEL } from '../serve-process';

const { values: opt } = parseArgs({
  options: {
    data: { type: 'string', default: '.tmp/toy7' },
    model: { type: 'string', default: TOY_MODEL },
    limit: { type: 'string', default: '100000' },
    multiturn: { type: 'string', default: '100000' },
    json: { type: 'string' },
    show: { type: 'string', default: '0' },
  },
});

interface ChatMessage {
  role: string;
  content: string;
}
interface EvalItem {
  kind: string;
  messages: ChatMessage[];
  expected: { name: string; arguments: Record<string, string> } | null;
  tool_result: string | null;
}
interface Row {
  n: number;
  right_tool: number;
  exact_args: number;
  no_call: number;
  final_text: number;
  quotes_result: number;
  cut_off: number;
}

const MODEL_ID = 'toy';
/** What the demo page sends with its Settings panel untouched. */
const DEMO_GENERATION = demoGenerationFields(DEMO_DEFAULT_SETTINGS);
const show = Number(opt.show);

type Item = OpenAI.Responses.ResponseInputItem;
type Call = { type: 'function_call' | 'custom_tool_call'; call_id: string; name: string; input: string };

function callsOf(r: OpenAI.Responses.Response): Call[] {
  const out: Call[] = [];
  for (const o of r.output) {
    if (o.type === 'function_call') out.push({ type: o.type, call_id: o.call_id, name: o.name, input: o.arguments });
    if (o.type === 'custom_tool_call') out.push({ type: o.type, call_id: o.call_id, name: o.name, input: o.input });
  }
  return out;
}

/** The output items as input items for the next request (store:false: the reasoning carries its encrypted content). */
function asInput(r: OpenAI.Responses.Response): Item[] {
  return r.output.map((o) => {
    const { id: _id, status: _status, ...rest } = o as unknown as Record<string, unknown>;
    return (o.type === 'message' ? { type: 'message', role: 'assistant', content: (o.content as { text?: string }[]).map((c) => ({ type: 'output_text', text: c.text ?? '' })) } : rest) as unknown as Item;
  });
}

function sameArgs(call: Call, expected: NonNullable<EvalItem['expected']>): boolean {
  if (call.type === 'custom_tool_call') return call.input.replace(/\n$/, '') === (expected.arguments.input ?? '').replace(/\n$/, '');
  try {
    const got = JSON.parse(call.input) as Record<string, unknown>;
    const keys = Object.keys(expected.arguments);
    return Object.keys(got).length === keys.length && keys.every((k) => got[k] === expected.arguments[k]);
  } catch {
    return false;
  }
}

/** The request a page sends for this eval item's first step. */
function pageRequest(it: EvalItem) {
  const system = it.messages[0]!;
  const label = `${DEVELOPER_LABEL}\n`;
  if (system.role !== 'system' || !system.content.startsWith(label)) throw new Error(`eval item without the page's developer message: ${JSON.stringify(it.messages[0])}`);
  const developer = system.content.slice(label.length);
  const user = it.messages.at(-1)!;
  if (it.messages.length !== 2 || user.role !== 'user') throw new Error('eval items are one developer and one user message');
  const ide = /^You are a coding agent\. The open file is (\S+):\n([\s\S]*)$/.exec(developer);
  if (ide) {
    const [, file, text] = ide as unknown as [string, string, string];
    if (agentInstructions(file, text) !== developer) throw new Error('the web IDE words its instructions differently from the eval');
    return {
      body: {
        input: [{ role: 'developer', content: developer }, { role: 'user', content: user.content }] as Item[],
        tools: agentTools(file, text),
        tool_choice: { type: 'custom', name: 'apply_patch' } as const,
        ...AGENT_GENERATION,
      },
    };
  }
  return {
    body: {
      input: [{ type: 'message', role: 'developer', content: developer }, { type: 'message', role: 'user', content: user.content }] as Item[],
      ...DEMO_GENERATION,
    },
  };
}

async function singleTurns(client: OpenAI, items: EvalItem[]): Promise<Record<string, Row>> {
  const rows: Record<string, Row> = {};
  let shown = 0;
  for (const it of items) {
    const row = (rows[it.kind] ??= { n: 0, right_tool: 0, exact_args: 0, no_call: 0, final_text: 0, quotes_result: 0, cut_off: 0 });
    row.n++;
    const { body } = pageRequest(it);
    const first = await client.responses.create({ model: MODEL_ID, store: false, include: ['reasoning.encrypted_content'], ...body });
    const calls = callsOf(first);
    if (first.status === 'incomplete') row.cut_off++;
    if (shown < show) console.log(`--- ${it.kind}: ${JSON.stringify(it.messages.at(-1)!.content)}\n${JSON.stringify(first.output).slice(0, 600)}`);
    if (it.expected === null) {
      if (calls.length === 0 && first.output_text.trim() && first.status === 'completed') row.no_call++;
      shown++;
      continue;
    }
    const exp = it.expected;
    const right = calls.length === 1 && calls[0]!.name === exp.name;
    if (right) {
      row.right_tool++;
      if (sameArgs(calls[0]!, exp)) row.exact_args++;
    }
    // As demo_eval.py does: the answer is scored given a call of the expected tool (the model's own arguments where
    // it called that tool) and the eval's tool result.
    const kept = first.output.filter((o) => o.type === 'reasoning' || o.type === 'message');
    const call: Item = right
      ? (asInput(first).find((o) => (o as { type: string }).type === calls[0]!.type) as Item)
      : exp.name === 'apply_patch'
        ? ({ type: 'custom_tool_call', call_id: 'call_eval', name: exp.name, input: exp.arguments.input } as Item)
        : ({ type: 'function_call', call_id: 'call_eval', name: exp.name, arguments: JSON.stringify(exp.arguments) } as Item);
    const callId = (call as { call_id: string }).call_id;
    const second = await client.responses.create({
      model: MODEL_ID,
      store: false,
      ...body,
      tool_choice: 'auto',
      input: [...body.input, ...asInput({ ...first, output: kept }), call, toolOutputItem({ type: (call as { type: string }).type, call_id: callId }, it.tool_result!) as Item],
    });
    if (shown < show) console.log(`  [tool] ${it.tool_result}\n  ${JSON.stringify(second.output_text)}`);
    shown++;
    if (callsOf(second).length === 0 && second.output_text.trim() && second.status === 'completed') {
      row.final_text++;
      if (second.output_text.includes(it.tool_result!)) row.quotes_result++;
    }
  }
  return rows;
}

interface Conversation {
  kinds: string[];
  users: string[];
  file: string;
}

/** The demo page's loop (src/demo/main.ts), eight user turns a chat, history stored and chained. */
async function multiTurn(client: OpenAI, convs: Conversation[]) {
  let finished = 0;
  let turnsOk = 0;
  let turns = 0;
  let toolErrors = 0;
  let truncated = 0;
  for (const [ci, conv] of convs.entries()) {
    const state = { file: conv.file };
    let fileSent: string | null = null;
    let previous: string | undefined;
    let all = true;
    const log: string[] = [];
    for (const user of conv.users) {
      turns++;
      const before: { previous: string | undefined; fileSent: string | null } = { previous, fileSent };
      let input: Item[] = [];
      if (state.file !== fileSent) {
        input.push(demoFileItem(state.file) as Item);
        fileSent = state.file;
      }
      input.push({ type: 'message', role: 'user', content: user } as Item);
      let ok = false;
      const rounds = new ToolRounds();
      for (;;) {
        const r = await client.responses.create({
          ...rounds.requestFields(),
          model: MODEL_ID,
          input,
          previous_response_id: previous,
          store: true,
          ...DEMO_GENERATION,
        });
        previous = r.id;
        truncated += Number((r.metadata as Record<string, string> | null)?.truncated_items ?? 0) > 0 ? 1 : 0;
        const calls = callsOf(r);
        if (calls.length === 0) {
          ok = r.status === 'completed' && r.output_text.trim().length > 0;
          // As the page does: a turn cut off at max_output_tokens is left out of the chain.
          if (r.incomplete_details?.reason === 'max_output_tokens') ({ previous, fileSent } = before);
          log.push(`  user: ${user}\n  model: ${JSON.stringify(r.output_text.slice(0, 120))}${ok ? '' : ` (${r.status})`}`);
          break;
        }
        if (rounds.answerOnly) {
          log.push(`  user: ${user}\n  model: a call after max_tool_calls 0 (the turn ends)`);
          break;
        }
        const outputs = calls.map((c) => {
          const out = runDemoTool(c.name, c.input, state);
          if (isToolError(out)) toolErrors++;
          log.push(`  user: ${user}\n  call: ${c.name}(${c.input.slice(0, 100)}) -> ${out.slice(0, 80)}`);
          return out;
        });
        rounds.record(calls, outputs);
        input = calls.map((c, i) => toolOutputItem(c, outputs[i]!) as Item);
        if (rounds.answerOnly) log.push('  (next request: max_tool_calls 0, answer in words)');
      }
      turnsOk += Number(ok);
      all &&= ok;
    }
    finished += Number(all);
    if (ci < show) console.log(`--- conversation ${ci}: ${all ? 'finished' : 'NOT finished'}\n${log.join('\n')}`);
  }
  return { conversations: convs.length, finished, turns, turns_answered: turnsOk, tool_errors: toolErrors, responses_truncated: truncated };
}

function sample<T>(items: T[], n: number): T[] {
  if (n >= items.length) return items;
  // Every k-th item: the kinds stay in their proportions.
  const step = items.length / n;
  return Array.from({ length: n }, (_, i) => items[Math.floor(i * step)]!);
}

async function main() {
  const items = sample(
    readFileSync(join(opt.data!, 'eval.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as EvalItem),
    Number(opt.limit),
  );
  const convs = readFileSync(join(opt.data!, 'multiturn.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Conversation).slice(0, Number(opt.multiturn));
  const dir = mkdtempSync(join(tmpdir(), 'page-eval-'));
  const served = await startServe(['--model', `${MODEL_ID}=${opt.model}`, '--store', join(dir, 'store')], 300_000);
  const t0 = Date.now();
  try {
    const client = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 600_000 });
    const rows = await singleTurns(client, items);
    const mt = await multiTurn(client, convs);
    const seconds = Math.round((Date.now() - t0) / 1000);
    console.log(`\nheld-out eval through the runtime (serve on Dawn, the pages' requests and grammars), ${opt.model}; ${seconds} s`);
    console.log('| task | n | right tool | exact args | final answer, no call | quotes result verbatim | cut off |');
    console.log('|---|---|---|---|---|---|---|');
    const toolKinds = Object.keys(rows).filter((k) => k !== 'chat' && k !== 'unsupported');
    for (const [k, r] of Object.entries(rows)) {
      if (k === 'chat' || k === 'unsupported') console.log(`| ${k === 'chat' ? 'small talk' : 'no tool for it'} | ${r.n} | no call: ${r.no_call}/${r.n} | | | | ${r.cut_off} |`);
      else console.log(`| ${k}${k === 'ide' ? ' (tool forced)' : ''} | ${r.n} | ${r.right_tool}/${r.n} | ${r.exact_args}/${r.n} | ${r.final_text}/${r.n} | ${r.quotes_result}/${r.n} | ${r.cut_off} |`);
    }
    const pct = (key: keyof Row, kinds: string[]) => {
      const n = kinds.reduce((s, k) => s + rows[k]!.n, 0);
      return `${((100 * kinds.reduce((s, k) => s + rows[k]![key], 0)) / Math.max(1, n)).toFixed(1)}%`;
    };
    const pageKinds = toolKinds.filter((k) => k !== 'ide');
    console.log(`| all tool tasks | ${toolKinds.reduce((s, k) => s + rows[k]!.n, 0)} | ${pct('right_tool', toolKinds)} | ${pct('exact_args', toolKinds)} | ${pct('final_text', toolKinds)} | ${pct('quotes_result', toolKinds)} | |`);
    console.log(`| demo page's tool tasks | ${pageKinds.reduce((s, k) => s + rows[k]!.n, 0)} | ${pct('right_tool', pageKinds)} | ${pct('exact_args', pageKinds)} | ${pct('final_text', pageKinds)} | ${pct('quotes_result', pageKinds)} | |`);
    console.log(
      `multi-turn (8 user turns each, the page's loop): ${mt.finished}/${mt.conversations} conversations finished; ${mt.turns_answered}/${mt.turns} turns answered; ` +
        `${mt.tool_errors} tool errors; ${mt.responses_truncated} responses with turns dropped by truncation`,
    );
    if (opt.json) writeFileSync(opt.json, JSON.stringify({ model: opt.model, rows, multiturn: mt, seconds }, null, 2));
  } finally {
    await stopServe(served);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
