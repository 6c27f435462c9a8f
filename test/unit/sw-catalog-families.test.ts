// One catalog model per family (issue 16): Gemma 3, Phi-4-mini (llama.cpp's phi3 architecture), SmolLM3 and
// Llama 3.2 beside Qwen, each entry noting its architecture (one the loader supports) and the chat format its
// template should write; the model manager's catalog rows carry both.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { catalogEntrySchema } from '../../src/model-store/model-catalog.ts';
import { catalogOrigins, remoteCatalog } from '../../src/model-store/remote-catalog.ts';
import { createModelManager } from '../../src/model-store/model-manager.ts';
import { SUPPORTED_ARCHITECTURES } from '../../src/model/model-config.ts';
import { CHAT_FORMATS } from '../../src/common/chat-format.ts';

beforeEach(() => {
  const entries = new Map<string, Response>();
  vi.stubGlobal('caches', {
    open: async () => ({
      put: async (r: string | Request, response: Response) => void entries.set(typeof r === 'string' ? r : r.url, response),
      match: async (r: string | Request) => entries.get(typeof r === 'string' ? r : r.url)?.clone(),
      keys: async () => [...entries.keys()].map((url) => new Request(url)),
      delete: async (r: string | Request) => entries.delete(typeof r === 'string' ? r : r.url),
    }),
  });
  vi.stubGlobal('fetch', async (input: string | Request) => {
    const url = typeof input === 'string' ? input : input.url;
    if (url.endsWith('/models/catalog.json')) return Response.json([]);
    throw new Error(`unexpected fetch of ${url}`);
  });
  vi.stubGlobal('navigator', { storage: { estimate: async () => ({ quota: 2 ** 40, usage: 0 }), persisted: async () => true } });
});
afterEach(() => vi.unstubAllGlobals());

describe('one catalog model per family', () => {
  it('lists Gemma-3-1B-it, Phi-4-mini-instruct, SmolLM3-3B and Llama-3.2-1B with their architecture and chat format', () => {
    const byId = Object.fromEntries(remoteCatalog.map((e) => [e.id, e]));
    expect(byId['gemma-3-1b-it-q4_0']).toMatchObject({
      file: 'https://huggingface.co/bartowski/google_gemma-3-1b-it-GGUF/resolve/main/google_gemma-3-1b-it-Q4_0.gguf',
      architecture: 'gemma3',
      expectedFormat: 'gemma3',
      bytesApproximate: true,
    });
    expect(byId['phi-4-mini-instruct-q4_k_m']).toMatchObject({ architecture: 'phi3', expectedFormat: 'phi4', license: 'MIT', bytesApproximate: true });
    expect(byId['smollm3-3b-q4_k_m']).toMatchObject({ architecture: 'smollm3', expectedFormat: 'hermes', license: 'Apache-2.0', bytesApproximate: true });
    expect(byId['llama-3.2-1b-instruct-q4_k_m']).toMatchObject({ architecture: 'llama', expectedFormat: 'llama3' });
    // Sizes are rounded figures, in the range of a 1B Q4_0, a 3.8B Q4_K_M and a 3B Q4_K_M file.
    expect(byId['gemma-3-1b-it-q4_0']!.bytes).toBeGreaterThan(600e6);
    expect(byId['gemma-3-1b-it-q4_0']!.bytes).toBeLessThan(900e6);
    expect(byId['phi-4-mini-instruct-q4_k_m']!.bytes).toBeGreaterThan(2.2e9);
    expect(byId['phi-4-mini-instruct-q4_k_m']!.bytes).toBeLessThan(2.8e9);
    expect(byId['smollm3-3b-q4_k_m']!.bytes).toBeGreaterThan(1.7e9);
    expect(byId['smollm3-3b-q4_k_m']!.bytes).toBeLessThan(2.2e9);
  });

  it('every entry notes an architecture the loader supports and a known chat format, and is valid under the schema', () => {
    for (const e of remoteCatalog) {
      expect(SUPPORTED_ARCHITECTURES as readonly string[]).toContain(e.architecture);
      expect(Object.keys(CHAT_FORMATS)).toContain(e.expectedFormat);
      expect(catalogEntrySchema.parse(e)).toEqual(e);
      expect(e.sha256).toBeUndefined();
    }
    expect(new Set(remoteCatalog.map((e) => e.expectedFormat))).toEqual(new Set(['hermes', 'llama3', 'gemma3', 'phi4', 'harmony']));
    // No new host for the page's connect-src.
    expect(catalogOrigins()).toEqual(['https://huggingface.co']);
  });

  it("the model manager's catalog rows carry architecture and expected_format", async () => {
    const directory = createModelManager('https://app.example/').directory(async () => new Set());
    const body = (await (await directory.manage!.catalog()).json()) as { data: { id: string; architecture?: string; expected_format?: string; verified?: unknown }[] };
    const row = (id: string) => body.data.find((m) => m.id === id);
    expect(row('gemma-3-1b-it-q4_0')).toMatchObject({ architecture: 'gemma3', expected_format: 'gemma3', status: 'available' });
    expect(row('phi-4-mini-instruct-q4_k_m')).toMatchObject({ architecture: 'phi3', expected_format: 'phi4' });
    expect(row('smollm3-3b-q4_k_m')).toMatchObject({ architecture: 'smollm3', expected_format: 'hermes' });
    // Nothing downloaded: nothing verified yet.
    expect(body.data.filter((m) => m.verified !== undefined)).toEqual([]);
  });
});
