import { describe, expect, test } from 'vitest';
import { RequestQueue } from '../../src/engine/request-queue.ts';

describe('RequestQueue', () => {
  test('runs tasks one at a time in arrival order', async () => {
    const queue = new RequestQueue();
    const log: string[] = [];
    let active = 0;
    const task = (name: string, ms: number) =>
      queue.run(async () => {
        active++;
        expect(active).toBe(1);
        log.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`end ${name}`);
        active--;
        return name;
      });
    const results = await Promise.all([task('a', 20), task('b', 1), task('c', 5)]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(queue.running).toBe(false);
  });

  test('an aborted waiting request leaves the queue and never runs', async () => {
    const queue = new RequestQueue();
    const release = await queue.acquire();
    const controller = new AbortController();
    let ran = false;
    const waiting = queue.run(async () => {
      ran = true;
    }, controller.signal);
    const after = queue.run(async () => 'after');
    expect(queue.pending).toBe(2);
    controller.abort(new Error('client went away'));
    await expect(waiting).rejects.toThrow('client went away');
    expect(queue.pending).toBe(1);
    release();
    await expect(after).resolves.toBe('after');
    expect(ran).toBe(false);
  });

  test('an already aborted signal is rejected at once; a failing task releases the turn', async () => {
    const queue = new RequestQueue();
    const controller = new AbortController();
    controller.abort();
    await expect(queue.acquire(controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
    const withReason = new AbortController();
    withReason.abort(new Error('tab closed'));
    await expect(queue.acquire(withReason.signal)).rejects.toThrow('tab closed');
    expect(queue.pending).toBe(0);
    await expect(queue.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(queue.run(async () => 1)).resolves.toBe(1);
  });
});
