// The WebGPU engine: implements Engine over the decoder graph. Requests run one at a time (RequestQueue);
// a model loads on first use (headers, tokenizer, weights streamed to the GPU, pipelines compiled) and stays
// loaded. generate(): chat template -> token ids -> reuse the longest common prefix with the KV cache of the
// model's last sequence -> prefill the rest in batched steps -> decode one command buffer per token until an
// end token, maxTokens, the context end or the abort signal, with up to `decodeInFlight` steps submitted at once
// (Decoder.decode: each reads the previous step's token on the GPU) where no CPU work sits between tokens; a
// constraint's mask and top_logprobs keep one at a time.
// Choosing tokens: argmax on the GPU for plain greedy requests; otherwise the GPU sampler (src/sampling:
// penalties, logit bias, temperature/top-k/top-p/min-p with a seeded draw, logprobs) recorded into the same
// command buffer through the decoder's TokenChooser, with the constraint's token mask (JSON schema, tool
// calls, grammars) applied before sampling.
import { acquireGpu, GpuError, lostDeviceError, type GpuContext } from '../gpu/device.ts';
import { PipelineCache } from '../gpu/pipeline-cache.ts';
import { widenF16Weights } from '../gpu/kernel-shapes.ts';
import { ChatTemplate } from '../model/chat-template.ts';
import { Decoder, type DecoderOptions, type LogitsMode, type StepResult, type TokenChooser } from '../model/decoder.ts';
import { loadDecoder } from '../model/load-decoder.ts';
import { IncrementalDetokenizer } from '../model/incremental-detokenizer.ts';
import type { ModelConfig } from '../model/model-config.ts';
import type { ModelTokenizer } from '../model/tokenizer.ts';
import { DEFAULT_MARKERS } from '../common/chat.ts';
import { type ChatFormat, detectChatFormat, replayMessagesFor } from '../common/chat-format.ts';
import { HARMONY_STOP_TOKENS, harmonyEffort, renderHarmonyPrompt } from '../common/harmony.ts';
import { ModelRegistry } from './model-registry.ts';
import { DEFAULT_CONTEXT_LENGTH, openModel, type ModelSource, type OpenedModel } from '../model/open-model.ts';
import { RequestQueue } from './request-queue.ts';
import {
  buildVocabulary,
  checkConstraintForRequest,
  compileConstraint,
  tokenTextEncodingOf,
  type ChatFormatMarkers,
  type ThinkingMode,
  type TokenConstraint,
  type Vocabulary,
} from '../sampling/constraints/index.ts';
import { createSampler, type GpuSampler } from '../sampling/gpu-sampler.ts';
import {
  EngineError,
  type ConstraintSpec,
  type Engine,
  type GenerateRequest,
  type GenerationEvent,
  type ModelInfo,
} from './types.ts';
import { streamedF16Bytes, type UploadedTensors } from '../model/upload-weights.ts';

export interface WebGpuEngineOptions {
  /** The GPU to use: navigator.gpu by default; the `webgpu` package's create([]) on Node. */
  gpu?: GPU;
  models: ModelSource[];
  /** Most prompt tokens per prefill step (default: the adapter's prefill chunk). */
  maxBatch?: number;
  /** Decode steps kept submitted at once for requests the GPU can continue alone (default 2; 1: one at a time). */
  decodeInFlight?: number;
  /** Model loading progress (bytes of weights uploaded). */
  onLoadProgress?: (modelId: string, loadedBytes: number, totalBytes: number) => void;
  /** Override the adapter's kernel shapes (src/gpu/kernel-shapes.ts; bench/gpu compares shapes on one GPU). */
  shapes?: DecoderOptions['shapes'];
}

/** End-of-turn markers that stop generation when the vocabulary has them. */
const END_OF_TURN_TOKENS = ['<|im_end|>', '<|endoftext|>', '<|eot_id|>', '<|eom_id|>', '<|end|>', '</s>'];

interface LoadedModel {
  source: ModelSource;
  opened: OpenedModel;
  uploaded: UploadedTensors;
  decoder: Decoder;
  stopTokens: Set<number>;
  contextLength: number;
  /** Made on first use by a request that samples. */
  sampler: Promise<GpuSampler> | null;
  /** Token id -> bytes, for constraint masks (made on first constrained request). */
  vocabulary: Vocabulary | null;
  format: ChatFormat;
}

interface ModelMeta {
  opened: OpenedModel;
  templates: Map<boolean, ChatTemplate>;
  /** The chat format its template writes (detected from the template's text). */
  format: ChatFormat;
}

export interface OpTime {
  op: string;
  ms: number;
  /** Dispatch groups summed (one per layer for per-layer ops). */
  count: number;
}

export interface LogitsResult {
  tokens: number[];
  logits: Float32Array[];
}

export class WebGpuEngine implements Engine {
  private readonly registry: ModelRegistry;
  private readonly queue = new RequestQueue();
  private gpuContext: Promise<GpuContext> | null = null;
  private pipelines: PipelineCache | null = null;
  private readonly meta = new Map<string, Promise<ModelMeta>>();
  private readonly loaded = new Map<string, Promise<LoadedModel>>();

  constructor(private readonly options: WebGpuEngineOptions) {
    this.registry = new ModelRegistry(options.models);
  }

  async listModels(): Promise<ModelInfo[]> {
    const infos: ModelInfo[] = [];
    for (const source of this.registry.list()) {
      let contextLength = source.contextLength ?? DEFAULT_CONTEXT_LENGTH;
      let format: ChatFormat | null = null;
      try {
        const meta = await this.modelMeta(source);
        contextLength = this.contextLengthOf(source, meta.opened.config);
        format = meta.format;
      } catch {
        // An unreadable model is still listed; using it reports the error.
      }
      infos.push({
        id: source.id,
        aliases: source.aliases ?? [],
        created: source.created ?? 0,
        ownedBy: source.ownedBy ?? 'webgpu-responses',
        contextLength,
        loaded: this.loaded.has(source.id),
        ...(format && format.name !== 'hermes'
          ? { markers: { ...markersOf(source, format), format: format.name }, chatFormat: format.name }
          : { markers: { ...DEFAULT_MARKERS, ...source.markers } }),
      });
    }
    // The first loaded model is the default: list loaded ones first.
    return [...infos.filter((m) => m.loaded), ...infos.filter((m) => !m.loaded)];
  }

  async tokenizePrompt(req: Pick<GenerateRequest, 'model' | 'messages' | 'tools' | 'enableThinking' | 'reasoningEffort'>): Promise<number[]> {
    const source = this.registry.resolve(req.model);
    const meta = await this.modelMeta(source);
    return this.renderAndTokenize(meta, req).tokens;
  }

  async checkConstraint(model: string, constraint: ConstraintSpec): Promise<void> {
    const source = this.registry.resolve(model);
    if (constraint.kind === 'none') return;
    // Compiles the grammar (cached for generate) and turns a bad schema or grammar into a 400 naming it.
    const format = await this.formatOf(source);
    checkConstraintForRequest(constraint, { markers: markersOf(source, format), format: format.name });
  }

  generate(req: GenerateRequest): AsyncIterable<GenerationEvent> {
    return this.generateEvents(req);
  }

  /** Loads a model now (else it loads on first use). */
  async load(modelName: string): Promise<void> {
    await this.loadedModel(this.registry.resolve(modelName));
  }

  /**
   * The full-vocabulary logits at every position of `tokens` from a cold start (the `logits` CLI and tests);
   * leaves these tokens in the KV cache.
   */
  async logits(modelName: string, tokens: readonly number[], signal?: AbortSignal): Promise<LogitsResult> {
    const source = this.registry.resolve(modelName);
    return this.queue.run(async () => {
      const model = await this.loadedModel(source);
      this.checkFits(model, tokens.length, 0);
      model.decoder.kv.clear();
      const result = await this.guard(() => model.decoder.forward(tokens, { logits: 'all' as LogitsMode, signal }));
      return { tokens: [...tokens], logits: result.logits! };
    }, signal);
  }

  /** Sizes of a loaded model: GPU bytes of its weights and the weight bytes one decode step reads. */
  async modelStats(modelName: string): Promise<{ weightGpuBytes: number; weightBytesPerToken: number; parameters: number; lastStepDispatches: number }> {
    const model = await this.loadedModel(this.registry.resolve(modelName));
    const c = model.opened.config;
    const ffn = c.moe ? c.moe.experts * 3 * c.hidden * c.intermediate + c.moe.experts * c.hidden : 3 * c.hidden * c.intermediate;
    const perLayer = c.hidden * c.heads * c.headDim * 2 + c.hidden * c.kvHeads * c.headDim * 2 + ffn;
    const parameters = c.layers * perLayer + c.vocabSize * c.hidden * (c.tiedEmbeddings ? 1 : 2);
    return { weightGpuBytes: model.uploaded.bytes, weightBytesPerToken: model.decoder.weightBytesPerToken(), parameters, lastStepDispatches: model.decoder.lastStepDispatches };
  }

  /**
   * GPU time per op (each op in its own timed pass) of a prefill step over `tokens` (at most one batch) from
   * position 0, then of one decode step after it. Null where the adapter has no timestamp-query.
   */
  async profile(modelName: string, tokens: readonly number[]): Promise<{ prefill: OpTime[] | null; decode: OpTime[] | null }> {
    const source = this.registry.resolve(modelName);
    return this.queue.run(async () => {
      const model = await this.loadedModel(source);
      const decoder = model.decoder;
      const batch = tokens.slice(0, Math.min(decoder.maxBatch, model.contextLength - 1));
      decoder.kv.clear();
      const prefill = await this.guard(() => decoder.profile(batch));
      const decode = await this.guard(() => decoder.profile([batch[batch.length - 1]]));
      decoder.kv.clear();
      return { prefill, decode };
    });
  }

  /** Frees every model and the device. */
  async dispose(): Promise<void> {
    const release = await this.queue.acquire();
    try {
      await this.unloadAll();
      if (this.gpuContext) (await this.gpuContext.catch(() => null))?.destroy();
      this.gpuContext = null;
      this.pipelines = null;
    } finally {
      release();
    }
  }

  // ---- internals ------------------------------------------------------------------------------------

  private contextLengthOf(source: ModelSource, config: ModelConfig): number {
    return Math.min(source.contextLength ?? DEFAULT_CONTEXT_LENGTH, config.contextLength);
  }

  private modelMeta(source: ModelSource): Promise<ModelMeta> {
    let meta = this.meta.get(source.id);
    if (!meta) {
      meta = openModel(source).then((opened) => ({ opened, templates: new Map<boolean, ChatTemplate>(), format: detectChatFormat(opened.tokenizer.chatTemplate) }));
      meta.catch(() => this.meta.delete(source.id));
      this.meta.set(source.id, meta);
    }
    return meta;
  }

  /** The chat format of a model (Hermes/Qwen when its files cannot be read: using it reports why). */
  private async formatOf(source: ModelSource): Promise<ChatFormat> {
    try {
      return (await this.modelMeta(source)).format;
    } catch {
      return detectChatFormat(null);
    }
  }

  private renderAndTokenize(meta: ModelMeta, req: Pick<GenerateRequest, 'messages' | 'tools' | 'enableThinking' | 'reasoningEffort'>): { text: string; tokens: number[] } {
    const tokenizer = meta.opened.tokenizer;
    if (meta.format.name === 'harmony') {
      // Harmony's prompt is the runtime's (src/common/harmony.ts): its template cannot say what the request means.
      const text = renderHarmonyPrompt(req.messages, req.tools, { reasoningEffort: harmonyEffort(req.reasoningEffort) });
      return { text, tokens: tokenizer.encode(text, { addSpecialTokens: false }) };
    }
    const withTools = req.tools.length > 0;
    let template = meta.templates.get(withTools);
    if (!template) {
      try {
        template = ChatTemplate.select(tokenizer.chatTemplate, withTools);
      } catch (e) {
        throw new EngineError('invalid_request', (e as Error).message, { code: 'invalid_request_error' });
      }
      meta.templates.set(withTools, template);
    }
    let text: string;
    try {
      text = template.render({
        messages: replayMessagesFor(meta.format, req.messages, req.tools),
        tools: req.tools,
        addGenerationPrompt: true,
        enableThinking: req.enableThinking,
        bosToken: tokenizer.bosToken,
        eosToken: tokenizer.eosToken,
      });
    } catch (e) {
      throw new EngineError('invalid_request', (e as Error).message, { code: 'invalid_request_error', param: 'input' });
    }
    // BOS as llama.cpp's server puts it: the template's own kept, added where the vocabulary adds one and the template wrote none.
    return { text, tokens: tokenizer.encodePrompt(text) };
  }

  private gpu(): Promise<GpuContext> {
    if (!this.gpuContext) {
      this.gpuContext = acquireGpu({ gpu: this.options.gpu, label: 'webgpu-responses engine' });
      this.gpuContext.catch(() => (this.gpuContext = null));
    }
    return this.gpuContext;
  }

  /** After a device loss between requests: forget the models and the device, so the next load starts afresh. */
  private async resetIfLost(): Promise<void> {
    const ctx = await this.gpuContext?.catch(() => null);
    if (ctx?.isLost) {
      await this.unloadAll();
      this.gpuContext = null;
      this.pipelines = null;
    }
  }

  private async loadedModel(source: ModelSource): Promise<LoadedModel> {
    await this.resetIfLost();
    let model = this.loaded.get(source.id);
    if (!model) {
      model = this.loadModel(source);
      model.catch(() => this.loaded.delete(source.id));
      this.loaded.set(source.id, model);
    }
    return model;
  }

  private async loadModel(source: ModelSource): Promise<LoadedModel> {
    const { opened, format } = await this.modelMeta(source);
    const gpu = await this.gpu();
    const pipelines = (this.pipelines ??= new PipelineCache(gpu.device));
    const config = opened.config;
    const contextLength = this.contextLengthOf(source, config);
    // The sampler needs no weights and the decoder only their buffers: both are built beside the upload (loadDecoder).
    const sampler = createSampler(gpu, config.vocabSize, { pipelines });
    sampler.catch(() => undefined);
    const loaded = loadDecoder(gpu, config, opened.tensors, {
      upload: {
        onProgress: (p) => this.options.onLoadProgress?.(source.id, p.bytesDone, p.bytesTotal),
        widenF16: widenF16Weights(gpu.adapterInfo, gpu.features.f16, streamedF16Bytes(opened.tensors)),
      },
      decoder: { maxSeq: contextLength, maxBatch: this.options.maxBatch, inFlight: this.options.decodeInFlight, pipelines, shapes: this.options.shapes },
    });
    const [model, samplerBuilt] = await Promise.allSettled([loaded, sampler]);
    if (model.status === 'rejected' || samplerBuilt.status === 'rejected') {
      if (model.status === 'fulfilled') {
        model.value.decoder.destroy();
        model.value.uploaded.destroy();
      }
      if (samplerBuilt.status === 'fulfilled') samplerBuilt.value.destroy();
      throw model.status === 'rejected' ? model.reason : (samplerBuilt as PromiseRejectedResult).reason;
    }
    const { uploaded, decoder } = model.value;
    return { source, opened, uploaded, decoder, stopTokens: stopTokensOf(config, opened.tokenizer, format), contextLength, sampler: Promise.resolve(samplerBuilt.value), vocabulary: null, format };
  }

  private samplerOf(model: LoadedModel): Promise<GpuSampler> {
    if (!model.sampler) {
      model.sampler = this.gpu().then((gpu) => createSampler(gpu, model.opened.config.vocabSize, { pipelines: this.pipelines ?? undefined }));
      model.sampler.catch(() => (model.sampler = null));
    }
    return model.sampler;
  }

  private vocabularyOf(model: LoadedModel): Vocabulary {
    if (!model.vocabulary) {
      const tokenizer = model.opened.tokenizer;
      model.vocabulary = buildVocabulary({
        tokenTexts: Array.from({ length: model.opened.config.vocabSize }, (_, id) => tokenizer.tokenText(id)),
        encoding: tokenTextEncodingOf(tokenizer.source.tokenizerJson),
        // The format's own call marker (`[TOOL_CALLS]`, `<|python_tag|>`) is a control token the constraint must be
        // able to write: it counts as its literal text.
        addedTokens: tokenizer.specialTokens.map((t) => (t.control && (t.content === model.format.calls.open || model.format.controlTokens?.includes(t.content)) ? { ...t, control: false } : t)),
        endTokenIds: [...model.stopTokens],
      });
    }
    return model.vocabulary;
  }

  private async unloadAll(): Promise<void> {
    const models = [...this.loaded.values()];
    this.loaded.clear();
    for (const m of models) {
      const model = await m.catch(() => null);
      model?.decoder.destroy();
      model?.uploaded.destroy();
      (await model?.sampler?.catch(() => null))?.destroy();
    }
  }

  private checkFits(model: LoadedModel, promptTokens: number, minNew: number): void {
    if (promptTokens + minNew > model.contextLength) {
      throw new EngineError(
        'invalid_request',
        `The prompt is ${promptTokens} tokens, more than model \`${model.source.id}\` can take: its context is ${model.contextLength} tokens` +
          (minNew ? ` (including at least ${minNew} to generate)` : ''),
        { code: 'context_length_exceeded', param: 'input' },
      );
    }
  }

  /** Runs GPU work; a GPU failure drops every loaded model (and a lost device) and surfaces as an EngineError. */
  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (caught) {
      const ctx = await this.gpuContext?.catch(() => null);
      const error = await lostDeviceError(caught, ctx);
      if (error instanceof GpuError) {
        if (error.code === 'device-lost' || ctx?.isLost) {
          await this.unloadAll();
          this.gpuContext = null;
          this.pipelines = null;
        }
        throw new EngineError('internal', `GPU failure (${error.code}): ${error.message}`);
      }
      throw error;
    }
  }

  /**
   * How this request picks tokens: argmax (plain greedy) or the GPU sampler with the constraint's mask, and how many
   * decode steps may be in flight (1 where the CPU acts between tokens).
   */
  private async tokenChoice(model: LoadedModel, req: GenerateRequest, promptText: string): Promise<TokenChoice> {
    const p = req.sampling;
    const constrained = req.constraint.kind !== 'none';
    const topLogprobs = (p.top_logprobs ?? 0) > 0;
    const needsSampler =
      constrained ||
      topLogprobs ||
      p.temperature > 0 ||
      (p.repetition_penalty ?? 1) !== 1 ||
      (p.presence_penalty ?? 0) !== 0 ||
      (p.frequency_penalty ?? 0) !== 0 ||
      Object.keys(p.logit_bias ?? {}).length > 0;
    const vocabSize = model.opened.config.vocabSize;
    const choice: TokenChoice = {
      sampler: null,
      constraint: null,
      // A constraint's mask follows the token accepted last; top_logprobs reads the sampler's last result.
      inFlight: constrained || topLogprobs ? 1 : undefined,
      chooserAt: () => undefined,
      taken: (result) => {
        if (result.nextToken >= vocabSize) {
          throw new EngineError(
            'internal',
            choice.constraint ? 'The constraint left no token the model may produce here' : `The model produced no valid token (id ${result.nextToken}): its logits are NaN`,
          );
        }
        const logprob = choice.sampler ? new Float32Array(result.chosen.buffer, result.chosen.byteOffset + 4, 1)[0] : undefined;
        return { id: result.nextToken, logprob };
      },
    };
    if (!needsSampler) return choice;
    const sampler = await this.guard(() => this.samplerOf(model));
    // Penalties count the chosen tokens on the GPU (the sampler's kernels add each step's token), in queue order.
    sampler.resetCounts();
    if (constrained) {
      const markers = markersOf(model.source, model.format);
      const format = model.format.name;
      try {
        choice.constraint = compileConstraint(req.constraint, this.vocabularyOf(model), { markers, format, thinking: thinkingModeOf(promptText, req.enableThinking, model.format, markers) });
      } catch (error) {
        checkConstraintForRequest(req.constraint, { markers, format });
        throw error;
      }
    }
    const params = { ...p, seed: p.seed ?? Math.floor(Math.random() * 0x7fffffff) };
    choice.sampler = sampler;
    // Asked when the step is encoded: the mask is the constraint's state then (after the previous token's accept).
    choice.chooserAt = (step) => sampler.chooser(params, step, { mask: choice.constraint?.allowedMask() ?? null });
    return choice;
  }

  private async *generateEvents(req: GenerateRequest): AsyncGenerator<GenerationEvent> {
    const source = this.registry.resolve(req.model);
    await this.checkConstraint(req.model, req.constraint);
    const signal = req.signal;
    let release: () => void;
    try {
      release = await this.queue.acquire(signal);
    } catch (error) {
      if (signal?.aborted) {
        yield { type: 'done', finishReason: 'abort', usage: { promptTokens: 0, cachedTokens: 0, completionTokens: 0 } };
        return;
      }
      throw error;
    }
    // A consumer that stops pulling events after aborting must not hold the GPU: an abort while this
    // generator is suspended at a yield gives the turn back at once (on resuming it does no more GPU work).
    const turn = { suspended: false };
    const onAbort = () => {
      if (turn.suspended) release();
    };
    signal?.addEventListener('abort', onAbort);
    try {
      const meta = await this.modelMeta(source);
      const rendered = this.renderAndTokenize(meta, req);
      const prompt = rendered.tokens;
      if (prompt.length === 0) throw new EngineError('invalid_request', 'The chat template rendered an empty prompt', { code: 'invalid_request_error', param: 'input' });
      const model = await this.guard(() => this.loadedModel(source));
      this.checkFits(model, prompt.length, 1);
      const choice = await this.tokenChoice(model, req, rendered.text);
      const usage = { promptTokens: prompt.length, cachedTokens: 0, completionTokens: 0 };
      const g: Generation = { req, model, tokenizer: meta.opened.tokenizer, choice, usage, turn };
      const first = yield* this.prefillEvents(g, prompt);
      const finishReason = first ? yield* this.decodeEvents(g, first) : 'abort';
      turn.suspended = true;
      yield { type: 'done', finishReason, usage };
    } finally {
      signal?.removeEventListener('abort', onAbort);
      release();
    }
  }

  /**
   * Runs the prompt after the longest prefix the KV cache shares with it, in chunks of maxBatch with a 'prefill'
   * event after each; returns the first token (the last chunk's choice), or null when aborted before it.
   */
  private async *prefillEvents(g: Generation, prompt: readonly number[]): AsyncGenerator<GenerationEvent, Taken | null> {
    const decoder = g.model.decoder;
    // Reuse the longest common prefix; at least the last prompt token is run again for its logits.
    const cached = Math.min(decoder.kv.commonPrefixLength(prompt), prompt.length - 1);
    decoder.kv.truncate(cached);
    g.usage.cachedTokens = cached;
    const rest = prompt.slice(cached);
    let first: Taken | null = null;
    for (let done = 0; done < rest.length; ) {
      if (g.req.signal?.aborted) return null;
      const chunk = rest.slice(done, done + decoder.maxBatch);
      done += chunk.length;
      // Only the last chunk's choice is a token (the sampler's draw 0, counted by the penalties).
      const last = done === rest.length;
      const result = await this.guard(() => decoder.forward(chunk, { chooser: last ? g.choice.chooserAt(0) : undefined }));
      if (last) first = g.choice.taken(result);
      yield* handOut(g.turn, { type: 'prefill', done: cached + done, total: g.usage.promptTokens });
    }
    return first;
  }

  /**
   * Emits `first` and the tokens of the decode steps after it, until a stop token, a complete constraint, maxTokens,
   * the context's end or an abort; returns the finish reason. The decoder keeps the request's steps in flight
   * (choice.inFlight): a step submitted past the end is discarded, and the KV cache holds exactly the tokens kept.
   */
  private async *decodeEvents(g: Generation, first: Taken): AsyncGenerator<GenerationEvent, 'stop' | 'length' | 'abort'> {
    const { req, model, choice, usage } = g;
    const decoder = model.decoder;
    const detokenizer = new IncrementalDetokenizer(g.tokenizer);
    // A decode step follows each token emitted but the last: at most maxTokens - 1, none past the context's end.
    const maxSteps = Math.max(0, Math.min(req.maxTokens - 1, model.contextLength - decoder.kv.length));
    const steps = decoder.decode(first.id, { maxSteps, inFlight: choice.inFlight, chooser: (i) => choice.chooserAt(i + 1) });
    try {
      for (let next = first; ; ) {
        if (model.stopTokens.has(next.id)) return 'stop';
        if (usage.completionTokens >= req.maxTokens) return 'length';
        choice.constraint?.accept(next.id);
        usage.completionTokens++;
        yield* handOut(g.turn, await this.tokenEvent(g, next, detokenizer));
        if (choice.constraint?.isComplete()) return 'stop';
        if (usage.completionTokens >= req.maxTokens || decoder.kv.length >= model.contextLength) return 'length';
        if (req.signal?.aborted) return 'abort';
        const step = await this.guard(() => steps.next());
        if (step.done) return 'length';
        next = choice.taken(step.value);
      }
    } finally {
      await steps.return();
    }
  }

  private async tokenEvent(g: Generation, next: Taken, detokenizer: IncrementalDetokenizer): Promise<Extract<GenerationEvent, { type: 'token' }>> {
    const event: Extract<GenerationEvent, { type: 'token' }> = { type: 'token', id: next.id, text: detokenizer.push(next.id) };
    const sampler = g.choice.sampler;
    if (sampler) {
      event.logprob = next.logprob;
      if ((g.req.sampling.top_logprobs ?? 0) > 0) {
        // The sampler's result is this token's step: top_logprobs keeps one step in flight.
        const [sampled] = await this.guard(() => sampler.read());
        event.top = sampled.top.map((t) => ({ id: t.id, text: g.tokenizer.decode([t.id]), logprob: t.logprob }));
      }
    }
    return event;
  }
}

/** Yields one event with `turn.suspended` set while the consumer holds it (an abort then gives the turn back). */
async function* handOut(turn: { suspended: boolean }, event: GenerationEvent): AsyncGenerator<GenerationEvent, void> {
  turn.suspended = true;
  yield event;
  turn.suspended = false;
}

/** A chosen token and (with the sampler) its logprob. */
interface Taken {
  id: number;
  logprob: number | undefined;
}

interface TokenChoice {
  sampler: GpuSampler | null;
  constraint: TokenConstraint | null;
  /** Decode steps this request may keep in flight: 1 where the CPU acts between tokens, else the decoder's default. */
  inFlight: number | undefined;
  /** The chooser of the token with draw counter `step` (0: the prompt's next token, then one per decode step). */
  chooserAt: (step: number) => TokenChooser | undefined;
  /** Checks a step's result and returns its token. */
  taken: (result: StepResult) => Taken;
}

/** One request's state while it generates. */
interface Generation {
  req: GenerateRequest;
  model: LoadedModel;
  tokenizer: ModelTokenizer;
  choice: TokenChoice;
  usage: { promptTokens: number; cachedTokens: number; completionTokens: number };
  /** Whether the generator is suspended at a yield. */
  turn: { suspended: boolean };
}

/** The format's markers; a Hermes/Qwen model's may be overridden by its source. */
function markersOf(source: ModelSource, format: ChatFormat): ChatFormatMarkers {
  return format.name === 'hermes' ? { ...DEFAULT_MARKERS, ...source.markers } : format.markers;
}

/** Whether the prompt opened a thinking block the output starts inside ('open'), may open one, or not. */
function thinkingModeOf(promptText: string, enableThinking: boolean, format: ChatFormat, markers: ChatFormatMarkers): ThinkingMode {
  if (!format.thinking) return 'none';
  if (promptText.trimEnd().endsWith(markers.thinkStart)) return 'open';
  return enableThinking ? 'optional' : 'none';
}

function stopTokensOf(config: ModelConfig, tokenizer: ModelTokenizer, format: ChatFormat): Set<number> {
  const stop = new Set(config.eosTokenIds);
  if (tokenizer.eosTokenId !== null) stop.add(tokenizer.eosTokenId);
  // Harmony's `<|end|>` ends a message inside the turn; `<|return|>` and `<|call|>` end the turn.
  const ends = format.name === 'harmony' ? [...END_OF_TURN_TOKENS.filter((t) => t !== '<|end|>'), ...HARMONY_STOP_TOKENS] : END_OF_TURN_TOKENS;
  for (const text of ends) {
    const special = tokenizer.specialTokens.find((t) => t.content === text);
    if (special) stop.add(special.id);
  }
  if (format.name === 'harmony') {
    // `<|end|>` is never a stop for Harmony, even where a model file names it an end-of-sequence token.
    const end = tokenizer.specialTokens.find((t) => t.content === '<|end|>');
    if (end) stop.delete(end.id);
  }
  return stop;
}

/** The WebGPU engine for these models (loaded lazily on first use). */
export function createWebGpuEngine(options: WebGpuEngineOptions): WebGpuEngine {
  return new WebGpuEngine(options);
}
