// The quota check before a model download: refused (507 insufficient_storage, a message with the sizes) when the
// bytes to fetch exceed what storage.estimate() says is free; allowed when they fit or when there is no estimate.
// (In Chromium the DevTools quota override is enforced on writes but not reflected by estimate(), so the e2e test
// sees the write-time refusal; this is the estimate path.)
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkQuota, ModelFileError } from '../../src/model-store/model-files.ts';

afterEach(() => vi.unstubAllGlobals());

function estimateOf(quota: number, usage: number): void {
  vi.stubGlobal('navigator', { storage: { estimate: async () => ({ quota, usage }) } });
}

describe('checkQuota', () => {
  it('refuses a file larger than the free space, saying how much is needed and free', async () => {
    estimateOf(100 << 20, 90 << 20);
    const error = await checkQuota(20 << 20, "model 'big'").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelFileError);
    expect(error).toMatchObject({ kind: 'insufficient_storage', code: 'insufficient_storage' });
    expect((error as Error).message).toBe(
      "Not enough storage for model 'big': it needs 20.0 MiB more but only 10.0 MiB is free for this site (quota 100.0 MiB). Delete other models or free disk space.",
    );
  });

  it('lets a file that fits through, and does not block where there is no estimate', async () => {
    estimateOf(100 << 20, 90 << 20);
    await expect(checkQuota(10 << 20, 'x')).resolves.toBeUndefined();
    vi.stubGlobal('navigator', {});
    await expect(checkQuota(1 << 40, 'x')).resolves.toBeUndefined();
  });
});
