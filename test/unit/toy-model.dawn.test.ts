// The bundled toy model through the WebGPU engine in Node on Dawn (the `webgpu` package): its logits equal
// PyTorch's (test/unit/toy-model.fixture.json) within TOY_LOGITS_TOLERANCE, and greedy generation from the
// rendered chat prompt gives PyTorch's greedy tokens. Prints the decode speed (not asserted). Dawn needs a Vulkan
// driver: run with
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
// (SwiftShader from Debian's chromium); without an adapter these tests are skipped, saying why.
import { openAsBlob, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { create, globals } from 'webgpu';
import { acquireGpu } from '../../src/gpu/device.ts';
import { createWebGpuEngine, type WebGpuEngine } from '../../src/engine/webgpu-engine.ts';
import type { ChatMessage, ChatTool, GenerationEvent } from '../../src/engine/types.ts';
import { needDawnAdapter } from '../support/dawn-adapter.ts';

/** As in toy-model.test.ts (not imported: importing a test file would run its tests here too). */
const TOY_LOGITS_TOLERANCE = 2e-3;
interface ToyFixtureCase {
  id: string;
  messages: ChatMessage[];
  tools: ChatTool[];
  tokens: number[];
  positions: number[];
  logits: number[][];
  greedy: number[];
  greedy_text: string;
}
const loadToyFixture = (): { cases: ToyFixtureCase[] } => JSON.parse(readFileSync('test/unit/toy-model.fixture.json', 'utf8'));

Object.assign(globalThis, globals);
// Dawn's GPU object must outlive every device made from it (Node crashes if it is collected first).
const dawn = create([]);

let engine: WebGpuEngine | null = null;
let missing = '';
let cases: ToyFixtureCase[];

beforeAll(async () => {
  cases = loadToyFixture().cases;
  try {
    const probe = await acquireGpu({ gpu: dawn });
    probe.destroy();
  } catch (error) {
    missing = `no WebGPU adapter on Dawn (${error instanceof Error ? error.message : String(error)}); set LD_LIBRARY_PATH and VK_ICD_FILENAMES as this file's header says`;
    return;
  }
  engine = createWebGpuEngine({
    gpu: dawn,
    models: [{ id: 'toy-qwen3', gguf: await openAsBlob('public/models/toy-qwen3/model.gguf'), contextLength: 2048 }],
  });
}, 120_000);
afterAll(async () => {
  await (engine as unknown as { dispose?: () => Promise<void> } | null)?.dispose?.();
});

function need(ctx: { skip: (note?: string) => void }): WebGpuEngine {
  return needDawnAdapter(ctx, engine, missing);
}

describe('bundled toy model on Dawn', () => {
  test("the engine's logits equal PyTorch's", async (ctx) => {
    const e = need(ctx);
    let worst = 0;
    for (const c of cases) {
      const { logits } = await e.logits('toy-qwen3', c.tokens);
      c.positions.forEach((p, i) => {
        for (let v = 0; v < c.logits[i].length; v++) worst = Math.max(worst, Math.abs(logits[p][v] - c.logits[i][v]));
      });
    }
    console.log(`toy-qwen3 on Dawn: max |logit - PyTorch| = ${worst.toExponential(2)}`);
    expect(worst).toBeLessThan(TOY_LOGITS_TOLERANCE);
  }, 300_000);

  test("greedy generation from the chat prompt gives PyTorch's tokens; decode speed", async (ctx) => {
    const e = need(ctx);
    for (const c of cases) {
      const prompt = await e.tokenizePrompt({ model: 'toy-qwen3', messages: c.messages, tools: c.tools, enableThinking: true });
      expect(prompt).toEqual(c.tokens);
      const ids: number[] = [];
      let first = 0;
      let done: Extract<GenerationEvent, { type: 'done' }> | null = null;
      for await (const ev of e.generate({
        model: 'toy-qwen3',
        messages: c.messages,
        tools: c.tools,
        enableThinking: true,
        maxTokens: c.greedy.length,
        sampling: { temperature: 0, top_p: 1 },
        constraint: { kind: 'none' },
      })) {
        if (ev.type === 'token') {
          if (ids.length === 0) first = performance.now();
          ids.push(ev.id);
        }
        if (ev.type === 'done') done = ev;
      }
      const seconds = (performance.now() - first) / 1000;
      console.log(`toy-qwen3 on Dawn, ${c.id}: ${ids.length} tokens, decode ${((ids.length - 1) / seconds).toFixed(1)} tokens/s`);
      expect(done).not.toBeNull();
      // The engine stops at <|im_end|> without reporting it as a token; PyTorch's list includes it.
      const expected = c.greedy.filter((id, i) => !(i === c.greedy.length - 1 && c.greedy_text.endsWith('<|im_end|>')));
      expect(ids).toEqual(expected.slice(0, ids.length));
      expect(ids.length).toBeGreaterThanOrEqual(Math.min(expected.length, c.greedy.length - 1));
    }
  }, 300_000);
});
