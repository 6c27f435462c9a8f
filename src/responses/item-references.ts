// `item_reference` input items (`{type:"item_reference", id}`): the AI SDK sends the items of its earlier steps
// this way when the responses were stored. The store keeps records by response id only, so an item id says which
// response it belongs to: output items are numbered within their response,
// `<prefix>_<response id without "resp_">_<s|e><n>` (`s` for a stored response, `e` for one made with
// `store:false`, whose items are never kept), and the input items `input_items` lists `..._<s|e>i<n>`. Resolving an id reads that one record and finds the item in its
// output, its history or its listed input items.
// - an id this runtime did not give out, or whose response is gone (deleted, never stored): 404 naming the item;
// - an id from a `store:false` response: 400 naming the item and what to send instead;
// - a stored item that no longer parses as an input item: 500 (the record is damaged, not the request).
import type { JsonValue, ResponseStore } from '../store/types.ts';
import { DomainError, badRequest, notFound, quote } from './errors.ts';
import { InputItem } from './schema.ts';
import type { ItemResolver } from './translate.ts';

const ITEM_ID = /^([a-z]+)_(.+)_([se])i?(\d{1,9})$/;

/** Ids for the output (or listed input) items of response `responseId`, numbered in order: each call gives the next. */
export function responseItemIds(responseId: string, stored: boolean, kind: 'output' | 'input' = 'output'): (prefix: string) => string {
  const key = responseId.startsWith('resp_') ? responseId.slice('resp_'.length) : responseId;
  const tag = `${stored ? 's' : 'e'}${kind === 'input' ? 'i' : ''}`;
  let next = 0;
  return (prefix) => `${prefix}_${key}_${tag}${next++}`;
}

/** The response an item id names, and whether that response was stored; null for an id not given out here. */
export function parseItemId(id: string): { responseId: string; stored: boolean } | null {
  const match = ITEM_ID.exec(id);
  if (match === null) return null;
  return { responseId: `resp_${match[2]!}`, stored: match[3] === 's' };
}

export function createItemResolver(store: ResponseStore): ItemResolver {
  return {
    async resolve(id, where) {
      const param = `${where}.id`;
      const owner = parseItemId(id);
      const missing = (): DomainError => notFound(`Item with id '${quote(id)}' not found.`, param);
      if (owner === null) throw missing();
      if (!owner.stored) {
        throw badRequest(
          `Item '${quote(id)}' in '${where}' cannot be resolved: it belongs to a response created with store:false, whose items are not kept. ` +
            'Send the item itself instead of a reference (a reasoning item with its encrypted_content), or create responses with store:true.',
          param,
          'item_not_stored',
        );
      }
      const record = await store.get(owner.responseId);
      if (record === undefined) throw missing();
      const outputs = Array.isArray(record.response.output) ? record.response.output : [];
      const found = [...outputs, ...record.history, ...record.inputItems].find((item) => idOf(item) === id);
      if (found === undefined) throw missing();
      const parsed = InputItem.safeParse(found);
      if (!parsed.success || parsed.data.type === 'item_reference') {
        throw new DomainError('internal', `The stored item '${quote(id)}' cannot be read.`, { param, code: 'history_corrupt' });
      }
      return parsed.data;
    },
  };
}

function idOf(item: JsonValue): string | null {
  return typeof item === 'object' && item !== null && !Array.isArray(item) && typeof item.id === 'string' ? item.id : null;
}
