// The bundled demonstration model (public/models/toy-qwen3, trained by tools/train-toy-model): its files and
// catalog entry, its tokenizer (tokenizer.json and the GGUF's own vocabulary agree with the Python encoder it was
// trained with), its chat template (the runtime's ChatML with tools renders the prompts it was trained on, byte
// for byte), and its GGUF weights: the TypeScript reference forward pass gives PyTorch's logits and greedy tokens
// (test/unit/toy-model.fixture.json, written by tools/train-toy-model/logits_fixture.py).
import { openAsBlob, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import type { ChatMessage, ChatTool } from '../../src/engine/types.ts';
import { ChatTemplate } from '../../src/model/chat-template.ts';
import { readGguf, type GgufFile } from '../../src/model/gguf.ts';
import { ModelTokenizer } from '../../src/model/tokenizer.ts';
import { catalogEntrySchema } from '../../src/model-store/model-catalog.ts';
import { CHATML_TOOLS_TEMPLATE } from '../../tools/make-test-model/chatml-template.ts';
import { referenceForward, referenceGreedy, referenceModelFromGguf, type ReferenceModel } from '../support/cpu-forward.ts';

const DIR = 'public/models/toy-qwen3';
const FIXTURE = 'test/unit/toy-model.fixture.json';
/** Largest difference allowed between PyTorch's float32 logits and the runtime's (logits are O(10); measured ~1e-5). */
const TOY_LOGITS_TOLERANCE = 2e-3;

interface ToyFixtureCase {
  id: string;
  messages: ChatMessage[];
  tools: ChatTool[];
  prompt: string;
  tokens: number[];
  positions: number[];
  logits: number[][];
  greedy: number[];
  greedy_text: string;
}

function loadToyFixture(): { cases: ToyFixtureCase[] } {
  return JSON.parse(readFileSync(FIXTURE, 'utf8')) as { cases: ToyFixtureCase[] };
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

let gguf: GgufFile;
let fixture: { cases: ToyFixtureCase[] };
beforeAll(async () => {
  gguf = await readGguf(await openAsBlob(join(DIR, 'model.gguf')));
  fixture = loadToyFixture();
});

describe('bundled toy model', () => {
  test('files are small, the catalog lists the GGUF with its size and license', () => {
    const names = ['model.gguf', 'model.safetensors', 'config.json', 'tokenizer.json', 'tokenizer_config.json', 'README.md'];
    const total = names.reduce((sum, n) => sum + statSync(join(DIR, n)).size, 0);
    expect(total).toBeLessThanOrEqual(20 * 1024 * 1024);
    const catalog = z.array(catalogEntrySchema).parse(JSON.parse(readFileSync('public/models/catalog.json', 'utf8')));
    const entry = catalog.find((e) => e.id === 'toy-qwen3')!;
    expect(entry).toMatchObject({ aliases: ['default'], file: 'models/toy-qwen3/model.gguf', format: 'gguf', license: 'MIT', bundled: true });
    expect(entry.bytes).toBe(statSync(join(DIR, 'model.gguf')).size);
    const config = JSON.parse(readFileSync(join(DIR, 'config.json'), 'utf8'));
    expect(config).toMatchObject({ architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', tie_word_embeddings: true });
    expect(gguf.metadata['general.architecture']).toBe('qwen3');
    expect(gguf.metadata['qwen3.block_count']).toBe(config.num_hidden_layers);
    // A context of at least 2,048 tokens, in both files, and a fixture prompt that long (trained on such chats).
    expect(config.max_position_embeddings).toBeGreaterThanOrEqual(2048);
    expect(gguf.metadata['qwen3.context_length']).toBe(config.max_position_embeddings);
    expect(Math.max(...fixture.cases.map((c) => c.tokens.length))).toBeGreaterThan(1024);
  });

  test('tokenizer.json and the GGUF vocabulary encode the fixture prompts to the ids the model was trained with', () => {
    const fromJson = ModelTokenizer.fromJson(
      JSON.parse(readFileSync(join(DIR, 'tokenizer.json'), 'utf8')),
      JSON.parse(readFileSync(join(DIR, 'tokenizer_config.json'), 'utf8')),
    );
    const fromGguf = ModelTokenizer.fromGguf(gguf.metadata);
    expect(fromJson.eosToken).toBe('<|im_end|>');
    for (const c of fixture.cases) {
      expect(fromJson.encode(c.prompt)).toEqual(c.tokens);
      expect(fromGguf.encode(c.prompt)).toEqual(c.tokens);
      expect(fromJson.decode(c.tokens)).toBe(c.prompt);
    }
    for (const s of ['<think>', '</think>', '<tool_call>', '</tool_call>', '<|im_start|>', '<|im_end|>', '<|endoftext|>']) {
      expect(fromJson.encode(s)).toHaveLength(1);
    }
  });

  test('the chat template renders the prompts the model was trained on, byte for byte', () => {
    const config = JSON.parse(readFileSync(join(DIR, 'tokenizer_config.json'), 'utf8'));
    expect(config.chat_template).toBe(CHATML_TOOLS_TEMPLATE);
    expect(gguf.metadata['tokenizer.chat_template']).toBe(CHATML_TOOLS_TEMPLATE);
    const template = new ChatTemplate(config.chat_template);
    for (const c of fixture.cases) {
      expect(template.render({ messages: c.messages, tools: c.tools, addGenerationPrompt: true })).toBe(c.prompt);
    }
  });

  test("the GGUF through the TypeScript reference forward gives PyTorch's logits and greedy tokens", async () => {
    const model: ReferenceModel = await referenceModelFromGguf(gguf);
    for (const c of fixture.cases) {
      const logits = referenceForward(model.config, model.weights, c.tokens);
      c.positions.forEach((p, i) => expect(maxDiff(logits[p], c.logits[i])).toBeLessThan(TOY_LOGITS_TOLERANCE));
      // The reference greedy reruns the whole prompt per token: only on the shorter prompts (Dawn checks them all).
      if (c.tokens.length > 1024) continue;
      const n = Math.min(c.greedy.length, 8);
      expect(referenceGreedy(model.config, model.weights, c.tokens, n)).toEqual(c.greedy.slice(0, n));
    }
  }, 900_000);
});
