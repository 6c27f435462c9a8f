// The incremental SHA-256 used to check downloaded model files equals Node's, for any split of the input.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Sha256, sha256OfBlob } from '../../src/model-store/sha256.ts';

function bytes(n: number, seed: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) out[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  return out;
}

describe('Sha256', () => {
  it('equals node:crypto for lengths around the block and padding edges, fed in uneven pieces', () => {
    for (const n of [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 70_001]) {
      const input = bytes(n, n + 1);
      const expected = createHash('sha256').update(input).digest('hex');
      expect(new Sha256().update(input).hex()).toBe(expected);
      const pieces = new Sha256();
      for (let at = 0, step = 1; at < n; at += step, step = (step * 7 + 3) % 97 + 1) pieces.update(input.subarray(at, at + step));
      expect(pieces.hex()).toBe(expected);
    }
  });

  it('hashes a Blob slice by slice', async () => {
    const input = bytes(300_000, 9);
    expect(await sha256OfBlob(new Blob([input]), 4096 + 13)).toBe(createHash('sha256').update(input).digest('hex'));
  });
});
