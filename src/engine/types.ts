// The Engine interface: what the Responses core (src/responses) asks of a language-model engine.
// The WebGPU engine (src/engine/webgpu-engine.ts) implements it in the browser and on Dawn; unit tests
// implement it with a scripted fake. Nothing here knows about WebGPU, the DOM or IndexedDB.

/** A chat message in the shape chat templates expect (the Hugging Face / OpenAI chat convention). */
export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Assistant reasoning to replay (rendered inside `<think>…</think>` by templates that know it). */
  reasoning_content?: string;
  /** Assistant tool calls; `arguments` is an object so templates can `tojson` it. */
  tool_calls?: ChatToolCall[];
  /** For role `tool`: the call this is the result of. */
  tool_call_id?: string;
  /** For role `tool`: the tool's name, when known. */
  name?: string;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: Record<string, unknown> | string };
}

/** A tool as chat templates see it (custom tools arrive here already shimmed to a function with `input: string`). */
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** What the model must be held to while decoding (compiled to token masks by engines that support constraints). */
export type ConstraintSpec =
  | { kind: 'none' }
  /** The whole answer is JSON matching the schema (text.format json_schema / json_object). */
  | { kind: 'json_schema'; schema: Record<string, unknown> | null }
  /**
   * Tool calling in the chat format: `mode` `required` forces a call to start, `named` fixes the tool.
   * Inside a call the JSON must be {"name": <declared>, "arguments": <its schema>}; a custom tool's `input`
   * must match its grammar (`lark` or `regex`) when it has one.
   */
  | {
      kind: 'tools';
      mode: 'auto' | 'required' | 'named';
      name?: string;
      tools: ConstrainedTool[];
      /** The most calls the turn may make (parallel_tool_calls false -> 1, max_tool_calls); absent: no limit. */
      maxCalls?: number;
    };

export type ConstrainedTool =
  | { type: 'function'; name: string; parameters: Record<string, unknown> | null; strict: boolean }
  | { type: 'custom'; name: string; grammar?: { syntax: 'lark' | 'regex'; definition: string } };

export interface SamplingParams {
  /** 0 means greedy. */
  temperature: number;
  top_p: number;
  top_k?: number;
  min_p?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  repetition_penalty?: number;
  logit_bias?: Record<number, number>;
  seed?: number;
  /** Number of top alternatives to report per token (0 = none). */
  top_logprobs?: number;
}

export interface GenerateRequest {
  model: string;
  messages: ChatMessage[];
  tools: ChatTool[];
  /** Whether the template should open a thinking block (Qwen3 `enable_thinking`). */
  enableThinking: boolean;
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
  };
}

/** An error the engine raises with an HTTP meaning (prompt too long, model not found, bad constraint, ...). */
export class EngineError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

export interface Engine {
  /** Models this engine can serve; the first loaded one is the default. */
  listModels(): Promise<ModelInfo[]>;
  /** Token ids of the prompt the template renders for these messages (used for input_tokens and tests). */
  tokenizePrompt(req: Pick<GenerateRequest, 'model' | 'messages' | 'tools' | 'enableThinking'>): Promise<number[]>;
  /** Reject a constraint that cannot be compiled (bad schema, unsupported keyword, unparsable grammar) before generating. */
  checkConstraint(model: string, constraint: ConstraintSpec): Promise<void>;
  /** Generate; the iterator ends after exactly one `done` event, or throws on an engine fault. */
  generate(req: GenerateRequest): AsyncIterable<GenerationEvent>;
}
