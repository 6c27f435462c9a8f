// `reasoning.effort` and the model's thinking. The chat templates this runtime serves (Qwen3-style) have one
// switch, `enable_thinking`, and no thinking budget, so effort maps onto the switch: `none` and `minimal` turn
// thinking off (the template closes the think block in the prompt); `low`, `medium`, `high`, `xhigh`, `max` and
// no effort at all leave it on. The effort asked is echoed in the response as it was sent.
import type { ReasoningConfig } from './schema.ts';

export function thinkingEnabled(reasoning: ReasoningConfig | null | undefined): boolean {
  const effort = reasoning?.effort;
  return effort !== 'none' && effort !== 'minimal';
}
