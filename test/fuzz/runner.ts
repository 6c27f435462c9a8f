// Runs fuzz cases (cases.ts) one after another against the Responses handler over the fake engine and the memory
// store, and checks what must hold for every one of them:
// - no 5xx for client input (only a case whose script throws an engine fault may get one);
// - every error is OpenAI-shaped JSON with a bounded message, never a stream;
// - every stream has exactly one terminal event (response.completed / .incomplete / .failed), last, with
//   sequence numbers 0..n-1 and no bare `error` event; `response.failed` only for an engine fault;
// - a rejected request (4xx) writes nothing to the store (no put, update or delete);
// - a request from another site is a 403 and reaches no engine;
// - every request answers within a time bound (no hang), background runs included (polled to their end).
// Figures are kept by category: statuses, streams, terminal events, time.
import { createResponsesHandler, type ResponsesHandler } from '../../src/responses/handler.ts';
import type { Engine, GenerateRequest } from '../../src/engine/types.ts';
import { createMemoryStore } from '../../src/store/memory-store.ts';
import type { ResponseStore } from '../../src/store/types.ts';
import { FakeEngine, type FakeScript } from '../support/fake-engine.ts';
import type { Category, FuzzCase } from './cases.ts';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
/** A request (and its background run) must be answered within this. */
const HANG_MS = 15_000;

export interface Violation {
  kind: 'server-error' | 'bad-error-shape' | 'stream-terminal' | 'stream-error-event' | 'failed-without-fault' | 'record-for-rejected' | 'cross-site-served' | 'hang' | 'threw';
  category: Category;
  detail: string;
  request: string;
}

export interface CategoryFigures {
  requests: number;
  statuses: Record<string, number>;
  streams: number;
  streamsWithOneTerminal: number;
  terminals: Record<string, number>;
  backgroundRuns: number;
  storeWritesByRejected: number;
  totalMs: number;
  maxMs: number;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  elapsedMs: number;
  violations: Record<Violation['kind'], number>;
  firstViolations: Violation[];
  byCategory: Record<string, CategoryFigures>;
  totals: {
    serverErrorsForClientInput: number;
    streamsWithoutExactlyOneTerminal: number;
    recordsForRejectedRequests: number;
    engineFaults5xx: number;
    status4xx: number;
    status2xx: number;
  };
}

/** The store, counting the writes each request makes. */
function countingStore(): ResponseStore & { writes: number } {
  const inner = createMemoryStore();
  const store = {
    writes: 0,
    put: async (record: Parameters<ResponseStore['put']>[0]) => {
      store.writes++;
      return inner.put(record);
    },
    get: (id: string) => inner.get(id),
    updateResponse: async (id: string, response: Parameters<ResponseStore['updateResponse']>[1]) => {
      store.writes++;
      return inner.updateResponse(id, response);
    },
    delete: async (id: string) => {
      const deleted = await inner.delete(id);
      if (deleted) store.writes++;
      return deleted;
    },
    reasoningKey: () => inner.reasoningKey(),
  };
  return store;
}

/** An engine whose script is set per case (each case's generation plays its own script), or a real engine. */
class CaseEngine implements Engine {
  current: Engine = new FakeEngine();
  generated = 0;
  /** A real engine plays no scripts and never faults on purpose; its answers are capped at `maxTokens`. */
  constructor(private readonly real: { engine: Engine; maxTokens: number } | null = null) {
    if (real) this.current = real.engine;
  }
  play(script: FakeScript): void {
    if (!this.real) this.current = new FakeEngine([script]);
  }
  listModels() {
    return this.current.listModels();
  }
  tokenizePrompt(req: Parameters<Engine['tokenizePrompt']>[0]) {
    return this.current.tokenizePrompt(req);
  }
  checkConstraint(model: string, constraint: Parameters<Engine['checkConstraint']>[1]) {
    return this.current.checkConstraint(model, constraint);
  }
  generate(req: GenerateRequest) {
    this.generated++;
    return this.current.generate(this.real ? { ...req, maxTokens: Math.min(req.maxTokens, this.real.maxTokens) } : req);
  }
}

export interface RunOptions {
  /** Run against this engine (e.g. the WebGPU engine on Dawn serving models `fake` and `fake-qwen3`) instead of
   * the scripted fake: engine-fault cases then fault only if the engine does. */
  engine?: Engine;
  /** With `engine`: the most tokens a generation may take (default 8). */
  maxTokens?: number;
  /** A request (and its background run) must be answered within this (default HANG_MS). */
  hangMs?: number;
}

interface Known {
  ids: string[];
  blobs: string[];
}

function fill(text: string, c: FuzzCase, known: Known): string {
  const id = known.ids.length > 0 ? known.ids[c.pick % known.ids.length]! : 'resp_none';
  const blob = known.blobs.length > 0 ? known.blobs[c.pick % known.blobs.length]! : 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
  const at = Math.floor(blob.length / 2);
  const tampered = blob.slice(0, at) + (blob[at] === 'A' ? 'B' : 'A') + blob.slice(at + 1);
  let out = text.replaceAll('$PREV', id).replaceAll('$TAMPERED', tampered).replaceAll('$BLOB', blob);
  if (c.deepLevels > 0) out = out.replaceAll('"$DEEP"', `${'['.repeat(c.deepLevels)}1${']'.repeat(c.deepLevels)}`);
  return out;
}

function emptyFigures(): CategoryFigures {
  return { requests: 0, statuses: {}, streams: 0, streamsWithOneTerminal: 0, terminals: {}, backgroundRuns: 0, storeWritesByRejected: 0, totalMs: 0, maxMs: 0 };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([promise, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)))]).finally(() => clearTimeout(timer));
}

function collectBlobs(value: unknown, known: Known): void {
  const output = (value as { output?: { encrypted_content?: unknown }[] } | null)?.output;
  if (!Array.isArray(output)) return;
  for (const item of output) {
    if (typeof item?.encrypted_content === 'string' && item.encrypted_content !== '' && known.blobs.length < 50) known.blobs.push(item.encrypted_content);
  }
}

export async function runCases(cases: FuzzCase[], seed: number, onProgress?: (done: number) => void, options: RunOptions = {}): Promise<FuzzReport> {
  const engine = new CaseEngine(options.engine ? { engine: options.engine, maxTokens: options.maxTokens ?? 8 } : null);
  const hangMs = options.hangMs ?? HANG_MS;
  const store = countingStore();
  let n = 0;
  const handler: ResponsesHandler = createResponsesHandler({ engine, store, now: () => 1_700_000_000, ids: (prefix) => `${prefix}_${(++n).toString(16).padStart(8, '0')}`, keepAliveMs: 60_000 });
  const known: Known = { ids: [], blobs: [] };
  const violations: Violation[] = [];
  const counts = {} as Record<Violation['kind'], number>;
  const byCategory: Record<string, CategoryFigures> = {};
  const totals = { serverErrorsForClientInput: 0, streamsWithoutExactlyOneTerminal: 0, recordsForRejectedRequests: 0, engineFaults5xx: 0, status4xx: 0, status2xx: 0 };
  const started = performance.now();

  for (const [index, c] of cases.entries()) {
    const figures = (byCategory[c.category] ??= emptyFigures());
    figures.requests++;
    const path = fill(c.path, c, known);
    const body = c.body === undefined ? undefined : fill(c.body, c, known);
    const summary = `${c.method} /v1/${path.slice(0, 120)} ${JSON.stringify(c.headers)} ${body === undefined ? '' : body.slice(0, 300)}${body !== undefined && body.length > 300 ? '…' : ''}`;
    const flag = (kind: Violation['kind'], detail: string): void => {
      counts[kind] = (counts[kind] ?? 0) + 1;
      if (violations.length < 20) violations.push({ kind, category: c.category, detail, request: summary });
    };
    engine.play(c.script);
    const generatedBefore = engine.generated;
    const writesBefore = store.writes;
    const t0 = performance.now();
    let request: Request;
    try {
      request = new Request(`http://local/v1/${path}`, { method: c.method, headers: c.headers, body: c.method === 'GET' || c.method === 'HEAD' ? undefined : body });
    } catch {
      // Not a request a client could send (the fetch API refuses it); not the handler's concern.
      figures.statuses.unsendable = (figures.statuses.unsendable ?? 0) + 1;
      continue;
    }
    try {
      const answered = await withTimeout(
        (async () => {
          const response = await handler(request);
          return { response, text: await response.text() };
        })(),
        hangMs,
      );
      if (answered === 'timeout') {
        flag('hang', `no answer within ${hangMs} ms`);
        continue;
      }
      const { response, text } = answered;
      const status = response.status;
      figures.statuses[status] = (figures.statuses[status] ?? 0) + 1;
      const type = response.headers.get('content-type') ?? '';
      if (status >= 500) {
        if (c.fault) totals.engineFaults5xx++;
        else {
          totals.serverErrorsForClientInput++;
          flag('server-error', `${status} ${text.slice(0, 300)}`);
        }
      } else if (status >= 400) totals.status4xx++;
      else totals.status2xx++;

      if (status >= 400) {
        let shaped = false;
        try {
          const error = (JSON.parse(text) as { error?: Record<string, unknown> }).error;
          shaped =
            type.startsWith('application/json') &&
            typeof error?.message === 'string' &&
            error.message.length <= 1_000 &&
            typeof error.type === 'string' &&
            (error.param === null || typeof error.param === 'string') &&
            (error.code === null || typeof error.code === 'string');
        } catch {
          shaped = false;
        }
        if (!shaped) flag('bad-error-shape', `${status} ${type} ${text.slice(0, 200)}`);
        if (status < 500 && store.writes !== writesBefore) {
          totals.recordsForRejectedRequests++;
          figures.storeWritesByRejected++;
          flag('record-for-rejected', `${status} after ${store.writes - writesBefore} store writes`);
        }
      }
      if (c.crossSite && (status !== 403 || engine.generated !== generatedBefore)) flag('cross-site-served', `${status}, ${engine.generated - generatedBefore} generations`);

      if (type.startsWith('text/event-stream')) {
        figures.streams++;
        const events = text
          .split('\n\n')
          .filter((frame) => frame.length > 0 && !frame.startsWith(':'))
          .map((frame) => ({ name: /^event: (.*)$/m.exec(frame)?.[1] ?? null, data: JSON.parse(/^data: (.*)$/m.exec(frame)?.[1] ?? 'null') as { type?: string; sequence_number?: number; response?: { id?: string } } }));
        const terminals = events.filter((e) => TERMINAL.has(e.data?.type ?? ''));
        if (events.some((e) => e.name === 'error' || e.data?.type === 'error')) flag('stream-error-event', text.slice(-300));
        const ordered = events.every((e, i) => e.data?.sequence_number === i);
        if (terminals.length === 1 && TERMINAL.has(events.at(-1)?.data?.type ?? '') && ordered) figures.streamsWithOneTerminal++;
        else {
          totals.streamsWithoutExactlyOneTerminal++;
          flag('stream-terminal', `${terminals.length} terminal events, last ${String(events.at(-1)?.data?.type)}, ordered ${ordered}`);
        }
        for (const t of terminals) figures.terminals[t.data.type!] = (figures.terminals[t.data.type!] ?? 0) + 1;
        const last = events.at(-1)?.data as { type?: string; response?: unknown } | undefined;
        if (last?.type === 'response.failed' && !c.fault) flag('failed-without-fault', JSON.stringify(last.response).slice(0, 300));
        const id = events[0]?.data?.response?.id;
        if (typeof id === 'string' && (await store.get(id))) known.ids.push(id);
        if (last?.response) collectBlobs(last.response, known);
      } else if (status === 200 && type.startsWith('application/json')) {
        const value = JSON.parse(text) as { id?: string; object?: string; status?: string; background?: boolean };
        if (value.object === 'response' && typeof value.id === 'string') {
          if (value.background === true && (value.status === 'queued' || value.status === 'in_progress')) {
            figures.backgroundRuns++;
            const final = await withTimeout(pollBackground(handler, value.id), hangMs);
            if (final === 'timeout') flag('hang', `background run ${value.id} did not end`);
            else if (final === 'failed' && !c.fault) flag('failed-without-fault', `background run ${value.id}`);
          }
          // (A GET may return a response stored as failed by an earlier fault case: only creation counts.)
          if (value.status === 'failed' && !c.fault && c.method === 'POST' && path === 'responses') flag('failed-without-fault', text.slice(0, 300));
          if (await store.get(value.id)) known.ids.push(value.id);
          collectBlobs(value, known);
        }
      }
      if (known.ids.length > 200) known.ids.splice(0, 100);
    } catch (error) {
      flag('threw', error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : String(error));
    } finally {
      const ms = performance.now() - t0;
      figures.totalMs += ms;
      figures.maxMs = Math.max(figures.maxMs, ms);
    }
    onProgress?.(index + 1);
  }
  return {
    seed,
    requests: cases.length,
    elapsedMs: Math.round(performance.now() - started),
    violations: counts,
    firstViolations: violations,
    byCategory,
    totals,
  };
}

async function pollBackground(handler: ResponsesHandler, id: string): Promise<string> {
  for (;;) {
    const response = await handler(new Request(`http://local/v1/responses/${id}`));
    const value = (await response.json()) as { status?: string };
    if (value.status !== 'queued' && value.status !== 'in_progress') return String(value.status);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
