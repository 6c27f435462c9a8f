// Hostile GGUF files (tools/make-hostile-gguf): each is refused with its expected error, fast and reading only
// its header; a failed open is remembered until the file changes; metadata keys cannot touch prototypes; a chat
// template that loops or grows fails with a limit error instead of running out of memory; a 262k-token
// vocabulary still reads.
import { beforeEach, describe, expect, it } from 'vitest';
import { forgetOpenFailures, openModel } from '../../../src/model/open-model.ts';
import { ChatTemplate, ChatTemplateLimitError } from '../../../src/model/chat-template.ts';
import { GGUF_LIMITS, readGguf } from '../../../src/model/gguf.ts';
import { type HostileGguf, HostileSource, hostileGgufs, tinyModelWithTemplate } from '../../../tools/make-hostile-gguf/hostile.ts';

const cases = await hostileGgufs();
const MiB = 1 << 20;
/** What the failure cache's fingerprint reads (64 KiB head + 4 KiB tail), with room. */
const FINGERPRINT_BYTES = 128 << 10;

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

function heapUsed(): number {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}

beforeEach(() => forgetOpenFailures());

describe('hostile GGUF files', () => {
  it('the generator makes every kind (open, render, control)', () => {
    expect(cases.filter((c) => c.phase === 'open').length).toBeGreaterThanOrEqual(14);
    expect(cases.filter((c) => c.phase === 'render').length).toBe(3);
    expect(cases.some((c) => c.phase === 'ok')).toBe(true);
  });

  for (const c of cases.filter((x) => x.phase === 'open')) {
    it(`${c.name}: ${c.description} -> ${c.error}`, async () => {
      const source = new HostileSource(c);
      const heap0 = heapUsed();
      const t0 = performance.now();
      const error = c.limits
        ? await failureOf(readGguf(source, { ...GGUF_LIMITS, ...c.limits }))
        : await failureOf(openModel({ id: c.name, gguf: source }));
      const ms = performance.now() - t0;
      expect(error.message).toMatch(c.error!);
      expect(ms).toBeLessThan(1500);
      // Only the header is read (no doubling reads towards a length a field claims), and memory stays bounded.
      expect(source.bytesRead).toBeLessThanOrEqual(2 * c.header.length + 2 * MiB + FINGERPRINT_BYTES);
      expect(heapUsed() - heap0).toBeLessThan(256 * MiB);
    });
  }

  it('a failed open is remembered: the next request fails at once, reading only the fingerprint', async () => {
    for (const c of cases.filter((x) => x.phase === 'open' && !x.limits)) {
      const source = new HostileSource(c);
      const first = await failureOf(openModel({ id: c.name, gguf: source }));
      const reads = source.bytesRead;
      // "At once": the same error object, and nothing read past the fingerprint (no header parsed again). A wall-clock
      // bound here measured the machine's load and GC pauses, not the code.
      const again = await failureOf(openModel({ id: c.name, gguf: source }));
      expect(again).toBe(first);
      expect(source.bytesRead - reads).toBeLessThanOrEqual(FINGERPRINT_BYTES);
    }
  });

  it('a failed open is forgotten once the file changes', async () => {
    const bad = cases.find((c) => c.name === 'bad-magic')!;
    const file: Pick<HostileGguf, 'header' | 'size'> = { header: bad.header, size: bad.size };
    const source = new HostileSource(file, 'model.gguf');
    await expect(openModel({ id: 'm', gguf: source })).rejects.toThrow(/wrong magic/);
    // The same source, now holding a good model (as a re-download would).
    const good = await tinyModelWithTemplate('{{ messages[0].content }}');
    file.header = good;
    file.size = good.length;
    const opened = await openModel({ id: 'm', gguf: source });
    expect(opened.config.vocabSize).toBeGreaterThan(256);
  });

  it('a __proto__ key is an ordinary key of a null-prototype metadata object', async () => {
    const c = cases.find((x) => x.name === 'proto-key')!;
    const file = await readGguf(new HostileSource(c));
    expect(Object.getPrototypeOf(file.metadata)).toBeNull();
    expect(Object.keys(file.metadata)).toEqual(['__proto__', 'constructor']);
    expect(file.metadata['__proto__']).toBe('polluted');
    expect(file.metadata['constructor']).toBe('x');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(file.metadataTypes['__proto__']).toBe('STRING');
  });

  for (const c of cases.filter((x) => x.phase === 'render')) {
    it(`${c.name}: ${c.description} -> a template limit error, not an out-of-memory`, async () => {
      const opened = await openModel({ id: c.name, gguf: new HostileSource(c) });
      const template = ChatTemplate.select(opened.tokenizer.chatTemplate, false);
      const heap0 = heapUsed();
      const t0 = performance.now();
      let error: unknown = null;
      try {
        template.render({ messages: [{ role: 'user', content: 'hi' }] });
      } catch (e) {
        error = e;
      }
      const ms = performance.now() - t0;
      expect(error).toBeInstanceOf(ChatTemplateLimitError);
      expect((error as Error).message).toMatch(c.error!);
      expect(ms).toBeLessThan(6000);
      expect(heapUsed() - heap0).toBeLessThan(512 * MiB);
    }, 20_000);
  }

  it('vocab-262k (control): a 262,144-token vocabulary with scores and types reads quickly', async () => {
    const c = cases.find((x) => x.name === 'vocab-262k')!;
    const t0 = performance.now();
    const file = await readGguf(new HostileSource(c));
    expect(performance.now() - t0).toBeLessThan(3000);
    expect((file.metadata['tokenizer.ggml.tokens'] as string[]).length).toBe(262_144);
    expect((file.metadata['tokenizer.ggml.tokens'] as string[])[262_143]).toBe('tok262143');
    expect((file.metadata['tokenizer.ggml.scores'] as number[]).length).toBe(262_144);
  });

  it('a real chat template still renders under the limits', async () => {
    const opened = await openModel({ id: 'tiny', gguf: await tinyModelWithTemplate('{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}{{ range(3)|join(",") }}') });
    const text = ChatTemplate.select(opened.tokenizer.chatTemplate, false).render({ messages: [{ role: 'user', content: 'hi' }] });
    expect(text).toBe('<user>hi0,1,2');
  });
});
