// src/node-host/file-source.ts: a model file on disk read at offsets through a file handle, right past 4 GiB, where
// Node 20's fs.openAsBlob reports the size modulo 2^32 (a 12 GB gpt-oss-20b GGUF read as 3.5 GB and refused as a
// corrupt header). A sparse file of 4 GiB + 1 MiB (no disk space taken) with marks before and after 2^32; a GGUF
// at its start read through it, the file's size what the reader checks the tensors against.
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fileSource } from '../../../src/node-host/file-source.ts';
import { readGguf } from '../../../src/model/gguf.ts';
import { buildTestModel } from '../../../tools/make-test-model/build.ts';

const SIZE = 2 ** 32 + 2 ** 20;
const HIGH = 2 ** 32 + 12345;
let dir: string;
let path: string;
let ggufBytes = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'file-source-'));
  path = join(dir, 'big.gguf');
  const chunks = buildTestModel({ arch: 'llama', type: 'F32', layers: 1, hidden: 64, intermediate: 96, heads: 4, kvHeads: 2, seed: 3 }).files['model.gguf'];
  const fd = openSync(path, 'w');
  for (const c of chunks) ggufBytes += writeSync(fd, c);
  writeSync(fd, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), 0, 8, HIGH);
  closeSync(fd);
  await truncate(path, SIZE);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('FileSource', () => {
  test('its size is the file\'s, past 4 GiB', async () => {
    expect(await fileSource(path).size()).toBe(SIZE);
  });

  test('reads bytes past 2^32 and across it; a stream ends where asked', async () => {
    const source = fileSource(path);
    expect(Array.from(await source.read(HIGH - 2, 12))).toEqual([0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0]);
    expect((await source.read(2 ** 32 - 4, 8)).byteLength).toBe(8);
    let total = 0;
    const seen: number[] = [];
    for await (const chunk of source.stream(HIGH - (9 << 20), (9 << 20) + 4)) {
      total += chunk.byteLength;
      seen.push(...chunk.subarray(Math.max(0, chunk.byteLength - 4)));
    }
    expect(total).toBe((9 << 20) + 4);
    expect(seen.slice(-4)).toEqual([1, 2, 3, 4]);
  });

  test('a range past the end is refused naming the file; a bad range too', async () => {
    const source = fileSource(path);
    await expect(source.read(SIZE - 4, 8)).rejects.toThrow(/big\.gguf: truncated file: needs bytes up to 4296015876/);
    await expect(source.read(-1, 4)).rejects.toThrow(RangeError);
  });

  test('a GGUF at its start reads as the file it is', async () => {
    const file = await readGguf(fileSource(path));
    expect(file.metadata['general.architecture']).toBe('llama');
    expect(file.tensors.length).toBeGreaterThan(5);
    expect(Math.max(...file.tensors.map((t) => t.offset + t.byteLength))).toBeLessThanOrEqual(ggufBytes);
  });
});
