// Mistral templates that write `[THINK]…[/THINK]` (Magistral, Ministral 3 Reasoning: mistral-common's v13+
// templates with thinking chunks): detected as their Mistral format with those as reasoning markers; a block
// leading the answer is reasoning, split across tokens anywhere, whatever follows read by the format's own parser;
// a forced call may follow a reasoning block under the constraint; stray markers never reach the text. Templates
// without `[THINK]` keep no reasoning. Replay: the reasoning of the tool loop under way leads its turns' text as
// `[THINK]…[/THINK]` (these templates render reasoning only from content chunks); older reasoning is dropped.
// (The Responses flows with such a model: conformance-formats.test.ts.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../src/common/chat.ts';
import { detectChatFormat, MISTRAL_V11_FORMAT, replayMessagesFor, type ChatFormat } from '../../../src/common/chat-format.ts';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import type { ConstrainedTool } from '../../../src/engine/types.ts';
import { OutputParser, type ParseEvent } from '../../../src/responses/output-parser.ts';
import { compileConstraint, type Vocabulary } from '../../../src/sampling/constraints/index.ts';
import { decodeStrict, forcedWalk, randomWalk } from '../constraints/random-walk.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/chat-templates/${name}`, import.meta.url), 'utf8');
const THINKING = detectChatFormat(fixture('synthetic-mistral-v13-think.jinja'));

interface Parsed {
  reasoning: string;
  reasoningComplete: boolean | null;
  calls: { name: string; args: string }[];
  text: string;
}

function parse(format: ChatFormat, text: string, step: number, startsInReasoning = false): Parsed {
  const parser = new OutputParser({ markers: format.markers, format: format.name, toolCalls: true, declaredNames: new Set(['get_weather']), customNames: new Set(), startsInReasoning });
  const events: ParseEvent[] = [];
  for (let i = 0; i < text.length; i += step) events.push(...parser.push(text.slice(i, i + step)));
  events.push(...parser.finish());
  const out: Parsed = { reasoning: '', reasoningComplete: null, calls: [], text: '' };
  let starts = 0;
  for (const e of events) {
    if (e.kind === 'reasoning.start') starts++;
    else if (e.kind === 'reasoning.delta') out.reasoning += e.text;
    else if (e.kind === 'reasoning.end') out.reasoningComplete = e.complete;
    else if (e.kind === 'call.start') out.calls.push({ name: e.name, args: '' });
    else if (e.kind === 'call.delta') out.calls.at(-1)!.args += e.text;
    else if (e.kind === 'text.delta') out.text += e.text;
  }
  expect(starts).toBe(out.reasoningComplete === null ? 0 : 1);
  return out;
}

describe('detection', () => {
  it('a v11 template that writes [THINK]: mistral-v11 with [THINK]/[/THINK] as reasoning markers, writable by the grammar', () => {
    expect(THINKING).toMatchObject({ name: 'mistral-v11', thinking: true, markers: { thinkStart: '[THINK]', thinkEnd: '[/THINK]', toolCallStart: '[TOOL_CALLS]' } });
    expect(THINKING.controlTokens).toEqual(expect.arrayContaining(['[TOOL_CALLS]', '[ARGS]', '[THINK]', '[/THINK]']));
  });

  it('a tekken template that writes [THINK] (Magistral Small 2506 calls as a list) keeps its call syntax and gains the markers', () => {
    const format = detectChatFormat(`${fixture('mistral-nemo-instruct-2407.jinja')}{{- '[THINK]' + thinking + '[/THINK]' }}`);
    expect(format).toMatchObject({ name: 'mistral', variant: 'tekken+think', thinking: true, calls: { list: true }, markers: { thinkStart: '[THINK]' } });
  });

  it.each(['devstral-small-2507.jinja', 'mistral-nemo-instruct-2407.jinja', 'mistral-7b-instruct-v0.3.jinja'])('%s (no [THINK]): no reasoning markers', (name) => {
    const format = detectChatFormat(fixture(name));
    expect(format.thinking).toBe(false);
    expect(format.markers.thinkStart).toBe('');
  });
});

describe('replay', () => {
  const call = (id: string, city: string) => ({ id, type: 'function' as const, function: { name: 'get_weather', arguments: { city } } });
  const chat: ChatMessage[] = [
    { role: 'user', content: 'Oslo?' },
    { role: 'assistant', content: 'Cold.', reasoning_content: 'Old thoughts.' },
    { role: 'user', content: 'And Rome, then Paris?' },
    { role: 'assistant', content: '', reasoning_content: 'Rome first.', tool_calls: [call('call_1', 'Rome')] },
    { role: 'tool', content: '20C', tool_call_id: 'call_1' },
    { role: 'assistant', content: 'Now Paris.', reasoning_content: 'Then Paris.', tool_calls: [call('call_2', 'Paris')] },
    { role: 'tool', content: '15C', tool_call_id: 'call_2' },
  ];

  it("the tool loop's reasoning leads its turns as [THINK]…[/THINK], as the model wrote it; older reasoning is dropped", () => {
    const out = replayMessagesFor(THINKING, chat);
    expect(out.map((m) => m.content)).toEqual(['Oslo?', 'Cold.', 'And Rome, then Paris?', '[THINK]Rome first.[/THINK]', '20C', '[THINK]Then Paris.[/THINK]Now Paris.', '15C']);
    expect(out.some((m) => m.reasoning_content !== undefined)).toBe(false);
    const prompt = new ChatTemplate(fixture('synthetic-mistral-v13-think.jinja')).render({ messages: out, bosToken: '<s>', eosToken: '</s>' });
    expect(prompt).toContain('[INST]And Rome, then Paris?[/INST][THINK]Rome first.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}</s>[TOOL_RESULTS]20C[/TOOL_RESULTS]');
    expect(prompt).toContain('[THINK]Then Paris.[/THINK]Now Paris.[TOOL_CALLS]get_weather');
    expect(prompt).not.toContain('Old thoughts.');
  });

  it('the same format without [THINK] drops all reasoning', () => {
    expect(replayMessagesFor(MISTRAL_V11_FORMAT, chat).map((m) => m.content)).toEqual(['Oslo?', 'Cold.', 'And Rome, then Paris?', '', '20C', 'Now Paris.', '15C']);
  });
});

describe.each([1, 2, 3, 7, 1000])('the output split every %i chars', (step) => {
  it('a leading block is reasoning, then a call', () => {
    expect(parse(THINKING, '[THINK]Need the weather.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}</s>', step)).toEqual({
      reasoning: 'Need the weather.',
      reasoningComplete: true,
      calls: [{ name: 'get_weather', args: '{"city": "Oslo"}' }],
      text: '',
    });
  });

  it('a leading block after whitespace, then text; a stray marker later is dropped', () => {
    expect(parse(THINKING, ' \n[THINK]Easy.[/THINK]Sunny[/THINK] today.</s>', step)).toEqual({ reasoning: 'Easy.', reasoningComplete: true, calls: [], text: 'Sunny today.' });
  });

  it('no block: the text as it is; a block not leading the answer is text without its markers', () => {
    expect(parse(THINKING, 'Sunny.', step)).toEqual({ reasoning: '', reasoningComplete: null, calls: [], text: 'Sunny.' });
    expect(parse(THINKING, 'Hi [THINK]x[/THINK] there', step)).toEqual({ reasoning: '', reasoningComplete: null, calls: [], text: 'Hi x there' });
  });

  it('cut off inside the block: reasoning closed incomplete; a prompt that opened the block starts inside it', () => {
    expect(parse(THINKING, '[THINK]Let me', step)).toEqual({ reasoning: 'Let me', reasoningComplete: false, calls: [], text: '' });
    expect(parse(THINKING, 'Opened.[/THINK]Done.', step, true)).toEqual({ reasoning: 'Opened.', reasoningComplete: true, calls: [], text: 'Done.' });
  });
});

describe('the forced-call constraint with [THINK]', () => {
  const tools: ConstrainedTool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 8 } }, required: ['city'], additionalProperties: false }, strict: true }];
  const encoder = new TextEncoder();
  const tokenBytes: Uint8Array[] = [];
  for (let b = 0; b < 256; b++) tokenBytes.push(Uint8Array.of(b));
  for (const m of ['[THINK]', '[/THINK]', '[TOOL_CALLS]', '[ARGS]', 'get_weather', '{"city": "', '"}', 'hmm ']) tokenBytes.push(encoder.encode(m));
  const endTokenId = tokenBytes.length;
  const vocab: Vocabulary = { tokens: [...tokenBytes, null], endTokenIds: [endTokenId] };
  const spec = { kind: 'tools', mode: 'required', maxCalls: 1, tools } as const;
  /** Where a walk forced through the text is refused: inside `[THINK]` (its `[T` is also `[TOOL_CALLS]`'s). */
  const refusedInThink = (at: number) => at >= 1 && at < '[THINK]'.length;
  const call = '[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}';

  it('thinking optional: a reasoning block then the call, or the call alone; thinking none: the call alone', () => {
    const optional = () => compileConstraint(spec, vocab, { format: 'mistral-v11', markers: THINKING.markers, thinking: 'optional' });
    expect(forcedWalk(optional(), `[THINK]hmm[/THINK]${call}`)).toBe(encoder.encode(`[THINK]hmm[/THINK]${call}`).length);
    expect(forcedWalk(optional(), call)).toBe(encoder.encode(call).length);
    const none = compileConstraint(spec, vocab, { format: 'mistral-v11', markers: THINKING.markers, thinking: 'none' });
    expect(refusedInThink(forcedWalk(none, `[THINK]hmm[/THINK]${call}`))).toBe(true);
    // The format without [THINK] (no markers) is unchanged: no block.
    const plain = compileConstraint(spec, vocab, { format: 'mistral-v11', markers: MISTRAL_V11_FORMAT.markers, thinking: 'optional' });
    expect(refusedInThink(forcedWalk(plain, `[THINK]hmm[/THINK]${call}`))).toBe(true);
  });

  it('random walks end as reasoning and a call the parser reads back, never text', () => {
    let ended = 0;
    let thought = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const walk = randomWalk(compileConstraint(spec, vocab, { format: 'mistral-v11', markers: THINKING.markers, thinking: 'optional' }), tokenBytes, endTokenId, seed * 7919, 400);
      if (!walk.ended) continue;
      ended++;
      const text = decodeStrict(walk.bytes);
      const parsed = parse(THINKING, text, 2);
      expect(parsed.calls.map((c) => c.name), text).toEqual(['get_weather']);
      expect(Object.keys(JSON.parse(parsed.calls[0]!.args) as object), text).toEqual(['city']);
      expect(parsed.text.trim(), text).toBe('');
      if (parsed.reasoningComplete) thought++;
    }
    expect(ended).toBeGreaterThan(10);
    expect(thought).toBeGreaterThan(0);
  });
});
