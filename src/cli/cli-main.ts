// The command line's work, the same in headless Chromium and in Node on Dawn (tools/cli.mjs sets up either
// and calls runCliCommand with the GPU and the model's files):
//   logits   --model M --tokens 1,2,3            -> { tokens, logits: [[vocab floats] per position] }
//   generate --model M --prompt "..." --max-tokens N [--temperature 0]
//                                                 -> { tokens, text, finish_reason, usage, timings }
import type { ModelFileInput } from '../model/open-model.ts';
import { createWebGpuEngine, type OpTime, type WebGpuEngineOptions } from '../engine/webgpu-engine.ts';

export interface CliModel {
  /** A GGUF file, or a Hugging Face directory (URL base or file map). */
  gguf?: ModelFileInput;
  hfDir?: string | Record<string, ModelFileInput>;
}

export type CliCommand =
  | { command: 'logits'; tokens: number[]; contextLength?: number }
  | { command: 'generate'; prompt: string; system?: string; maxTokens: number; temperature: number; contextLength?: number; profile?: boolean };

export interface CliTimings {
  load_ms: number;
  prefill_ms: number;
  decode_ms: number;
  prefill_tokens: number;
  prefill_tok_s: number;
  decode_tok_s: number;
}

export type CliResult =
  | { tokens: number[]; logits: number[][] }
  | {
      prompt_tokens: number[];
      tokens: number[];
      text: string;
      finish_reason: string;
      usage: { promptTokens: number; cachedTokens: number; completionTokens: number };
      timings: CliTimings;
      adapter: string;
      model: { parameters: number; weight_gpu_bytes: number; weight_bytes_per_token: number; dispatches_per_token: number };
      /** GPU ms per op of one prefill step over the prompt and one decode step (with --profile). */
      profile?: { prefill: OpTime[] | null; decode: OpTime[] | null };
    };

export async function runCliCommand(command: CliCommand, model: CliModel, gpu?: GPU, options: Pick<WebGpuEngineOptions, 'shapes' | 'decodeInFlight' | 'maxBatch'> = {}): Promise<CliResult> {
  const engine = createWebGpuEngine({
    gpu,
    ...options,
    models: [{ id: 'cli', ...model, contextLength: command.contextLength ?? 4096 }],
  });
  try {
    const loadStart = performance.now();
    await engine.load('cli');
    const loadMs = performance.now() - loadStart;
    if (command.command === 'logits') {
      const result = await engine.logits('cli', command.tokens);
      return { tokens: result.tokens, logits: result.logits.map((row) => Array.from(row)) };
    }
    const messages = [
      ...(command.system ? [{ role: 'system' as const, content: command.system }] : []),
      { role: 'user' as const, content: command.prompt },
    ];
    const promptTokens = await engine.tokenizePrompt({ model: 'cli', messages, tools: [], enableThinking: false });
    const start = performance.now();
    let prefillEnd = start;
    let firstToken = 0;
    let last = start;
    const tokens: number[] = [];
    let text = '';
    let finish = 'length';
    let usage = { promptTokens: 0, cachedTokens: 0, completionTokens: 0 };
    for await (const event of engine.generate({
      model: 'cli',
      messages,
      tools: [],
      enableThinking: false,
      maxTokens: command.maxTokens,
      sampling: { temperature: command.temperature, top_p: 1 },
      constraint: { kind: 'none' },
    })) {
      const now = performance.now();
      if (event.type === 'prefill') prefillEnd = now;
      else if (event.type === 'token') {
        if (tokens.length === 0) firstToken = now;
        tokens.push(event.id);
        text += event.text;
        last = now;
      } else {
        finish = event.finishReason;
        usage = event.usage;
      }
    }
    const prefillTokens = usage.promptTokens - usage.cachedTokens;
    const prefillMs = prefillEnd - start;
    // Decode: the steps after the first token (the first comes out of the prefill step).
    const decodeMs = tokens.length > 1 ? last - firstToken : 0;
    const info = await engineAdapter(gpu);
    const stats = await engine.modelStats('cli');
    const profile = command.profile ? await engine.profile('cli', promptTokens) : undefined;
    return {
      prompt_tokens: promptTokens,
      tokens,
      text,
      finish_reason: finish,
      usage,
      timings: {
        load_ms: round(loadMs),
        prefill_ms: round(prefillMs),
        decode_ms: round(decodeMs),
        prefill_tokens: prefillTokens,
        prefill_tok_s: round(prefillMs > 0 ? (prefillTokens * 1000) / prefillMs : 0),
        decode_tok_s: round(decodeMs > 0 ? ((tokens.length - 1) * 1000) / decodeMs : 0),
      },
      adapter: info,
      model: { parameters: stats.parameters, weight_gpu_bytes: stats.weightGpuBytes, weight_bytes_per_token: stats.weightBytesPerToken, dispatches_per_token: stats.lastStepDispatches },
      ...(profile ? { profile } : {}),
    };
  } finally {
    await engine.dispose();
  }
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

async function engineAdapter(gpu?: GPU): Promise<string> {
  const g = gpu ?? (typeof navigator !== 'undefined' ? navigator.gpu : undefined);
  const adapter = await g?.requestAdapter();
  if (!adapter) return 'unknown';
  const i = adapter.info;
  return [i.vendor, i.architecture, i.device, i.description].filter(Boolean).join(' ') || 'unknown';
}
