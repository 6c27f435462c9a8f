// The sealer alone: round trips, purposes kept apart, and every way a blob can be bad is a 400 naming the item.
import { describe, expect, it } from 'vitest';
import { DomainError, toApiError, type ApiErrorBody } from '../../../src/responses/errors.ts';
import { createAesGcmSealer, DEFAULT_MAX_SEALED_BYTES } from '../../../src/responses/reasoning-seal.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';

const store = createMemoryStore();
const reasoning = createAesGcmSealer(() => store.reasoningKey(), { purpose: 'reasoning' });
const compaction = createAesGcmSealer(() => store.reasoningKey(), { purpose: 'compaction' });

/** The rejection as the wire answers it: its status and error body fields. */
async function rejection(promise: Promise<unknown>): Promise<ApiErrorBody['error'] & { status: number }> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const { status, body } = toApiError(error);
    return { status, ...body.error };
  }
  throw new Error('expected a rejection');
}

describe('reasoning sealer', () => {
  it('round-trips any text, with a fresh IV each time', async () => {
    const text = 'plan: "quote" \\ é 😀\n'.repeat(50);
    const a = await reasoning.seal(text);
    const b = await reasoning.seal(text);
    expect(a).not.toBe(b);
    expect(await reasoning.open(a, 'p')).toBe(text);
    expect(atob(a).charCodeAt(0)).toBe(1);
  });

  it('keeps purposes apart: a reasoning blob does not open as a compaction', async () => {
    const blob = await reasoning.seal('x');
    const error = await rejection(compaction.open(blob, 'input[0].encrypted_content'));
    expect(error).toMatchObject({ status: 400, param: 'input[0].encrypted_content', code: 'invalid_encrypted_content' });
  });

  it('refuses a blob over the bound before decoding it, and will not seal over it', async () => {
    const limit = Math.ceil((1 + 12 + DEFAULT_MAX_SEALED_BYTES + 16) / 3) * 4;
    const error = await rejection(reasoning.open('A'.repeat(limit + 4), 'input[3].encrypted_content'));
    expect(error.message).toBe("The encrypted reasoning in 'input[3].encrypted_content' is larger than this server accepts (1048576 bytes).");
    await expect(reasoning.seal('x'.repeat(DEFAULT_MAX_SEALED_BYTES + 1))).rejects.toThrow(/over the 1048576-byte bound/);
  });

  it('a short, truncated or non-base64 blob is a 400', async () => {
    const blob = await reasoning.seal('some reasoning');
    for (const bad of ['', 'AAAA', blob.slice(0, -8), '%%%%']) {
      const error = await rejection(reasoning.open(bad, 'x'));
      expect(error.status).toBe(400);
    }
  });
});
