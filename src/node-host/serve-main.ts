// `webgpu-responses serve`: the Responses handler and the WebGPU engine on Node (Dawn through the `webgpu`
// package), a file-backed store, an optional upstream for the models it cannot serve. tools/cli.mjs parses the
// command line, sets up Dawn and loads this module (the published package: its build, dist/node/serve-main.js, made
// by `vite build --mode node` with the shaders inlined; a development checkout: the sources through Vite, which
// resolves the shaders' `?raw` imports), then calls runServe.
import { appendFileSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { createWebGpuEngine, type WebGpuEngine } from '../engine/webgpu-engine.ts';
import type { ModelFileInput, ModelSource } from '../model/open-model.ts';
import { createResponsesHandler } from '../responses/handler.ts';
import type { ReasoningEventNames } from '../responses/stream-events.ts';
import { createFileStore, type FileStore } from '../store/file-store.ts';
import { createApp } from './app.ts';
import { listen, type NodeServer } from './server.ts';
import { createUpstream } from './upstream.ts';
import { fileSource } from './file-source.ts';

export interface ServeOptions {
  port: number;
  host: string;
  /** `FILE|DIR|URL` or `ID=FILE|DIR|URL`. */
  models: string[];
  apiKey?: string;
  upstream?: string;
  upstreamApiKey?: string;
  /** Default: ~/.webgpu-responses/store. */
  storeDir?: string;
  contextLength?: number;
  /** Origins of pages elsewhere that may call this server. */
  allowOrigins?: string[];
  /** Append every request (method, path, headers, body) as a JSON line to this file (client field surveys). */
  logRequests?: string;
  /** SSE keep-alive interval. */
  keepAliveMs?: number;
  /**
   * Reasoning text event names: `openai` (default, `response.reasoning_text.*`, as the `openai` SDK types them) or
   * `open-responses` (`response.reasoning.*`, the Open Responses names: its compliance suite rejects others).
   */
  reasoningEvents?: ReasoningEventNames;
}

export interface Served {
  url: string;
  server: NodeServer;
  engine: WebGpuEngine;
  store: FileStore;
  close(): Promise<void>;
}

export const DEFAULT_STORE_DIR = join(homedir(), '.webgpu-responses', 'store');

export interface ServeIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Starts serving; resolves once the models are loaded and the port listens (the URL is printed on `out`). */
export async function runServe(options: ServeOptions, gpu: GPU, io: ServeIo): Promise<Served> {
  if (options.models.length === 0 && !options.upstream) throw new Error('serve needs --model (one or more) or --upstream');
  const sources = await Promise.all(options.models.map((m) => modelSource(m, options.contextLength)));
  const progress = loadProgress(io.err);
  const engine = createWebGpuEngine({ gpu, models: sources, onLoadProgress: progress });
  for (const source of sources) {
    const start = performance.now();
    io.err(`loading ${source.id} …`);
    await engine.load(source.id);
    io.err(`loaded ${source.id} in ${Math.round(performance.now() - start)} ms`);
  }
  const local = new Set<string>();
  for (const m of await engine.listModels()) for (const id of [m.id, ...m.aliases]) local.add(id);

  const storeDir = resolve(options.storeDir ?? DEFAULT_STORE_DIR);
  const store = createFileStore({ dir: storeDir });
  await store.reasoningKey(); // opens (or makes) the directory and the key now: a bad --store fails at start
  const upstream = options.upstream
    ? createUpstream({ url: options.upstream, apiKey: options.upstreamApiKey, passThroughAuth: options.apiKey === undefined, store, log: io.err })
    : undefined;

  const server = await listen({ port: options.port, host: options.host }, ({ origin, aliases }) => {
    const allowedOrigins = [...aliases, ...(options.allowOrigins ?? [])];
    const handler = createResponsesHandler({ engine, store, origin, allowedOrigins, keepAliveMs: options.keepAliveMs, reasoningEvents: options.reasoningEvents });
    const logRequest = options.logRequests
      ? (entry: object) => appendFileSync(options.logRequests!, `${JSON.stringify({ at: new Date().toISOString(), ...entry })}\n`)
      : undefined;
    return createApp({ handler, apiKey: options.apiKey, upstream, localModels: async () => local, guard: { origin, allowedOrigins }, logRequest });
  });
  const url = server.origin;
  io.out(`webgpu-responses listening on ${url} (models: ${[...local].join(', ') || 'none'}${upstream ? `; upstream ${upstream.base}` : ''}; store ${storeDir})`);

  let closing: Promise<void> | null = null;
  return {
    url,
    server,
    engine,
    store,
    close() {
      closing ??= (async () => {
        await server.close();
        await store.close();
        await engine.dispose();
      })();
      return closing;
    },
  };
}

/** SIGINT/SIGTERM: stop accepting, abort running generations (recorded as cancelled), close the store, exit. */
export function exitOnSignals(served: Served, io: ServeIo): void {
  let count = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    count += 1;
    if (count > 1) {
      io.err(`${signal} again: exiting now`);
      process.exit(130);
    }
    io.err(`${signal}: shutting down (${served.server.inFlight} request(s) running)`);
    served.close().then(
      () => process.exit(0),
      (error: unknown) => {
        io.err(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** A `--model` argument as a model source: `[ID=]FILE|DIR|URL`; the id defaults to the file's or folder's name. */
export async function modelSource(arg: string, contextLength?: number): Promise<ModelSource> {
  const named = /^([A-Za-z0-9][A-Za-z0-9._:@-]*)=(.+)$/.exec(arg);
  const id = named ? named[1]! : undefined;
  const where = named ? named[2]! : arg;
  const extra = contextLength === undefined ? {} : { contextLength };
  if (/^https?:\/\//.test(where)) {
    const url = new URL(where);
    const parts = url.pathname.split('/').filter(Boolean);
    const isDir = where.endsWith('/');
    return { id: id ?? defaultId(parts[parts.length - 1] ?? url.hostname, parts[parts.length - 2], isDir), ...(isDir ? { hfDir: where } : { gguf: where }), ...extra };
  }
  const path = resolve(where);
  let stat;
  try {
    stat = statSync(path);
  } catch {
    throw new Error(`no such model file or directory: ${path}`);
  }
  if (stat.isDirectory()) {
    const files: Record<string, ModelFileInput> = {};
    for (const f of readdirSync(path)) if (statSync(join(path, f)).isFile()) files[f] = fileSource(join(path, f));
    return { id: id ?? basename(path), hfDir: files, ...extra };
  }
  return { id: id ?? defaultId(basename(path), basename(dirname(path)), false), gguf: fileSource(path), ...extra };
}

/** `toy-qwen3/model.gguf` -> `toy-qwen3`; `qwen3-0.6b-q8_0.gguf` -> `qwen3-0.6b-q8_0`. */
function defaultId(name: string, parent: string | undefined, isDir: boolean): string {
  if (isDir) return name;
  const stem = name.slice(0, name.length - extname(name).length) || name;
  return stem === 'model' && parent ? parent : stem;
}

function loadProgress(err: (line: string) => void): (modelId: string, loaded: number, total: number) => void {
  const last = new Map<string, number>();
  return (modelId, loaded, total) => {
    if (total <= 0) return;
    const tenth = Math.floor((loaded / total) * 10);
    if ((last.get(modelId) ?? -1) >= tenth) return;
    last.set(modelId, tenth);
    err(`loading ${modelId}: ${tenth * 10}% of ${(total / 1e6).toFixed(1)} MB`);
  };
}
