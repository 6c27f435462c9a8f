// The model routes of the one /v1 route table (handler.ts ROUTES): `GET /v1/models` and `GET /v1/models/{id}` in
// one shape for every host (the OpenAI list of Model objects with the extra fields CONTRACT.md lists, one row per
// id and per alias), and the management routes a host may offer (the service worker's catalog, downloads,
// imports and deletes). What the models are comes from the host's ModelDirectory; a host that gives none lists
// the engine's models (engineDirectory).
import type { Engine } from '../engine/types.ts';
import { DomainError, quote } from './errors.ts';

export type ModelStatus = 'available' | 'downloading' | 'downloaded' | 'loaded';

/** A model as the routes show it: the OpenAI Model object plus what clients and the demo read (CONTRACT.md). */
export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  /** The other names requests may use for it. */
  aliases: string[];
  /** On an alias's row of GET /v1/models: the id it names. */
  alias_of?: string;
  /** `loaded`: on the GPU now; `downloaded`: stored, ready to load; `downloading`, `available`: not stored yet. */
  status: ModelStatus;
}

/** The management routes under /v1/models (the service worker's); each answers its own success body. */
export interface ModelManagement {
  /** GET /v1/models/catalog */
  catalog(): Promise<Response>;
  /** POST /v1/models/{id}/download */
  download(id: string, request: Request): Promise<Response>;
  /** DELETE /v1/models/{id} */
  remove(id: string): Promise<Response>;
  /** POST /v1/models/import?name=…[&id=…] */
  importFile(request: Request, url: URL): Promise<Response>;
}

/** What a host says about its models. Errors are DomainErrors (an unknown id is `not_found`). */
export interface ModelDirectory {
  /** The models requests can name, one entry per model (the route adds the alias rows). */
  list(): Promise<ModelObject[]>;
  /** One model, by id or alias. */
  get(id: string): Promise<ModelObject>;
  /** The management routes; absent where the host has none (they are then unknown routes). */
  readonly manage?: ModelManagement;
}

/** The models an engine serves (hosts whose models are files the engine opens itself: `serve`, tests). */
export function engineDirectory(engine: Engine): ModelDirectory {
  const list = async (): Promise<ModelObject[]> =>
    (await engine.listModels()).map((m) => ({
      id: m.id,
      object: 'model',
      created: m.created,
      owned_by: m.ownedBy,
      aliases: m.aliases,
      status: m.loaded ? 'loaded' : 'downloaded',
    }));
  return {
    list,
    async get(id) {
      const found = (await list()).find((m) => m.id === id || m.aliases.includes(id));
      if (!found) throw new DomainError('not_found', `The model '${quote(id)}' does not exist`, { param: 'model', code: 'model_not_found' });
      return found;
    },
  };
}

/** GET /v1/models: every model, then a row for each alias naming its model (`alias_of`). */
export async function listModels(models: ModelDirectory): Promise<Response> {
  const data = (await models.list()).flatMap((m) => [m, ...m.aliases.map((alias): ModelObject => ({ ...m, id: alias, alias_of: m.id }))]);
  return Response.json({ object: 'list', data });
}

/** GET /v1/models/{id} */
export async function getModel(models: ModelDirectory, id: string): Promise<Response> {
  return Response.json(await models.get(id));
}

/** The host's management routes, or an unknown route where it has none. */
export function management(models: ModelDirectory, request: Request, url: URL): ModelManagement {
  const manage = models.manage;
  if (!manage) throw new DomainError('not_found', `Unknown route: ${quote(request.method, 20)} ${quote(url.pathname)}`, { code: 'unknown_route' });
  return manage;
}

/** A model id from the path: malformed percent-encoding or an id longer than any model's is the client's error. */
export function decodeModelId(raw: string): string {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    throw new DomainError('invalid_request', 'Invalid model id in the path: malformed percent-encoding', { code: 'invalid_model_id' });
  }
  if (id.length > 256) throw new DomainError('invalid_request', 'Invalid model id in the path: longer than 256 characters', { code: 'invalid_model_id' });
  return id;
}
