// The demo page's Settings panel as data (src/demo/demo-settings.ts): index.html's inputs start at
// DEMO_DEFAULT_SETTINGS (what tools/train-toy-model/page_eval.ts sends as "the page"), and a turn's generation
// fields follow the settings.
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { DEMO_DEFAULT_SETTINGS, demoGenerationFields } from '../../../src/demo/demo-settings';
import { demoTools } from '../../../src/demo/demo-tools';

const html = readFileSync(new URL('../../../index.html', import.meta.url), 'utf8');

/** The attributes of index.html's <input id="…">. */
function input(id: string): string {
  const tag = new RegExp(`<input\\b[^>]*\\bid="${id}"[^>]*>`).exec(html)?.[0];
  if (!tag) throw new Error(`index.html has no <input id="${id}">`);
  return tag;
}
const value = (id: string) => Number(/\bvalue="([^"]*)"/.exec(input(id))?.[1]);
const checked = (id: string) => /\schecked\b/.test(input(id));

describe('demo settings', () => {
  test("index.html's Settings panel starts at DEMO_DEFAULT_SETTINGS", () => {
    expect({
      temperature: value('temperature'),
      maxOutputTokens: value('max-tokens'),
      store: checked('store'),
      reasoning: checked('reasoning'),
      tools: checked('tools'),
    }).toEqual(DEMO_DEFAULT_SETTINGS);
  });

  test('generation fields follow the settings', () => {
    expect(demoGenerationFields(DEMO_DEFAULT_SETTINGS)).toEqual({ truncation: 'auto', temperature: 0, max_output_tokens: 128, reasoning: { effort: 'medium' }, tools: demoTools });
    const off = demoGenerationFields({ temperature: 0.7, maxOutputTokens: 64, store: false, reasoning: false, tools: false });
    expect(off).toEqual({ truncation: 'auto', temperature: 0.7, max_output_tokens: 64, reasoning: { effort: 'none' }, tools: [] });
  });
});
