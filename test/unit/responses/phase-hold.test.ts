// What holding text back until its phase is known costs in time to first text. Text is held only when tools are
// on offer (a tool call could still make it commentary); without tools it is final_answer from the first token.
// The assertions are on how many tokens had been generated when the first text delta left (deterministic);
// the wall-clock numbers are printed as JSON for the report, never asserted.
import { describe, expect, it } from 'vitest';
import type { ResponsesHandler } from '../../../src/responses/handler.ts';
import { post, setup } from './harness.ts';

const TOKENS = Array.from({ length: 40 }, (_, i) => `word${i} `);
const TOKEN_DELAY_MS = 5;
const tools = [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} }, strict: false }];

async function firstText(handler: ResponsesHandler, tokensYielded: () => number, body: Record<string, unknown>): Promise<{ ms: number; tokens: number; totalMs: number }> {
  const start = performance.now();
  const response = await post(handler, '/responses', { ...body, input: 'talk', stream: true });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let first: { ms: number; tokens: number } | null = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (first === null && text.includes('event: response.output_text.delta')) first = { ms: performance.now() - start, tokens: tokensYielded() };
  }
  return { ...first!, totalMs: performance.now() - start };
}

describe('holding text for its phase', () => {
  it('costs the whole turn with tools on offer, nothing without', async () => {
    // A first run warms up the code paths so that they do not count against either measurement.
    const warm = setup([{ tokens: ['w'] }, { tokens: ['w'] }]);
    await firstText(warm.handler, () => 0, {});
    await firstText(warm.handler, () => 0, { tools });
    const live = setup([{ tokens: TOKENS, tokenDelayMs: TOKEN_DELAY_MS }]);
    const held = setup([{ tokens: TOKENS, tokenDelayMs: TOKEN_DELAY_MS }]);
    const withoutTools = await firstText(live.handler, () => live.engine.tokensYielded, {});
    const withTools = await firstText(held.handler, () => held.engine.tokensYielded, { tools });
    expect(withoutTools.tokens).toBeLessThanOrEqual(2);
    expect(withTools.tokens).toBe(TOKENS.length);
    console.log(
      JSON.stringify({
        measure: 'time to first output_text.delta, fake engine',
        tokens: TOKENS.length,
        tokenDelayMs: TOKEN_DELAY_MS,
        withoutTools: { firstTextMs: Math.round(withoutTools.ms), tokensBeforeFirstText: withoutTools.tokens, totalMs: Math.round(withoutTools.totalMs) },
        withToolsHeld: { firstTextMs: Math.round(withTools.ms), tokensBeforeFirstText: withTools.tokens, totalMs: Math.round(withTools.totalMs) },
      }),
    );
  });
});
