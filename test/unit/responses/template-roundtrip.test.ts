// The translated chat through a real chat template (the generated test models' Qwen3-style ChatML) and back:
// what the template writes for an assistant turn, fed to the output parser, gives the same items again.
import { describe, expect, it } from 'vitest';
import { ChatTemplate } from '../../../src/model/chat-template.ts';
import { OutputParser, type ParseEvent } from '../../../src/responses/output-parser.ts';
import { CHATML_TOOLS_TEMPLATE } from '../../../tools/make-test-model/chatml-template.ts';
import { FAKE_MODEL } from '../../support/fake-engine.ts';
import { post, setup } from './harness.ts';

const tools = [
  { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
  { type: 'custom', name: 'apply_patch', description: 'Apply a patch' },
];

describe('translated chat through a real template', () => {
  it('renders developer blocks in place, shimmed custom calls and tool results', async () => {
    const { handler, engine } = setup([{ tokens: ['ok'] }]);
    const input = [
      { role: 'developer', content: 'Use metric.' },
      { role: 'user', content: 'Weather and patch?' },
      { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'two tools' }] },
      { type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'custom_tool_call', call_id: 'call_b', name: 'apply_patch', input: 'line "1"\nline 2' },
      { type: 'function_call_output', call_id: 'call_a', output: '3C' },
      { type: 'custom_tool_call_output', call_id: 'call_b', output: 'ok' },
      { role: 'developer', content: 'Be brief.' },
    ];
    expect((await post(handler, '/responses', { instructions: 'You are a helper.', input, tools })).status).toBe(200);
    const req = engine.requests[0]!;
    const prompt = new ChatTemplate(CHATML_TOOLS_TEMPLATE).render({ messages: req.messages, tools: req.tools, enableThinking: true });
    expect(prompt).toContain('You are a helper.\n\n# Tools');
    expect(prompt).toContain('<|im_start|>system\nDeveloper instructions:\nUse metric.<|im_end|>\n<|im_start|>user\nWeather and patch?');
    expect(prompt).toContain('<think>\ntwo tools\n</think>');
    expect(prompt).toContain('<tool_call>\n{"name": "apply_patch", "arguments": {"input": "line \\"1\\"\\nline 2"}}\n</tool_call>');
    expect(prompt).toContain('<tool_response>\n3C\n</tool_response>\n<tool_response>\nok\n</tool_response>');
    expect(prompt.indexOf('Developer instructions:\nBe brief.')).toBeGreaterThan(prompt.indexOf('<tool_response>'));
  });

  it('an assistant turn the template writes parses back into the same calls and text', async () => {
    const template = new ChatTemplate(CHATML_TOOLS_TEMPLATE);
    const input = 'a "quoted" \\ path\nnext 😀';
    const assistant = {
      role: 'assistant' as const,
      content: 'Checking.',
      reasoning_content: 'plan',
      tool_calls: [
        { id: 'c1', type: 'function' as const, function: { name: 'get_weather', arguments: { city: 'Oslo' } } },
        { id: 'c2', type: 'function' as const, function: { name: 'apply_patch', arguments: { input } } },
      ],
    };
    const withTurn = template.render({ messages: [{ role: 'user', content: 'x' }, assistant], addGenerationPrompt: false });
    const before = template.render({ messages: [{ role: 'user', content: 'x' }], addGenerationPrompt: true });
    const generated = withTurn.slice(before.length).replace(/<\|im_end\|>\n$/, '');
    const parser = new OutputParser({ markers: FAKE_MODEL.markers, toolCalls: true, customNames: new Set(['apply_patch']), startsInReasoning: false });
    const events: ParseEvent[] = [...Array.from(generated).flatMap((c) => parser.push(c)), ...parser.finish()];
    const calls: { name: string; args: string }[] = [];
    let text = '';
    let reasoning = '';
    for (const e of events) {
      if (e.kind === 'call.start') calls.push({ name: e.name, args: '' });
      if (e.kind === 'call.delta') calls[calls.length - 1]!.args += e.text;
      if (e.kind === 'text.delta') text += e.text;
      if (e.kind === 'reasoning.delta') reasoning += e.text;
    }
    expect(reasoning.trim()).toBe('plan');
    expect(text.trim()).toBe('Checking.');
    expect(calls).toEqual([
      { name: 'get_weather', args: '{"city": "Oslo"}' },
      { name: 'apply_patch', args: input },
    ]);
  });
});
