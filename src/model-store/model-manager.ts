// The model manager: which models exist (the app's catalog.json with the bundled model, the real models of
// remote-catalog.ts, and files the user imported), which are stored, downloads with progress and resume, deletes
// and imports. It is the service worker's ModelDirectory (src/responses/model-routes.ts): the one /v1 route table
// (handler.ts) answers the model routes from it, and it gives the runtime the engine's model sources.
//
// Routes (errors are DomainErrors, answered by the one error edge, src/responses/errors.ts):
//   GET    /v1/models                  OpenAI list of the models requests can name: bundled, downloaded, imported
//                                      (one row per id and per alias), each a ManagedModel (extra fields below).
//   GET    /v1/models/catalog          { object: 'list', data: ManagedModel[], storage: { usage, quota, persisted } }:
//                                      every model known, also those not downloaded (status 'available').
//   GET    /v1/models/{id}             one ManagedModel (404 when unknown).
//   POST   /v1/models/{id}/download    starts (or joins, or resumes) the download; 507 `insufficient_storage` when
//                                      it does not fit the quota, else 200 `text/event-stream` of ModelEvents
//                                      (`data: {...}` frames) ending with model.download.completed or .failed.
//                                      Closing the stream does not stop the download; DELETE does. For an id that
//                                      is not in the catalog, a JSON body { url, bytes?, sha256?, license?,
//                                      description? } adds it (a download by URL; kept, and resumable, like the rest).
//   DELETE /v1/models/{id}             stops a download and deletes the stored file(s) (a bundled model is stored
//                                      again on next use; an imported one is gone): { id, object: 'model', deleted }.
//   POST   /v1/models/import?name=<file name>[&id=<id>]   body = the GGUF file's bytes (a File/Blob as fetch body);
//                                      stores it, checks it, registers it: 201 with the ManagedModel. 409 when the
//                                      id exists, 400 when it is not GGUF, 507 when it does not fit.
// Downloads resume: parts already stored stay (src/model-store/model-files.ts), a cut connection is retried from there, and
// a download the worker did not finish (it was stopped) continues on the next POST .../download.
// Every download's progress is also broadcast on BroadcastChannel `modelEventsChannelName` (all tabs see it).
import { remoteCatalog } from './remote-catalog';
import { readModelCatalog, type CatalogEntry } from './model-catalog';
import { StoredModelFileSource } from './model-cache';
import { checkQuota, ModelFileError, ModelFileStore, type FileWriteProgress } from './model-files';
import type { VerifiedHeader } from './gguf-header-check';
import type { ModelSource } from '../model/open-model.ts';
import { z } from 'zod';
import { DomainError } from '../common/engine-error';
import { toApiError, type ApiErrorBody } from '../responses/errors';
import type { ModelDirectory, ModelObject, ModelStatus } from '../responses/model-routes';

export const modelEventsChannelName = 'webgpu-responses-models';

export type { ModelStatus };

/** A model as the routes show it: the ModelObject every host lists, plus what the UI needs. */
export interface ManagedModel extends ModelObject {
  /** Where it comes from: shipped with the app, downloadable by URL, or a local file the user imported. */
  source: 'bundled' | 'catalog' | 'imported';
  bytes: number;
  license: string;
  description: string;
  /** The download URL (catalog and bundled models). */
  url?: string;
  /** While downloading: bytes stored so far of `total`. */
  progress?: { loaded: number; total: number };
  /** Not downloading and not complete, but part of the file is stored: a download continues from here. */
  stored_bytes?: number;
  /** The GPU memory the model needs (the catalog's minGpuMemoryBytes), in bytes. */
  min_gpu_memory_bytes?: number;
  /** The catalog's architecture and expected chat format (what the entry says before any download). */
  architecture?: string;
  expected_format?: string;
  /** What the header check verified before the download (architecture, tensor types, chat format); stored files only. */
  verified?: VerifiedHeader;
}

export type ModelEvent =
  | { type: 'model.download.progress'; model: string; file: string; loaded: number; total: number; resumed_from: number }
  | { type: 'model.download.completed'; model: string; file: string; bytes: number }
  | { type: 'model.download.failed'; model: string; file: string; error: ApiErrorBody['error'] };

interface KnownModel {
  entry: CatalogEntry;
  source: ManagedModel['source'];
  /** Store key of its file. */
  key: string;
  /** Absolute download URL (none for imports). */
  url?: string;
  /** Unix seconds (imports: when stored). */
  created: number;
}

interface Download {
  controller: AbortController;
  done: Promise<void>;
  last: ModelEvent | null;
  listeners: Set<(event: ModelEvent) => void>;
}

export interface ModelManager {
  /** The models for the /v1/models routes (`loadedIds`: the ids on the GPU now), with the management routes. */
  directory(loadedIds: () => Promise<Set<string>>): ModelDirectory;
  /** The models the engine should serve now. */
  engineSources(): Promise<ModelSource[]>;
  /** Bumped whenever the set of usable models changes (the runtime then rebuilds its engine). */
  readonly version: number;
}

/** Store keys of models the user added (an imported file, or a download by URL): `user:<id>`. */
const userPrefix = 'user:';

/** What is kept about a model the user added (the store's description of its file). */
const userModelSchema = z.object({
  id: z.string(),
  url: z.string().url().optional(),
  fileName: z.string().optional(),
  bytes: z.number().int().nonnegative().optional(),
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/).optional(),
  license: z.string(),
  description: z.string(),
  created: z.number().int(),
});
type UserModel = z.infer<typeof userModelSchema>;

/** The optional JSON body of POST /v1/models/{id}/download: a model that is not in the catalog, by URL. */
const downloadBodySchema = z.object({
  url: z.string().url(),
  bytes: z.number().int().nonnegative().optional(),
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/).optional(),
  license: z.string().default('unknown'),
  description: z.string().optional(),
});

export interface ModelManagerOptions {
  /** Size of the stored parts of model files (default 4 MiB). */
  partBytes?: number;
  /** Every download event (also broadcast on `modelEventsChannelName`). */
  onEvent?: (event: ModelEvent) => void;
}

export function createModelManager(scope: string, options: ModelManagerOptions = {}): ModelManager {
  return new StoredModels(scope, options);
}

class StoredModels implements ModelManager {
  private readonly store: ModelFileStore;
  private readonly channel: BroadcastChannel | null;
  private readonly downloads = new Map<string, Download>();
  private changes = 0;
  /** The app's catalog, read once per worker life (a new app version comes with a new worker). */
  private appCatalog: Promise<CatalogEntry[]> | null = null;

  constructor(
    private readonly scope: string,
    private readonly options: ModelManagerOptions,
  ) {
    this.store = new ModelFileStore(scope, options.partBytes);
    this.channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(modelEventsChannelName) : null;
  }

  get version(): number {
    return this.changes;
  }

  directory(loadedIds: () => Promise<Set<string>>): ModelDirectory {
    // Every failure leaves as a DomainError (a stopped download, an unexpected one): see asDomainError.
    const guarded = <A extends unknown[], R>(run: (...args: A) => Promise<R>) => (...args: A): Promise<R> => run(...args).catch((e: unknown) => Promise.reject(asDomainError(e)));
    return {
      list: guarded(() => this.listUsable(loadedIds)),
      get: guarded(async (id: string) => this.describe(await this.find(id), await loadedIds())),
      manage: {
        catalog: guarded(() => this.listCatalog(loadedIds)),
        download: guarded((id: string, request: Request) => this.download(id, request)),
        remove: guarded((id: string) => this.remove(id)),
        importFile: guarded((request: Request, url: URL) => this.importFile(request, url)),
      },
    };
  }

  async engineSources(): Promise<ModelSource[]> {
    const sources: ModelSource[] = [];
    for (const model of await this.known()) {
      if (!(await this.usable(model))) continue;
      const { entry } = model;
      sources.push({
        id: entry.id,
        aliases: entry.aliases,
        created: model.created,
        ownedBy: model.source === 'imported' ? 'user' : 'webgpu-responses',
        gguf: new StoredModelFileSource(
          this.store,
          { key: model.key, url: model.url, expectedBytes: entry.bytesApproximate ? undefined : entry.bytes, sha256: entry.sha256 },
          entry.file,
          (p) => this.emit(undefined, { type: 'model.download.progress', model: entry.id, file: model.url ?? entry.file, loaded: p.loaded, total: p.total, resumed_from: p.resumedFrom }),
        ),
      });
    }
    return sources;
  }

  /** GET /v1/models: the models requests can name (the bundled ones stored first); the route adds alias rows. */
  async listUsable(loadedIds: () => Promise<Set<string>>): Promise<ManagedModel[]> {
    await this.storeBundled();
    const loaded = await loadedIds();
    const data: ManagedModel[] = [];
    for (const model of await this.known()) {
      if (await this.usable(model)) data.push(await this.describe(model, loaded));
    }
    return data;
  }

  /** GET /v1/models/catalog: every model known, stored or not, and the origin's storage. */
  async listCatalog(loadedIds: () => Promise<Set<string>>): Promise<Response> {
    const loaded = await loadedIds();
    const data = await Promise.all((await this.known()).map((m) => this.describe(m, loaded)));
    return Response.json({ object: 'list', data, storage: await storageEstimate() });
  }

  /** The app's catalog, the remote catalog and the models the user added. */
  private async known(): Promise<KnownModel[]> {
    this.appCatalog ??= readModelCatalog(this.scope);
    this.appCatalog.catch(() => (this.appCatalog = null));
    const app = await this.appCatalog;
    const ids = new Set(app.map((e) => e.id));
    const catalog = [...app, ...remoteCatalog.filter((e) => !ids.has(e.id))].map((entry): KnownModel => {
      const url = new URL(entry.file, this.scope).href;
      return { entry, source: entry.bundled ? 'bundled' : 'catalog', key: `url:${url}`, url, created: 0 };
    });
    const added: KnownModel[] = [];
    for (const key of await this.store.describedKeys(userPrefix)) {
      const parsed = userModelSchema.safeParse(await this.store.readDescription(key));
      if (!parsed.success) continue;
      added.push(userKnownModel(key, parsed.data, await this.store.completeRecord(key)));
    }
    return [...catalog, ...added];
  }

  async find(id: string): Promise<KnownModel> {
    const model = (await this.known()).find((m) => m.entry.id === id || m.entry.aliases.includes(id));
    if (!model) throw new ModelFileError(`The model '${id}' does not exist`, 'not_found', 'model_not_found');
    return model;
  }

  async describe(model: KnownModel, loaded: Set<string>): Promise<ManagedModel> {
    const { entry } = model;
    const download = this.downloads.get(entry.id);
    const record = await this.store.completeRecord(model.key);
    const stored = record !== null;
    const status: ModelStatus = loaded.has(entry.id) ? 'loaded' : stored ? 'downloaded' : download ? 'downloading' : 'available';
    const progress = download?.last?.type === 'model.download.progress' ? { loaded: download.last.loaded, total: download.last.total } : undefined;
    const partial = !stored && !download ? await this.store.storedBytes(model.key) : 0;
    return {
      id: entry.id,
      object: 'model',
      created: model.created,
      owned_by: model.source === 'imported' ? 'user' : 'webgpu-responses',
      source: model.source,
      status,
      aliases: entry.aliases,
      bytes: entry.bytes,
      license: entry.license,
      description: entry.description,
      ...(model.url ? { url: model.url } : {}),
      ...(progress && status === 'downloading' ? { progress } : {}),
      ...(partial > 0 ? { stored_bytes: partial } : {}),
      ...(entry.minGpuMemoryBytes ? { min_gpu_memory_bytes: entry.minGpuMemoryBytes } : {}),
      ...(entry.architecture ? { architecture: entry.architecture } : {}),
      ...(entry.expectedFormat ? { expected_format: entry.expectedFormat } : {}),
      ...(record?.verified ? { verified: record.verified } : {}),
    };
  }

  /** Bundled models are usable before they are stored (they are stored on first use). */
  private async usable(model: KnownModel): Promise<boolean> {
    return model.source === 'bundled' || (await this.store.completeRecord(model.key)) !== null;
  }

  private emit(download: Download | undefined, event: ModelEvent): void {
    if (download) {
      download.last = event;
      for (const listener of download.listeners) listener(event);
    }
    this.channel?.postMessage(event);
    this.options.onEvent?.(event);
  }

  private startDownload(model: KnownModel): Download {
    const running = this.downloads.get(model.entry.id);
    if (running) return running;
    const { entry } = model;
    const file = model.url!;
    const download: Download = { controller: new AbortController(), done: Promise.resolve(), last: null, listeners: new Set() };
    this.downloads.set(entry.id, download);
    download.done = (async () => {
      try {
        const blob = await this.store.download(model.key, file, {
          expectedBytes: entry.bytesApproximate ? undefined : entry.bytes,
          sha256: entry.sha256,
          signal: download.controller.signal,
          checkQuota: true,
          checkHeader: true,
          onProgress: (p: FileWriteProgress) =>
            this.emit(download, { type: 'model.download.progress', model: entry.id, file, loaded: p.loaded, total: p.total, resumed_from: p.resumedFrom }),
        });
        // A bundled model was usable (and served) before it was stored: the engine need not change.
        if (model.source !== 'bundled') this.changes++;
        this.emit(download, { type: 'model.download.completed', model: entry.id, file, bytes: blob.size });
      } catch (error) {
        this.emit(download, { type: 'model.download.failed', model: entry.id, file, error: toApiError(asDomainError(error)).body.error });
      } finally {
        this.downloads.delete(entry.id);
      }
    })();
    return download;
  }

  /**
   * Stores the bundled models that are not stored yet (they are part of the app: once the model list answered,
   * the app works offline). A failure is not fatal here: using the model reports it.
   */
  private async storeBundled(): Promise<void> {
    for (const model of await this.known()) {
      if (model.source !== 'bundled' || !model.url || (await this.store.completeRecord(model.key))) continue;
      await this.startDownload(model).done;
    }
  }

  /** POST /v1/models/{id}/download (a JSON body { url, … } adds a model that is not in the catalog). */
  async download(id: string, request: Request): Promise<Response> {
    const text = await request.text();
    let model = (await this.known()).find((m) => m.entry.id === id || m.entry.aliases.includes(id));
    if (!model && text.trim() !== '') model = await this.addByUrl(id, text);
    if (!model) throw new ModelFileError(`The model '${id}' does not exist (to download a model that is not in the catalog, send { "url": ... })`, 'not_found', 'model_not_found');
    if (!model.url) throw new ModelFileError(`The model '${id}' was imported from a local file: there is nothing to download`, 'invalid_request', 'not_downloadable');
    const record = await this.store.completeRecord(model.key);
    const file = model.url;
    if (record) return eventStream([{ type: 'model.download.completed', model: model.entry.id, file, bytes: record.bytes }], null);
    if (!this.downloads.has(model.entry.id) && model.entry.bytes > 0) {
      await checkQuota(model.entry.bytes - (await this.store.storedBytes(model.key)), `model '${model.entry.id}'`);
      await this.store.markStarted(model.key, file);
    }
    return eventStream([], this.startDownload(model));
  }

  /** A download by URL: the body's model is kept as the user's, then found like any other. */
  private async addByUrl(id: string, text: string): Promise<KnownModel> {
    const parsed = downloadBodySchema.safeParse(safeJson(text));
    if (!parsed.success) throw new ModelFileError(`Bad download request: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`, 'invalid_request', 'invalid_request');
    checkNewId(id, await this.known());
    const body = parsed.data;
    if (body.bytes !== undefined) await checkQuota(body.bytes, `model '${id}'`);
    await this.addUserModel({ id, url: new URL(body.url, this.scope).href, bytes: body.bytes, sha256: body.sha256, license: body.license, description: body.description ?? `Downloaded from ${body.url}`, created: now() });
    return this.find(id);
  }

  private async addUserModel(user: UserModel): Promise<void> {
    await this.store.writeDescription(`${userPrefix}${user.id}`, user);
  }

  /** DELETE /v1/models/{id}: stops its download and deletes what is stored. */
  async remove(id: string): Promise<Response> {
    const model = await this.find(id);
    const download = this.downloads.get(model.entry.id);
    if (download) {
      download.controller.abort();
      await download.done;
    }
    const deleted = await this.store.delete(model.key);
    if (deleted) this.changes++;
    return Response.json({ id: model.entry.id, object: 'model', deleted });
  }

  /** POST /v1/models/import?name=…[&id=…]: the body is the GGUF file. */
  async importFile(request: Request, url: URL): Promise<Response> {
    const name = url.searchParams.get('name') ?? 'model.gguf';
    const id = url.searchParams.get('id') ?? idFromFileName(name);
    checkNewId(id, await this.known());
    if (!request.body) throw new ModelFileError('The import request has no body: send the GGUF file as the body', 'invalid_request', 'missing_body');
    const length = Number(request.headers.get('content-length') ?? url.searchParams.get('bytes') ?? NaN);
    if (Number.isFinite(length)) await checkQuota(length, `'${name}'`);
    const key = `${userPrefix}${id}`;
    await this.store.delete(key);
    try {
      const size = await this.store.append(key, request.body, 0);
      await this.store.complete(key, { expectedBytes: size, origin: `file:${name}` });
      await this.addUserModel({ id, fileName: name, bytes: size, license: 'unknown (imported file)', description: `Imported from ${name}`, created: now() });
    } catch (error) {
      await this.store.delete(key);
      throw error;
    }
    this.changes++;
    return Response.json(await this.describe(await this.find(id), new Set()), { status: 201 });
  }
}

/** A model the user added, as the catalog lists it. */
function userKnownModel(key: string, user: UserModel, record: { bytes: number } | null): KnownModel {
  return {
    key,
    source: 'imported',
    created: user.created,
    url: user.url,
    entry: {
      id: user.id,
      aliases: [],
      file: user.url ?? user.fileName ?? `${user.id}.gguf`,
      format: 'gguf',
      bytes: record?.bytes ?? user.bytes ?? 0,
      bytesApproximate: user.bytes === undefined,
      sha256: user.sha256,
      license: user.license,
      bundled: false,
      description: user.description,
    },
  };
}

async function storageEstimate(): Promise<{ usage: number | null; quota: number | null; persisted: boolean | null }> {
  const estimate = await navigator.storage?.estimate?.().catch(() => null);
  const persisted = await navigator.storage?.persisted?.().catch(() => null);
  return { usage: estimate?.usage ?? null, quota: estimate?.quota ?? null, persisted: persisted ?? null };
}

/** An SSE stream of `initial` events, then (when given) the download's events until it ends. */
function eventStream(initial: ModelEvent[], download: Download | null): Response {
  const encoder = new TextEncoder();
  let listener: ((event: ModelEvent) => void) | null = null;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (event: ModelEvent): void => {
        try {
          controller.enqueue(encoder.encode(`data: ${JSON.stringify(event)}\n\n`));
          if (event.type !== 'model.download.progress') {
            if (listener) download?.listeners.delete(listener);
            controller.close();
          }
        } catch {
          if (listener) download?.listeners.delete(listener);
        }
      };
      for (const event of initial) send(event);
      if (download) {
        listener = send;
        download.listeners.add(listener);
        if (download.last) send(download.last);
      }
    },
    cancel() {
      if (listener) download?.listeners.delete(listener);
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' } });
}

function checkNewId(id: string, models: KnownModel[]): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id) || id === 'catalog' || id === 'import') {
    throw new ModelFileError(`'${id}' cannot be a model id: use letters, digits, '.', '_' and '-' (pass ?id=)`, 'invalid_request', 'invalid_model_id');
  }
  if (models.some((m) => m.entry.id === id || m.entry.aliases.includes(id))) {
    throw new ModelFileError(`A model '${id}' already exists: delete it first or use another id`, 'conflict', 'model_exists');
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function now(): number {
  return Math.floor(Date.now() / 1000);
}

function idFromFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? name;
  return base
    .replace(/\.gguf$/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 128);
}

/**
 * What the model routes throw, as the error vocabulary has it: a stopped download is a 409 `download_cancelled`;
 * an unexpected failure keeps its message (a download's cause is worth reading). toApiError answers it.
 */
function asDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (error instanceof DOMException && error.name === 'AbortError') return new DomainError('conflict', 'The download was stopped', { code: 'download_cancelled' });
  return new DomainError('internal', error instanceof Error ? error.message : String(error));
}
