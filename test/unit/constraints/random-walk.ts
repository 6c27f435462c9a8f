// Walks through a token constraint: random walks (at each step a random allowed token, seeded; decode what was
// produced) and forced walks (given bytes, one byte token at a time, until the constraint refuses one). To make walks finish, a share of the picks favours "structural" tokens (no letters or digits)
// and the end token; every pick is still one the mask allowed.
import type { TokenConstraint } from '../../../src/sampling/constraints/index.ts';

export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface WalkResult {
  bytes: Uint8Array;
  ended: boolean;
  steps: number;
}

export function allowedIds(mask: Uint32Array, vocabSize: number): number[] {
  const ids: number[] = [];
  for (let i = 0; i < vocabSize; i++) if (mask[i >> 5] & (1 << (i & 31))) ids.push(i);
  return ids;
}

export function randomWalk(
  constraint: TokenConstraint,
  tokenBytes: readonly Uint8Array[],
  endTokenId: number,
  seed: number,
  maxSteps = 600,
): WalkResult {
  const random = seededRandom(seed);
  const out: number[] = [];
  let steps = 0;
  // Structural: no letters, digits or non-ASCII, once JSON escapes like \n are set aside (a newline inside a
  // JSON-escaped grammar is the two characters \ n).
  const structural = (id: number) => {
    if (id === endTokenId) return false;
    const text = String.fromCharCode(...tokenBytes[id]).replace(/\\[nt"\\]/g, '');
    return !/[0-9A-Za-z\u0080-\u00ff]/.test(text);
  };
  while (steps < maxSteps) {
    const allowed = allowedIds(constraint.allowedMask(), constraint.vocabSize);
    if (allowed.length === 0) break;
    // Past half the budget, lean harder towards finishing.
    const finishing = steps > maxSteps / 2;
    let pool = allowed;
    if (allowed.includes(endTokenId) && random() < (finishing ? 0.8 : 0.15)) pool = [endTokenId];
    else if (random() < (finishing ? 0.8 : 0.35)) {
      const s = allowed.filter(structural);
      if (s.length > 0) pool = s;
    }
    const id = pool[Math.floor(random() * pool.length)];
    constraint.accept(id);
    steps++;
    if (id === endTokenId) return { bytes: Uint8Array.from(out), ended: true, steps };
    out.push(...tokenBytes[id]);
  }
  return { bytes: Uint8Array.from(out), ended: false, steps };
}

/** Decodes UTF-8 strictly: a walk must never produce invalid UTF-8 under a grammar. */
export function decodeStrict(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

/**
 * The tool calls in a constrained output: after the thinking block (everything up to the first `</think>`, when
 * there is one), every `<tool_call>…</tool_call>` span parsed as JSON.
 */
export function extractToolCalls(text: string, allowThinking: boolean): { calls: { name: string; arguments: Record<string, unknown> }[]; freeText: string } {
  let rest = text;
  const thinkEnd = rest.indexOf('</think>');
  if (allowThinking && thinkEnd >= 0) rest = rest.slice(thinkEnd + '</think>'.length);
  const calls: { name: string; arguments: Record<string, unknown> }[] = [];
  let freeText = '';
  for (;;) {
    const open = rest.indexOf('<tool_call>');
    if (open < 0) break;
    freeText += rest.slice(0, open);
    // The end marker may also occur inside a JSON string: take the first one after which the JSON parses.
    let close = rest.indexOf('</tool_call>', open);
    for (;;) {
      if (close < 0) throw new Error(`unclosed or unparsable tool call in ${JSON.stringify(text)}`);
      try {
        calls.push(JSON.parse(rest.slice(open + '<tool_call>'.length, close)));
        break;
      } catch {
        close = rest.indexOf('</tool_call>', close + 1);
      }
    }
    rest = rest.slice(close + '</tool_call>'.length);
  }
  return { calls, freeText: freeText + rest };
}

/** Forces `text` byte by byte (a byte-level vocabulary: token id = byte); returns how many bytes the constraint took before refusing one. */
export function forcedWalk(constraint: TokenConstraint, text: string): number {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i++) {
    if (!constraint.isAllowed(bytes[i]!)) return i;
    constraint.accept(bytes[i]!);
  }
  return bytes.length;
}
