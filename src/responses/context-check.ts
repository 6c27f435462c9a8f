// The prompt must fit the model's context with room for at least one token, checked before any stream starts:
// an over-long prompt is a 400 `context_length_exceeded` streamed or not (it used to answer a stream with 200 and
// then `response.failed`). The prompt is measured the way `POST /v1/responses/input_tokens` measures it.
import type { Engine } from '../engine/types.ts';
import { DomainError } from './errors.ts';
import type { PreparedPrompt } from './request-checks.ts';

export async function checkPromptFits(engine: Engine, prepared: PreparedPrompt): Promise<void> {
  const { model } = prepared;
  const tokens = await engine.tokenizePrompt({ model: model.id, messages: prepared.messages, tools: prepared.served.chatTools, enableThinking: prepared.enableThinking, reasoningEffort: prepared.reasoningEffort });
  if (tokens.length + 1 <= model.contextLength) return;
  throw new DomainError(
    'invalid_request',
    `Your input is ${tokens.length} tokens, more than model '${model.id}' can take: its context is ${model.contextLength} tokens, ` +
      'including at least 1 to generate. Shorten the input, or send truncation: "auto" to drop the oldest turns.',
    { param: 'input', code: 'context_length_exceeded' },
  );
}
