// The incremental output parser alone: however the text is cut into tokens (every cut point, and many random
// cuttings), the pieces it streams add up to what parsing the whole text gives.
import { describe, expect, it } from 'vitest';
import { JsonStringDecoder, OutputParser, type ParseEvent } from '../../../src/responses/output-parser.ts';
import { FAKE_MODEL } from '../../support/fake-engine.ts';

interface Parsed {
  reasoning: string[];
  text: string;
  calls: { name: string; custom: boolean; args: string; complete: boolean }[];
  order: string[];
}

function collect(events: ParseEvent[]): Parsed {
  const out: Parsed = { reasoning: [], text: '', calls: [], order: [] };
  for (const e of events) {
    if (e.kind === 'reasoning.start') {
      out.reasoning.push('');
      out.order.push('reasoning');
    } else if (e.kind === 'reasoning.delta') out.reasoning[out.reasoning.length - 1] += e.text;
    else if (e.kind === 'text.delta') {
      if (out.order.at(-1) !== 'text') out.order.push('text');
      out.text += e.text;
    } else if (e.kind === 'call.start') {
      out.calls.push({ name: e.name, custom: e.custom, args: '', complete: false });
      out.order.push('call');
    } else if (e.kind === 'call.delta') out.calls[out.calls.length - 1]!.args += e.text;
    else if (e.kind === 'call.end') out.calls[out.calls.length - 1]!.complete = e.complete;
  }
  return out;
}

function parse(tokens: string[], options: { custom?: string[]; startsInReasoning?: boolean; toolCalls?: boolean } = {}): Parsed & { reasoningTokens: number } {
  const parser = new OutputParser({
    markers: FAKE_MODEL.markers,
    toolCalls: options.toolCalls ?? true,
    customNames: new Set(options.custom ?? []),
    startsInReasoning: options.startsInReasoning ?? false,
  });
  const events = tokens.flatMap((t) => parser.push(t));
  events.push(...parser.finish());
  return { ...collect(events), reasoningTokens: parser.reasoningTokens };
}

/** A deterministic PRNG (mulberry32) so random cuttings are the same on every run. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every way to cut `text` once, and `count` random cuttings into many pieces (never inside a code point). */
function cuttings(text: string, count = 60): string[][] {
  const chars = Array.from(text);
  const out: string[][] = [];
  for (let i = 1; i < chars.length; i++) out.push([chars.slice(0, i).join(''), chars.slice(i).join('')]);
  const random = prng(text.length);
  for (let n = 0; n < count; n++) {
    const pieces: string[] = [];
    let current = '';
    for (const c of chars) {
      current += c;
      if (random() < 0.3) {
        pieces.push(current);
        current = '';
      }
    }
    pieces.push(current);
    out.push(pieces);
  }
  return out;
}

describe('OutputParser', () => {
  const samples: { name: string; text: string; custom?: string[] }[] = [
    { name: 'reasoning, text, two calls', text: '<think>\nplan it\n</think>\n\nSure.<tool_call>\n{"name": "f", "arguments": {"a": [1, {"b": "}"}]}}\n</tool_call>\n<tool_call>{"name": "g", "arguments": {}}</tool_call>' },
    { name: 'custom tool with escapes', text: '<tool_call>{"name": "sh", "arguments": {"input": "echo \\"a\\\\b\\" \\u00e9\\ud83d\\ude00\\n"}}</tool_call>', custom: ['sh'] },
    { name: 'text with a lone <', text: 'a < b and <thin and </tool_ca are text' },
    { name: 'arguments before name', text: '<tool_call>{"arguments": {"x": 1}, "name": "f"}</tool_call>done' },
    { name: 'scalar and string arguments', text: '<tool_call>{"name": "f", "arguments": 42}</tool_call><tool_call>{"name": "g", "arguments": "{\\"k\\": 1}"}</tool_call>' },
  ];

  for (const sample of samples) {
    it(`gives the same pieces however "${sample.name}" is cut`, () => {
      const whole = parse([sample.text], { custom: sample.custom });
      for (const tokens of cuttings(sample.text)) {
        const got = parse(tokens, { custom: sample.custom });
        expect({ ...got, reasoningTokens: 0 }).toEqual({ ...whole, reasoningTokens: 0 });
      }
    });
  }

  it('parses the pieces as the format means them', () => {
    const a = parse([samples[0]!.text]);
    expect(a.reasoning).toEqual(['\nplan it\n']);
    expect(a.text).toBe('\n\nSure.\n');
    expect(a.order).toEqual(['reasoning', 'text', 'call', 'text', 'call']);
    expect(a.calls).toEqual([
      { name: 'f', custom: false, args: '{"a": [1, {"b": "}"}]}', complete: true },
      { name: 'g', custom: false, args: '{}', complete: true },
    ]);
    expect(parse([samples[1]!.text], { custom: ['sh'] }).calls[0]).toEqual({ name: 'sh', custom: true, args: 'echo "a\\b" é😀\n', complete: true });
    expect(parse([samples[2]!.text]).text).toBe(samples[2]!.text);
    expect(parse([samples[3]!.text]).calls).toEqual([{ name: 'f', custom: false, args: '{"x":1}', complete: true }]);
    expect(parse([samples[4]!.text]).calls.map((c) => c.args)).toEqual(['42', '{"k": 1}']);
  });

  it('without tools on offer, a tool-call block is text without its markers', () => {
    const text = '<tool_call>{"name": "f", "arguments": {}}</tool_call>';
    expect(parse([text], { toolCalls: false })).toMatchObject({ text: '{"name": "f", "arguments": {}}', calls: [] });
  });

  it('an envelope that is not a call comes back as text without its markers', () => {
    const text = '<tool_call>not json</tool_call> after';
    expect(parse([text])).toMatchObject({ text: 'not json after', calls: [] });
  });

  it('starts inside reasoning when the prompt opened the block', () => {
    const got = parse(['plan', ' more', '</think>', 'answer'], { startsInReasoning: true });
    expect(got.reasoning).toEqual(['plan more']);
    expect(got.text).toBe('answer');
    expect(got.reasoningTokens).toBe(3);
  });

  it('counts the tokens of the think block, markers included', () => {
    expect(parse(['<think>', 'a', 'b', '</think>', 'c', 'd']).reasoningTokens).toBe(4);
    expect(parse(['x<think>a</think>y']).reasoningTokens).toBe(1);
    expect(parse(['no', ' think']).reasoningTokens).toBe(0);
  });

  it('closes what output cut off: reasoning and a call as incomplete, a call without a name dropped', () => {
    expect(parse(['<think>half'])).toMatchObject({ reasoning: ['half'] });
    expect(parse(['<tool_call>{"name": "f", "arguments": {"a": "par'])).toMatchObject({ calls: [{ name: 'f', args: '{"a": "par', complete: false }] });
    expect(parse(['<tool_call>{"na'])).toMatchObject({ calls: [], text: '' });
  });
});

describe('JsonStringDecoder', () => {
  it('decodes any string char by char, never emitting half a surrogate pair', () => {
    const random = prng(7);
    const alphabet = ['a', 'é', '😀', '"', '\\', '\n', '\t', '\u0001', '/', '€', '𝄞', ' '];
    for (let n = 0; n < 200; n++) {
      const value = Array.from({ length: 1 + Math.floor(random() * 20) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      // Encode non-ASCII as \uXXXX (as some models do) half of the time.
      let json = JSON.stringify(value);
      if (n % 2 === 0) json = json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
      const decoder = new JsonStringDecoder();
      const pieces = Array.from(json.slice(1), (c) => decoder.push(c));
      expect(decoder.done).toBe(true);
      expect(pieces.join('')).toBe(value);
      for (const piece of pieces) expect(piece).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    }
  });
});
