// A FIFO that runs generation requests one at a time (one GPU, one KV cache). `acquire` resolves with a
// release function when the caller's turn comes; a caller whose signal aborts while it waits leaves the queue
// (its promise rejects with the signal's reason) without ever holding the turn.

interface Waiter {
  grant: () => void;
  reject: (reason: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class RequestQueue {
  private busy = false;
  private readonly waiting: Waiter[] = [];

  /** Requests waiting for their turn (not counting the one running). */
  get pending(): number {
    return this.waiting.length;
  }

  /** True while a request holds the turn. */
  get running(): boolean {
    return this.busy;
  }

  /** Waits for the turn; resolves with the function that gives it back (call it exactly once, in a finally). */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<() => void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => resolve(this.releaser()),
        reject,
        signal,
      };
      if (!this.busy) {
        this.busy = true;
        waiter.grant();
        return;
      }
      if (signal) {
        waiter.onAbort = () => {
          const index = this.waiting.indexOf(waiter);
          if (index >= 0) this.waiting.splice(index, 1);
          reject(abortReason(signal));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiting.push(waiter);
    });
  }

  /** Runs `task` in turn and gives the turn back when it settles. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await task();
    } finally {
      release();
    }
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (!next) {
        this.busy = false;
        return;
      }
      if (next.signal && next.onAbort) next.signal.removeEventListener('abort', next.onAbort);
      next.grant();
    };
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The request was aborted', 'AbortError');
}
