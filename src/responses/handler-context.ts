// What every /v1 route of the handler works over: the engine and the store, the clock and the ids, the sealers,
// and the runs in flight. createResponsesHandler (handler.ts) makes one per handler; routes take it as their
// first argument, so each route is a plain function over explicit state.
import type { Engine } from '../engine/types.ts';
import type { ResponseStore } from '../store/types.ts';
import type { ModelDirectory } from './model-routes.ts';
import type { IdSource, ReasoningEventNames } from './stream-events.ts';
import type { Sealers } from './translate.ts';

/** A background response that is running: its abort and its end. */
export interface BackgroundRun {
  controller: AbortController;
  finished: Promise<void>;
}

export interface HandlerContext {
  readonly engine: Engine;
  readonly store: ResponseStore;
  /** The models the /v1/models routes show (the host's, or the engine's). */
  readonly models: ModelDirectory;
  /** Unix time in seconds (for `created_at`). */
  readonly now: () => number;
  readonly ids: IdSource;
  /** Interval of SSE keep-alive comments while a stream is open. */
  readonly keepAliveMs: number;
  readonly reasoningEvents: ReasoningEventNames;
  /** During a long prefill, a `response.in_progress` event at most this often (ms). */
  readonly prefillProgressMs: number;
  readonly sealers: Sealers;
  /** Background responses running now, by id (polled by GET, stopped by cancel and DELETE). */
  readonly background: Map<string, BackgroundRun>;
  /**
   * Requests whose generation is running, held until it ends: on Node (undici) a Request's signal follows the
   * host's signal only while the Request object lives, so an abort would be lost once it was garbage-collected.
   */
  readonly running: Set<Request>;
}
