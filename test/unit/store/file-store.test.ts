// The file-backed ResponseStore: round trips, restarts (a new instance over the same directory), a crash mid-write
// (a temporary file left behind) never read as a record, and the reasoning key kept across restarts (0600,
// non-extractable: what one instance seals the next one opens).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAesGcmSealer } from '../../../src/responses/reasoning-seal.ts';
import { createFileStore } from '../../../src/store/file-store.ts';
import { StoreError, type StoredResponse } from '../../../src/store/types.ts';

function sampleRecord(id = 'resp_1', status = 'completed'): StoredResponse {
  return {
    id,
    response: { id, object: 'response', status, output: [{ type: 'message', content: [{ type: 'output_text', text: 'héllo ✓' }] }] },
    history: [{ type: 'message', role: 'user', content: 'hi' }, { type: 'message', role: 'assistant', content: 'hello' }],
    inputItems: [{ type: 'message', role: 'user', content: 'hi' }],
    createdAt: 1_700_000_000,
  };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'file-store-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('createFileStore', () => {
  it('returns what was put, undefined for unknown ids, and keeps stored state apart from caller objects', async () => {
    const store = createFileStore({ dir });
    const record = sampleRecord();
    await store.put(record);
    record.response.status = 'mutated-after-put';
    const got = await store.get('resp_1');
    expect(got).toEqual(sampleRecord());
    got!.history.length = 0;
    expect(await store.get('resp_1')).toEqual(sampleRecord());
    expect(await store.get('resp_missing')).toBeUndefined();
  });

  it('a new instance over the same directory (a restart) sees every record, update and delete', async () => {
    const first = createFileStore({ dir });
    await first.put(sampleRecord('resp_a'));
    await first.put(sampleRecord('resp_b'));
    await first.updateResponse('resp_a', { id: 'resp_a', object: 'response', status: 'cancelled' });
    expect(await first.delete('resp_b')).toBe(true);
    await first.close();

    const second = createFileStore({ dir });
    const a = await second.get('resp_a');
    expect(a?.response).toEqual({ id: 'resp_a', object: 'response', status: 'cancelled' });
    expect(a?.history).toEqual(sampleRecord().history);
    expect(a?.inputItems).toEqual(sampleRecord().inputItems);
    expect(a?.createdAt).toBe(1_700_000_000);
    expect(await second.get('resp_b')).toBeUndefined();
    expect(await second.delete('resp_b')).toBe(false);
  });

  it('updateResponse rejects an unknown id with StoreError', async () => {
    const store = createFileStore({ dir });
    const failure = await store.updateResponse('resp_missing', { status: 'x' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(StoreError);
    expect((failure as StoreError).reason).toBe('failed');
  });

  it('a crash mid-write leaves no half record: the temporary file is never read and the next instance removes it', async () => {
    const first = createFileStore({ dir });
    await first.put(sampleRecord('resp_old', 'in_progress'));
    await first.close();
    const records = join(dir, 'responses');
    const full = JSON.stringify(sampleRecord('resp_old', 'completed'));
    // What a process killed between write and rename leaves: a temporary file with part of the new record, and
    // one for a record that never existed.
    writeFileSync(join(records, 'resp_old.json.4242.abcdef.tmp'), full.slice(0, full.length >> 1));
    writeFileSync(join(records, 'resp_new.json.4242.123456.tmp'), JSON.stringify(sampleRecord('resp_new')).slice(0, 40));

    const second = createFileStore({ dir });
    expect((await second.get('resp_old'))?.response.status).toBe('in_progress');
    expect(await second.get('resp_new')).toBeUndefined();
    expect(readdirSync(records).sort()).toEqual(['resp_old.json']);
  });

  it('writes leave no temporary files, record files are 0600', async () => {
    const store = createFileStore({ dir });
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.put(sampleRecord(`resp_${i}`))));
    const names = readdirSync(join(dir, 'responses'));
    expect(names).toHaveLength(20);
    expect(names.every((n) => n.endsWith('.json'))).toBe(true);
    expect(statSync(join(dir, 'responses', 'resp_3.json')).mode & 0o777).toBe(0o600);
  });

  it('concurrent updates of one id do not lose the record', async () => {
    const store = createFileStore({ dir });
    await store.put(sampleRecord('resp_c'));
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.updateResponse('resp_c', { id: 'resp_c', n: i })));
    const got = await store.get('resp_c');
    expect(got?.response).toEqual({ id: 'resp_c', n: 9 });
    expect(got?.history).toEqual(sampleRecord().history);
  });

  it('ids that are not plain file names are stored under a hash, not as paths', async () => {
    const store = createFileStore({ dir });
    const odd = '../../escape/resp x';
    await store.put(sampleRecord(odd));
    expect((await store.get(odd))?.id).toBe(odd);
    const names = readdirSync(join(dir, 'responses'));
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^h_[0-9a-f]{64}\.json$/);
    expect(readdirSync(dir).sort()).toEqual(['responses']);
  });

  it('a corrupt record file is a StoreError, not a crash or a silent miss', async () => {
    const store = createFileStore({ dir });
    await store.put(sampleRecord('resp_bad'));
    writeFileSync(join(dir, 'responses', 'resp_bad.json'), '{"id":"resp_bad",');
    const failure = await store.get('resp_bad').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(StoreError);
  });

  it('the reasoning key is kept in a 0600 file, non-extractable, and what one instance seals the next one opens', async () => {
    const first = createFileStore({ dir });
    const key = await first.reasoningKey();
    expect(key.extractable).toBe(false);
    expect(key.algorithm).toMatchObject({ name: 'AES-GCM', length: 256 });
    expect(await first.reasoningKey()).toBe(key);
    const keyPath = join(dir, 'reasoning-key.bin');
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyPath)).toHaveLength(32);
    const sealed = await createAesGcmSealer(() => first.reasoningKey(), { purpose: 'reasoning' }).seal('thinking about 2 + 3');
    await first.close();

    const second = createFileStore({ dir });
    const opened = await createAesGcmSealer(() => second.reasoningKey(), { purpose: 'reasoning' }).open(sealed, 'input');
    expect(opened).toBe('thinking about 2 + 3');

    // Another directory has another key: the sealed text does not open there.
    const otherDir = mkdtempSync(join(tmpdir(), 'file-store-other-'));
    try {
      const other = createFileStore({ dir: otherDir });
      const result = await createAesGcmSealer(() => other.reasoningKey(), { purpose: 'reasoning' })
        .open(sealed, 'input')
        .then(
          (v) => ({ ok: true, v }),
          () => ({ ok: false }),
        );
      expect(result.ok).toBe(false);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('two instances making the key at once agree on one key', async () => {
    const a = createFileStore({ dir });
    const b = createFileStore({ dir });
    const [ka, kb] = await Promise.all([a.reasoningKey(), b.reasoningKey()]);
    const sealed = await createAesGcmSealer(() => Promise.resolve(ka), { purpose: 'reasoning' }).seal('x');
    expect(await createAesGcmSealer(() => Promise.resolve(kb), { purpose: 'reasoning' }).open(sealed, 'input')).toBe('x');
  });

  it('a closed store refuses further calls', async () => {
    const store = createFileStore({ dir });
    await store.close();
    const failure = await store.get('resp_1').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(StoreError);
    expect((failure as StoreError).reason).toBe('unavailable');
  });
});
