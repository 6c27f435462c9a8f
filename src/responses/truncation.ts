// `truncation: "auto"`: when the prompt would not fit the model's context (with room for the answer), the oldest
// whole turns are dropped until it does. A turn starts at a user message, so a tool call always stays with its
// output and reasoning with its turn; the instructions (the `instructions` field and every system/developer
// message) and the last user message are never dropped. The prompt's size is known before generation the same way
// `POST /v1/responses/input_tokens` knows it: `engine.tokenizePrompt` renders the chat template over the messages
// and tools and returns its token ids.
//
// What was dropped is said in the response's `metadata` (string values, as the API types them), only when
// something was dropped:
//   metadata.truncated_items          how many input items (of the previous_response_id chain and this input) were left out
//   metadata.truncated_input_tokens   how many prompt tokens that saved
// The stored history keeps every item (input_items lists them all); each turn is truncated anew.
//
// When even the last turn alone does not fit, the request is a 400 `context_length_exceeded` before any stream
// starts, with a message that says what to do. `truncation: "disabled"` (the default) leaves the prompt whole and
// the engine refuses an over-long one with its own 400, as before.
import type { ChatMessage } from '../engine/types.ts';
import { DomainError } from './errors.ts';
import { buildChat, type SourcedItem } from './translate.ts';

export interface TruncationReport {
  /** Input items left out of the prompt (oldest first, whole turns). */
  droppedItems: number;
  /** Prompt tokens saved by leaving them out. */
  droppedTokens: number;
  /** Prompt tokens of what was kept. */
  inputTokens: number;
}

export interface FitRequest {
  /** The chain continued and this request's input, in order. */
  history: readonly SourcedItem[];
  instructions: string | null | undefined;
  /** The prompt's size in tokens for these messages (the template with the request's tools). */
  count: (messages: ChatMessage[]) => Promise<number>;
  contextLength: number;
  /** Tokens kept free for the answer. */
  reserve: number;
  /** For the error message. */
  modelId: string;
}

/** Tokens kept free for the answer when the request does not set max_output_tokens. */
export function defaultReserve(contextLength: number): number {
  return Math.min(1024, Math.floor(contextLength / 4));
}

const isInstruction = ({ item }: SourcedItem): boolean => item.type === 'message' && (item.role === 'system' || item.role === 'developer');
const isUserMessage = ({ item }: SourcedItem): boolean => item.type === 'message' && item.role === 'user';

/**
 * The chat to generate from: the whole history when it fits, else the instructions plus the longest tail of turns
 * that fits with `reserve` tokens to spare (binary search over turn starts: a shorter tail renders a shorter
 * prompt); when none does, the last turn alone if it leaves at least one token to generate. Otherwise a 400.
 */
export async function fitToContext(request: FitRequest): Promise<{ messages: ChatMessage[]; report: TruncationReport | null }> {
  const { history, instructions, count, contextLength, modelId } = request;
  const reserve = Math.max(1, Math.min(request.reserve, contextLength - 1));
  const whole = buildChat(history, instructions);
  const wholeTokens = await count(whole);
  if (wholeTokens + reserve <= contextLength) return { messages: whole, report: null };

  // Turn starts after the first kept item; each candidate keeps the instructions found before it.
  const cuts = history.flatMap((s, index) => (index > 0 && isUserMessage(s) && history.slice(0, index).some((e) => !isInstruction(e)) ? [index] : []));
  const candidate = async (cut: number) => {
    const kept = [...history.slice(0, cut).filter(isInstruction), ...history.slice(cut)];
    const messages = buildChat(kept, instructions);
    return { messages, tokens: await count(messages), dropped: history.length - kept.length };
  };
  let best: Awaited<ReturnType<typeof candidate>> | null = null;
  let low = 0;
  let high = cuts.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const tried = await candidate(cuts[mid]!);
    if (tried.tokens + reserve <= contextLength) {
      best = tried;
      high = mid - 1;
    } else {
      low = mid + 1;
    }
  }
  if (best === null && cuts.length > 0) {
    const last = await candidate(cuts[cuts.length - 1]!);
    if (last.tokens + 1 <= contextLength) best = last;
  }
  if (best === null) {
    const shortest = cuts.length > 0 ? (await candidate(cuts[cuts.length - 1]!)).tokens : wholeTokens;
    throw new DomainError(
      'invalid_request',
      `The prompt is ${shortest} tokens even with every earlier turn dropped (the instructions, the tools and the last ` +
        `user message stay), more than model \`${modelId}\` can take: its context is ${contextLength} tokens, with ${reserve} kept for the answer. ` +
        'Shorten the message or the instructions, offer fewer tools, lower max_output_tokens, or use a model with a longer context.',
      { param: 'input', code: 'context_length_exceeded' },
    );
  }
  return { messages: best.messages, report: { droppedItems: best.dropped, droppedTokens: wholeTokens - best.tokens, inputTokens: best.tokens } };
}

/** The response's metadata with what truncation dropped (unchanged when nothing was). */
export function withTruncationMetadata(metadata: Record<string, string>, report: TruncationReport | null | undefined): Record<string, string> {
  if (!report) return metadata;
  return { ...metadata, truncated_items: String(report.droppedItems), truncated_input_tokens: String(report.droppedTokens) };
}
