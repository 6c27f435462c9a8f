// `POST /v1/responses/compact`: a shorter history that keeps what the conversation needs, sealed into one
// `compaction` item that the client sends back as input (or keeps as the whole of its history).
//
// Design. No model pass: compaction is deterministic and cheap, and it never invents content.
// - Kept as they are: user, system and developer messages; the assistant's final answers; every tool call
//   (function and custom) with its output, so the model still sees what it did and what came back.
// - Dropped: reasoning items (the model's private working; the largest part of an agent's history) and the
//   assistant's `commentary` messages (narration before tool calls).
// - Shortened: a tool output over 2,000 characters keeps its first 1,200 and last 600 characters around a
//   `[… N characters left out …]` marker.
// - Instructions are not part of it (they belong to each request, and are not inherited).
// The items are sealed with AES-GCM under the store's key (purpose `compaction`, a 4 MiB bound) in the format of
// reasoning-seal.ts; a compaction item replays, through the one normaliser, as exactly those items. Unlike
// OpenAI's endpoint, whose output lists the user messages beside the compaction item, the output here is the
// compaction item alone: it holds the user messages in their places, so sending it back is the whole history.
import type { InputItem } from './schema.ts';
import type { SourcedItem } from './translate.ts';

export const COMPACTION_MAX_BYTES = 4 * 1024 * 1024;
const LONG_OUTPUT = 2000;
const KEEP_HEAD = 1200;
const KEEP_TAIL = 600;

export function compactHistory(items: readonly SourcedItem[]): InputItem[] {
  const out: InputItem[] = [];
  for (const { item } of items) {
    if (item.type === 'reasoning') continue;
    if (item.type === 'message' && item.role === 'assistant' && item.phase === 'commentary') continue;
    if ((item.type === 'function_call_output' || item.type === 'custom_tool_call_output') && typeof item.output === 'string') {
      out.push({ ...item, output: shorten(item.output) });
      continue;
    }
    out.push(item);
  }
  return out;
}

function shorten(text: string): string {
  if (text.length <= LONG_OUTPUT) return text;
  const left = text.length - KEEP_HEAD - KEEP_TAIL;
  return `${text.slice(0, KEEP_HEAD)}\n[… ${left} characters left out …]\n${text.slice(-KEEP_TAIL)}`;
}
