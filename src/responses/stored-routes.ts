// The /v1 routes besides creating a response: stored responses by id (GET, DELETE, cancel, input_items), the input
// token count, compaction and the model list. Each is a function over the handler's context (handler-context.ts).
import type { JsonValue } from '../store/types.ts';
import { compactHistory, COMPACTION_MAX_BYTES } from './compaction.ts';
import { badRequest, notFound, quote } from './errors.ts';
import type { HandlerContext } from './handler-context.ts';
import { checkResponseId, parseWith, preparePrompt, readJsonBody } from './request-checks.ts';
import { upgradeStoredResponse } from './response-object.ts';
import { CompactBody, InputItemsQuery, InputTokensBody, type ResponseObject } from './schema.ts';
import { compactionPayload } from './translate.ts';
import { toJson } from './records.ts';

/** A stored response and its listed input items; 400 for an id that is not a response id, 404 when unknown. */
export async function storedResponse(ctx: HandlerContext, id: string): Promise<{ response: ResponseObject; inputItems: JsonValue[] }> {
  checkResponseId(id, 'response_id');
  const record = await ctx.store.get(id);
  if (record === undefined) throw notFound(`Response with id '${id}' not found.`, 'response_id');
  return { response: upgradeStoredResponse(record.response), inputItems: record.inputItems };
}

/** GET /v1/responses/{id} */
export async function getResponse(ctx: HandlerContext, id: string): Promise<Response> {
  return Response.json((await storedResponse(ctx, id)).response);
}

/** POST /v1/responses/{id}/cancel: only a background response that is queued or in progress. */
export async function cancelResponse(ctx: HandlerContext, id: string): Promise<Response> {
  const { response } = await storedResponse(ctx, id);
  if (!response.background) throw badRequest('Only background responses can be cancelled.', 'response_id');
  if (response.status !== 'queued' && response.status !== 'in_progress') {
    throw badRequest(`Cannot cancel a response with status '${response.status}'.`, 'response_id');
  }
  const run = ctx.background.get(id);
  if (run) {
    run.controller.abort();
    await run.finished;
  } else {
    // Its run is gone (the host restarted): nothing generates any more, so the record is what is left.
    await ctx.store.updateResponse(id, toJson({ ...response, status: 'cancelled' }));
  }
  return Response.json((await storedResponse(ctx, id)).response);
}

/** DELETE /v1/responses/{id}: stops its run first when it is a running background response. */
export async function deleteResponse(ctx: HandlerContext, id: string): Promise<Response> {
  checkResponseId(id, 'response_id');
  const run = ctx.background.get(id);
  if (run) {
    run.controller.abort();
    await run.finished;
  }
  if (!(await ctx.store.delete(id))) throw notFound(`Response with id '${id}' not found.`, 'response_id');
  return Response.json({ id, object: 'response', deleted: true });
}

/** GET /v1/responses/{id}/input_items: a cursor list (`after`, `limit`, `order`). */
export async function listInputItems(ctx: HandlerContext, id: string, url: URL): Promise<Response> {
  const query = parseWith(InputItemsQuery, Object.fromEntries(url.searchParams));
  const { inputItems } = await storedResponse(ctx, id);
  const ordered = query.order === 'asc' ? inputItems : [...inputItems].reverse();
  let start = 0;
  if (query.after !== undefined) {
    const at = ordered.findIndex((item) => itemId(item) === query.after);
    if (at < 0) throw badRequest(`No input item with id '${quote(query.after)}' in this response.`, 'after');
    start = at + 1;
  }
  const data = ordered.slice(start, start + query.limit);
  return Response.json({
    object: 'list',
    data,
    first_id: data.length > 0 ? itemId(data[0]!) : null,
    last_id: data.length > 0 ? itemId(data[data.length - 1]!) : null,
    has_more: start + query.limit < ordered.length,
  });
}

/** POST /v1/responses/input_tokens */
export async function countInputTokens(ctx: HandlerContext, request: Request): Promise<Response> {
  const body = parseWith(InputTokensBody, await readJsonBody(request));
  const prepared = await preparePrompt(ctx.engine, ctx.store, ctx.sealers, body);
  const tokens = await ctx.engine.tokenizePrompt({
    model: prepared.model.id,
    messages: prepared.messages,
    tools: prepared.served.chatTools,
    enableThinking: prepared.enableThinking,
    reasoningEffort: prepared.reasoningEffort,
  });
  return Response.json({ object: 'response.input_tokens', input_tokens: tokens.length });
}

/** POST /v1/responses/compact: one sealed compaction item that replays as a shorter history. */
export async function compactConversation(ctx: HandlerContext, request: Request): Promise<Response> {
  const body = parseWith(CompactBody, await readJsonBody(request));
  const prepared = await preparePrompt(ctx.engine, ctx.store, ctx.sealers, body);
  const before = await ctx.engine.tokenizePrompt({ model: prepared.model.id, messages: prepared.messages, tools: [], enableThinking: prepared.enableThinking });
  const items = compactHistory([...prepared.chain, ...prepared.input]);
  let sealed: string;
  try {
    sealed = await ctx.sealers.compaction.seal(compactionPayload(items));
  } catch {
    throw badRequest(`The conversation is too long to compact into one item (over ${COMPACTION_MAX_BYTES} bytes).`, 'input', 'input_too_large');
  }
  return Response.json({
    id: ctx.ids('resp'),
    object: 'response.compaction',
    created_at: ctx.now(),
    output: [{ id: ctx.ids('cmp'), type: 'compaction', encrypted_content: sealed }],
    usage: {
      input_tokens: before.length,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: before.length,
    },
  });
}


function itemId(item: JsonValue): string | null {
  return typeof item === 'object' && item !== null && !Array.isArray(item) && typeof item.id === 'string' ? item.id : null;
}
