// The in-memory ResponseStore: round trips, isolation from caller mutation, and the reasoning key.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import { StoreError, type StoredResponse } from '../../../src/store/types.ts';

function sampleRecord(id = 'resp_1'): StoredResponse {
  return {
    id,
    response: { id, object: 'response', status: 'completed', output: [{ type: 'message', content: [] }] },
    history: [{ type: 'message', role: 'user', content: 'hi' }, { type: 'message', role: 'assistant', content: 'hello' }],
    inputItems: [{ type: 'message', role: 'user', content: 'hi' }],
    createdAt: 1_700_000_000,
  };
}

describe('createMemoryStore', () => {
  it('returns what was put, and undefined for unknown ids', async () => {
    const store = createMemoryStore();
    await store.put(sampleRecord());
    expect(await store.get('resp_1')).toEqual(sampleRecord());
    expect(await store.get('resp_missing')).toBeUndefined();
  });

  it('keeps stored state independent of objects passed in and handed out', async () => {
    const store = createMemoryStore();
    const record = sampleRecord();
    await store.put(record);
    record.response.status = 'mutated-after-put';
    record.history.push('extra');

    const first = await store.get('resp_1');
    expect(first).toEqual(sampleRecord());
    first!.response.status = 'mutated-after-get';
    first!.inputItems.length = 0;
    expect(await store.get('resp_1')).toEqual(sampleRecord());
  });

  it('updateResponse replaces only the response and rejects unknown ids', async () => {
    const store = createMemoryStore();
    await store.put(sampleRecord());
    const updated = { id: 'resp_1', object: 'response', status: 'cancelled' };
    await store.updateResponse('resp_1', updated);
    updated.status = 'mutated';

    const stored = await store.get('resp_1');
    expect(stored?.response).toEqual({ id: 'resp_1', object: 'response', status: 'cancelled' });
    expect(stored?.history).toEqual(sampleRecord().history);
    expect(stored?.inputItems).toEqual(sampleRecord().inputItems);

    const failure = await store.updateResponse('resp_missing', updated).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StoreError);
    expect((failure as StoreError).reason).toBe('failed');
    expect(await store.get('resp_missing')).toBeUndefined();
  });

  it('delete removes the record and reports whether it existed', async () => {
    const store = createMemoryStore();
    await store.put(sampleRecord());
    expect(await store.delete('resp_1')).toBe(true);
    expect(await store.get('resp_1')).toBeUndefined();
    expect(await store.delete('resp_1')).toBe(false);
  });

  it('rejects a record that cannot be cloned with StoreError and stores nothing', async () => {
    const store = createMemoryStore();
    const record = sampleRecord();
    (record.response as Record<string, unknown>).callback = () => undefined;
    const failure = await store.put(record).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StoreError);
    expect(await store.get('resp_1')).toBeUndefined();
  });

  it('makes one non-extractable AES-GCM 256 key and keeps it', async () => {
    const store = createMemoryStore();
    const [first, second] = await Promise.all([store.reasoningKey(), store.reasoningKey()]);
    expect(first).toBe(second);
    expect(await store.reasoningKey()).toBe(first);
    expect(first.extractable).toBe(false);
    expect(first.algorithm).toMatchObject({ name: 'AES-GCM', length: 256 });
    expect(first.usages.sort()).toEqual(['decrypt', 'encrypt']);
    await expect(crypto.subtle.exportKey('raw', first)).rejects.toThrow();

    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, first, new TextEncoder().encode('thought'));
    const opened = await crypto.subtle.decrypt({ name: 'AES-GCM', iv }, second, sealed);
    expect(new TextDecoder().decode(opened)).toBe('thought');
  });

  it('gives separate stores separate keys', async () => {
    const a = await createMemoryStore().reasoningKey();
    const b = await createMemoryStore().reasoningKey();
    expect(a).not.toBe(b);
  });
});
