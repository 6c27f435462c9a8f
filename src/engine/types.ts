// The Engine interface: what the Responses core (src/responses) asks of a language-model engine.
// The WebGPU engine (src/engine/webgpu-engine.ts) implements it in the browser and on Dawn; unit tests
// implement it with a scripted fake. Nothing here knows about WebGPU, the DOM or IndexedDB.

import type { ChatMessage, ChatTool } from '../common/chat.ts';
import type { ChatFormatName } from '../common/chat-format.ts';
import type { ConstraintSpec } from '../common/constraint-spec.ts';
import type { SamplingParams } from '../common/sampling-params.ts';

// The shared vocabulary lives in src/common; re-exported here for the layers above the engine.
export type { ChatFormatMarkers, ChatMessage, ChatTool, ChatToolCall } from '../common/chat.ts';
export type { ChatFormat, ChatFormatName } from '../common/chat-format.ts';
export type { ConstrainedTool, ConstraintSpec } from '../common/constraint-spec.ts';
export type { SamplingParams } from '../common/sampling-params.ts';
export { DomainError, EngineError, type ErrorKind } from '../common/engine-error.ts';

export interface GenerateRequest {
  model: string;
  messages: ChatMessage[];
  tools: ChatTool[];
  /** Whether the template should open a thinking block (Qwen3 `enable_thinking`). */
  enableThinking: boolean;
  /** `reasoning.effort` as asked: formats that write it into the prompt (Harmony's `Reasoning:`) read it. */
  reasoningEffort?: string | null;
  maxTokens: number;
  sampling: SamplingParams;
  constraint: ConstraintSpec;
  signal?: AbortSignal;
}

export type GenerationEvent =
  /** Prompt processing progress; hosts turn it into keep-alives. */
  | { type: 'prefill'; done: number; total: number }
  /** One sampled token and the text it completes (may be '' while a UTF-8 character is incomplete). */
  | { type: 'token'; id: number; text: string; logprob?: number; top?: { id: number; text: string; logprob: number }[] }
  | {
      type: 'done';
      finishReason: 'stop' | 'length' | 'abort';
      usage: { promptTokens: number; cachedTokens: number; completionTokens: number };
    };

export interface ModelInfo {
  id: string;
  aliases: string[];
  created: number;
  ownedBy: string;
  contextLength: number;
  /** Loaded into GPU memory right now (else only downloaded/available). */
  loaded: boolean;
  /** Template markers the output parser needs. */
  markers: {
    thinkStart: string;
    thinkEnd: string;
    toolCallStart: string;
    toolCallEnd: string;
    /** The template opens the thinking block in the prompt when thinking is on, so output starts as reasoning. */
    promptOpensThink?: boolean;
    /** The chat format (the same as `chatFormat`), here so parsers built from `markers` alone see it too. */
    format?: ChatFormatName;
  };
  /** The chat format found from the model's chat template (src/common/chat-format.ts); absent: Hermes/Qwen. */
  chatFormat?: ChatFormatName;
}

export interface Engine {
  /** Models this engine can serve; the first loaded one is the default. */
  listModels(): Promise<ModelInfo[]>;
  /** Token ids of the prompt the template renders for these messages (used for input_tokens and tests). */
  tokenizePrompt(req: Pick<GenerateRequest, 'model' | 'messages' | 'tools' | 'enableThinking' | 'reasoningEffort'>): Promise<number[]>;
  /** Reject a constraint that cannot be compiled (bad schema, unsupported keyword, unparsable grammar) before generating. */
  checkConstraint(model: string, constraint: ConstraintSpec): Promise<void>;
  /** Generate; the iterator ends after exactly one `done` event, or throws on an engine fault. */
  generate(req: GenerateRequest): AsyncIterable<GenerationEvent>;
}
