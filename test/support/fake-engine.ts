// A scripted Engine for Node tests of the Responses core. Each generate() plays the token texts its script
// gives for that request; tokenizePrompt renders the chat with a small deterministic template (every field
// the real templates render: roles, reasoning, tool calls with arguments, tool results, tools) and returns one
// id per code point, so two prompts have the same ids exactly when they render the same text.
// It honours maxTokens (finishReason `length`) and the abort signal (finishReason `abort`), can emit prefill
// progress, and can fail mid-stream like a faulty GPU.
import {
  EngineError,
  type ConstraintSpec,
  type Engine,
  type GenerateRequest,
  type GenerationEvent,
  type ModelInfo,
} from '../../src/engine/types.ts';
import { type ChatFormat, detectChatFormat, replayMessagesFor } from '../../src/common/chat-format.ts';
import { ChatTemplate } from '../../src/model/chat-template.ts';
import { harmonyEffort, renderHarmonyPrompt } from '../../src/common/harmony.ts';
import { checkConstraintForRequest } from '../../src/sampling/constraints/index.ts';

/** Models given a real chat template (fakeModelWithTemplate): id -> the template and the format it writes. */
const TEMPLATED = new Map<string, { template: ChatTemplate; format: ChatFormat }>();

/**
 * A fake model whose prompts render through a real chat template (as the WebGPU engine renders them: the chat
 * replayed through the format's rules, then the template) and whose constraints compile for real in that
 * format; its ModelInfo carries the format the template was detected as. Other models keep the fake template.
 */
export function fakeModelWithTemplate(id: string, templateSource: string, info: Partial<ModelInfo> = {}): ModelInfo {
  const format = detectChatFormat(templateSource);
  TEMPLATED.set(id, { template: new ChatTemplate(templateSource), format });
  return {
    ...FAKE_MODEL,
    id,
    aliases: [],
    markers: { ...format.markers, format: format.name },
    chatFormat: format.name,
    ...info,
  };
}

/** The `Current date` of the Harmony prompts the fake renders. */
export const FAKE_DATE = '2026-12-01';

export interface FakeScript {
  /** The texts of the tokens the model "samples", in order. */
  tokens: string[];
  /** Throw an engine fault before this token index. */
  failAt?: number;
  /** What to throw at `failAt` (default: a plain Error, like a lost device). */
  fault?: Error;
  /** Prefill progress events before the first token. */
  prefillSteps?: number;
  /** Wait this long before each token (only for measurements; tests must not assert on time). */
  tokenDelayMs?: number;
  /** Wait for this promise before the first token (to hold a generation in flight). */
  gate?: Promise<void>;
}

export const FAKE_MODEL: ModelInfo = {
  id: 'fake-qwen3',
  aliases: ['fake'],
  created: 1_700_000_000,
  ownedBy: 'webgpu-responses',
  contextLength: 4096,
  loaded: true,
  markers: { thinkStart: '<think>', thinkEnd: '</think>', toolCallStart: '<tool_call>', toolCallEnd: '</tool_call>' },
};

export class FakeEngine implements Engine {
  /** Every generate request, in order (to inspect what the core sent). */
  readonly requests: GenerateRequest[] = [];
  /** Tokens yielded so far, over all requests (to see how far generation was when something happened). */
  tokensYielded = 0;
  private readonly scripts: (FakeScript | ((req: GenerateRequest) => FakeScript))[];

  constructor(
    scripts: (FakeScript | ((req: GenerateRequest) => FakeScript))[] = [],
    private readonly models: ModelInfo[] = [FAKE_MODEL],
  ) {
    this.scripts = [...scripts];
  }

  /** Queue the script for the next generate(). */
  script(next: FakeScript | ((req: GenerateRequest) => FakeScript)): this {
    this.scripts.push(next);
    return this;
  }

  async listModels(): Promise<ModelInfo[]> {
    return this.models;
  }

  async tokenizePrompt(req: Pick<GenerateRequest, 'model' | 'messages' | 'tools' | 'enableThinking' | 'reasoningEffort'>): Promise<number[]> {
    const templated = TEMPLATED.get(req.model);
    // Harmony's prompt is the runtime's, as the WebGPU engine renders it (a fixed date keeps prompts comparable).
    const text = templated?.format.name === 'harmony'
      ? renderHarmonyPrompt(req.messages, req.tools, { reasoningEffort: harmonyEffort(req.reasoningEffort), date: FAKE_DATE })
      : templated
      ? templated.template.render({
          messages: replayMessagesFor(templated.format, req.messages, req.tools),
          tools: req.tools,
          addGenerationPrompt: true,
          enableThinking: req.enableThinking,
          bosToken: '<s>',
          eosToken: '</s>',
          extra: { date_string: '01 Dec 2026' },
        })
      : renderPrompt(req);
    return Array.from(text, (ch) => ch.codePointAt(0)!);
  }

  async checkConstraint(model: string, constraint: ConstraintSpec): Promise<void> {
    const templated = TEMPLATED.get(model);
    if (templated && constraint.kind !== 'none') {
      checkConstraintForRequest(constraint, { markers: templated.format.markers, format: templated.format.name, thinking: 'none' });
      return;
    }
    if (constraint.kind === 'json_schema' && constraint.schema !== null) {
      const type = constraint.schema.type;
      if (type !== undefined && !['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'].includes(String(type))) {
        throw new EngineError('invalid_request', `Unsupported JSON schema type '${String(type)}'.`, { code: 'invalid_constraint', param: 'text.format.schema' });
      }
    }
    if (constraint.kind === 'tools') {
      for (const tool of constraint.tools) {
        if (tool.type !== 'custom' || !tool.grammar) continue;
        if (tool.grammar.syntax === 'regex') {
          try {
            new RegExp(tool.grammar.definition);
          } catch {
            throw new EngineError('invalid_request', `The regex of custom tool '${tool.name}' does not compile.`, { code: 'invalid_grammar', param: 'tools' });
          }
        } else if (!/^\s*start\s*:/m.test(tool.grammar.definition)) {
          throw new EngineError('invalid_request', `The Lark grammar of custom tool '${tool.name}' has no 'start' rule.`, { code: 'invalid_grammar', param: 'tools' });
        }
      }
    }
  }

  async *generate(req: GenerateRequest): AsyncIterable<GenerationEvent> {
    this.requests.push(req);
    const next = this.scripts.shift();
    if (next === undefined) throw new Error('FakeEngine: no script for this request');
    const script = typeof next === 'function' ? next(req) : next;
    const prompt = await this.tokenizePrompt(req);
    const usage = (completionTokens: number) => ({ promptTokens: prompt.length, cachedTokens: 0, completionTokens });
    for (let step = 1; step <= (script.prefillSteps ?? 0); step++) {
      yield { type: 'prefill', done: Math.round((prompt.length * step) / script.prefillSteps!), total: prompt.length };
    }
    if (script.gate) {
      // Held in flight until the gate opens, or until the request is aborted (as a real engine would stop).
      const signal = req.signal;
      const aborted = new Promise<void>((resolve) => {
        if (signal?.aborted) resolve();
        signal?.addEventListener('abort', () => resolve(), { once: true });
      });
      await Promise.race([script.gate, aborted]);
    }
    let emitted = 0;
    for (const [index, text] of script.tokens.entries()) {
      await new Promise((resolve) => setTimeout(resolve, script.tokenDelayMs ?? 0));
      if (req.signal?.aborted) {
        yield { type: 'done', finishReason: 'abort', usage: usage(emitted) };
        return;
      }
      if (emitted >= req.maxTokens) {
        yield { type: 'done', finishReason: 'length', usage: usage(emitted) };
        return;
      }
      if (script.failAt === index) throw script.fault ?? new Error('FakeEngine: simulated device fault');
      emitted++;
      this.tokensYielded++;
      yield { type: 'token', id: index, text };
    }
    yield { type: 'done', finishReason: 'stop', usage: usage(emitted) };
  }
}

/** The fake chat template. */
export function renderPrompt(req: Pick<GenerateRequest, 'messages' | 'tools' | 'enableThinking'>): string {
  let out = '';
  if (req.tools.length > 0) out += `<tools>${JSON.stringify(req.tools)}</tools>\n`;
  for (const m of req.messages) {
    out += `<|${m.role}|>`;
    if (m.reasoning_content !== undefined) out += `<think>${m.reasoning_content}</think>`;
    out += m.content;
    for (const call of m.tool_calls ?? []) {
      out += `<tool_call>${JSON.stringify({ id: call.id, name: call.function.name, arguments: call.function.arguments })}</tool_call>`;
    }
    if (m.tool_call_id !== undefined) out += `[result of ${m.tool_call_id} ${m.name ?? ''}]`;
    out += '\n';
  }
  return `${out}<|assistant|>${req.enableThinking ? '' : '<think></think>'}`;
}
