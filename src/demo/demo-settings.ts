// The demo page's Settings panel as data, DOM-free, so that scripts (tools/train-toy-model/page_eval.ts) send what
// the page sends: the panel's defaults and the generation fields a turn's request takes from it.
import { demoTools } from './demo-tools';

/** What the Settings panel holds (index.html's inputs #temperature, #max-tokens, #store, #reasoning, #tools). */
export interface DemoSettings {
  temperature: number;
  maxOutputTokens: number;
  store: boolean;
  reasoning: boolean;
  tools: boolean;
}

/** The panel's defaults: index.html's inputs start at these (test/unit/demo/demo-settings.test.ts checks it). */
export const DEMO_DEFAULT_SETTINGS: Readonly<DemoSettings> = { temperature: 0, maxOutputTokens: 128, store: true, reasoning: true, tools: true };

/** The fields of a turn's request that come from the settings (the rest is the conversation: input, chaining, storage). */
export function demoGenerationFields(settings: DemoSettings) {
  return {
    truncation: 'auto' as const,
    temperature: settings.temperature,
    max_output_tokens: settings.maxOutputTokens,
    reasoning: { effort: settings.reasoning ? ('medium' as const) : ('none' as const) },
    tools: settings.tools ? demoTools : [],
  };
}
