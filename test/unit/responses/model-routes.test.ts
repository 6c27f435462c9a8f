// The model routes live in the handler's one /v1 route table: GET /v1/models and /v1/models/{id} in one shape on
// every host (from the engine, or from the host's ModelDirectory), and the management routes answered by the
// host's directory where it has them, unknown routes where it has none.
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/common/engine-error.ts';
import { createResponsesHandler } from '../../../src/responses/handler.ts';
import type { ModelDirectory, ModelObject } from '../../../src/responses/model-routes.ts';
import { createMemoryStore } from '../../../src/store/memory-store.ts';
import { FakeEngine } from '../../support/fake-engine.ts';

type ErrorBody = { error: { message: string; type: string; param: string | null; code: string | null } };
const get = (handler: (r: Request) => Promise<Response>, path: string, init?: RequestInit) => handler(new Request(`http://local/v1/${path}`, init));

describe('model routes', () => {
  it('GET /v1/models/{id} answers the row of an id or an alias, 404 model_not_found otherwise', async () => {
    const handler = createResponsesHandler({ engine: new FakeEngine([]), store: createMemoryStore() });
    for (const id of ['fake-qwen3', 'fake']) {
      const response = await get(handler, `models/${id}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ id: 'fake-qwen3', object: 'model', created: 1_700_000_000, owned_by: 'webgpu-responses', aliases: ['fake'], status: 'loaded' });
    }
    const unknown = await get(handler, 'models/nope');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as ErrorBody).error).toMatchObject({ code: 'model_not_found', param: 'model', type: 'invalid_request_error' });
  });

  it('without a host directory the management routes are unknown routes (404), as before they existed', async () => {
    const handler = createResponsesHandler({ engine: new FakeEngine([]), store: createMemoryStore() });
    const calls: [string, RequestInit][] = [
      ['models/catalog', {}],
      ['models/x/download', { method: 'POST' }],
      ['models/import?name=a.gguf', { method: 'POST' }],
      ['models/fake', { method: 'DELETE' }],
    ];
    for (const [path, init] of calls) {
      const response = await get(handler, path, init);
      expect(response.status, path).toBe(404);
      expect(((await response.json()) as ErrorBody).error.code, path).toBe('unknown_route');
    }
  });

  it("a host's directory answers every model route; its rows keep their extra fields and alias rows are added", async () => {
    const seen: string[] = [];
    const row: ModelObject & { source: string; bytes: number } = { id: 'm', object: 'model', created: 5, owned_by: 'user', aliases: ['m-alias'], status: 'downloaded', source: 'imported', bytes: 9 };
    const models: ModelDirectory = {
      list: async () => [row],
      get: async (id) => {
        if (id !== 'm' && id !== 'm-alias') throw new DomainError('not_found', `The model '${id}' does not exist`, { code: 'model_not_found' });
        return row;
      },
      manage: {
        catalog: async () => (seen.push('catalog'), Response.json({ object: 'list', data: [row], storage: {} })),
        download: async (id) => (seen.push(`download ${id}`), new Response('data: {}\n\n', { headers: { 'content-type': 'text/event-stream' } })),
        remove: async (id) => (seen.push(`remove ${id}`), Response.json({ id, object: 'model', deleted: true })),
        importFile: async (_request, url) => (seen.push(`import ${url.searchParams.get('name')}`), Response.json(row, { status: 201 })),
      },
    };
    const handler = createResponsesHandler({ engine: new FakeEngine([]), store: createMemoryStore(), models });
    const list = (await (await get(handler, 'models')).json()) as { object: string; data: unknown[] };
    expect(list).toEqual({ object: 'list', data: [row, { ...row, id: 'm-alias', alias_of: 'm' }] });
    expect(await (await get(handler, 'models/m-alias')).json()).toEqual(row);
    expect((await get(handler, 'models/catalog')).status).toBe(200);
    expect((await get(handler, 'models/a%20b/download', { method: 'POST' })).headers.get('content-type')).toBe('text/event-stream');
    expect((await get(handler, 'models/m', { method: 'DELETE' })).status).toBe(200);
    expect((await get(handler, 'models/import?name=x.gguf', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'GGUF' })).status).toBe(201);
    expect(seen).toEqual(['catalog', 'download a b', 'remove m', 'import x.gguf']);
    const wrong = await get(handler, 'models/m', { method: 'PUT' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, DELETE');
  });

  it('a model id with malformed escapes or over 256 characters is a 400 invalid_model_id, whatever the method', async () => {
    const handler = createResponsesHandler({ engine: new FakeEngine([]), store: createMemoryStore() });
    for (const [path, method] of [['models/%ZZ', 'GET'], ['models/%E0%A4%A/download', 'GET'], [`models/${'m'.repeat(300)}`, 'DELETE']] as const) {
      const response = await get(handler, path, { method });
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as ErrorBody).error).toMatchObject({ code: 'invalid_model_id', type: 'invalid_request_error' });
    }
  });
});
