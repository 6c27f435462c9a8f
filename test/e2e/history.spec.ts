// Response history in the real browser (issue 7): what was stored survives a page reload and a service-worker
// restart, `previous_response_id` continues it, and a `store:false` client replays its encrypted reasoning after a
// reload and after the worker restarted (the AES-GCM key lives in IndexedDB); a tampered blob is a 400 naming the item.
import { expect, test } from '@playwright/test';
import { callApi, openDemo, stopServiceWorker } from './fixtures/page-requests.ts';




test('a stored response survives a reload and a worker restart, and previous_response_id continues it', async ({ page }) => {
  await openDemo(page);
  const first = await callApi(page, 'POST', '/v1/responses', { input: 'What is 2 + 2?', max_output_tokens: 24, temperature: 0 });
  expect(first.status).toBe(200);
  const id = first.json.id as string;
  await page.reload();
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  await stopServiceWorker(page);
  const stored = await callApi(page, 'GET', `/v1/responses/${id}`);
  expect(stored.status).toBe(200);
  expect(stored.json).toEqual(first.json);
  const items = await callApi(page, 'GET', `/v1/responses/${id}/input_items`);
  expect(items.json.data[0].content[0].text).toBe('What is 2 + 2?');
  const next = await callApi(page, 'POST', '/v1/responses', { input: 'And 3 + 3?', previous_response_id: id, max_output_tokens: 16, temperature: 0 });
  expect(next.status).toBe(200);
  expect(next.json.previous_response_id).toBe(id);
  // The continuation's prompt holds the first turn: more input tokens than the new message alone.
  const alone = await callApi(page, 'POST', '/v1/responses/input_tokens', { input: 'And 3 + 3?' });
  expect(next.json.usage.input_tokens).toBeGreaterThan(alone.json.input_tokens);
  const deleted = await callApi(page, 'DELETE', `/v1/responses/${id}`);
  expect(deleted.json).toEqual({ id, object: 'response', deleted: true });
  expect((await callApi(page, 'GET', `/v1/responses/${id}`)).status).toBe(404);
});

test('store:false: encrypted reasoning replays after a reload and a worker restart; a tampered blob is a 400', async ({ page }) => {
  await openDemo(page);
  const first = await callApi(page, 'POST', '/v1/responses', {
    input: 'What is 12 * 7?',
    store: false,
    include: ['reasoning.encrypted_content'],
    max_output_tokens: 64,
    temperature: 0,
  });
  expect(first.status).toBe(200);
  const reasoning = (first.json.output as Record<string, any>[]).find((o) => o.type === 'reasoning');
  expect(reasoning, JSON.stringify(first.json.output)).toBeTruthy();
  expect(typeof reasoning!.encrypted_content).toBe('string');
  expect((await callApi(page, 'GET', `/v1/responses/${first.json.id}`)).status).toBe(404);

  await page.reload();
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  await stopServiceWorker(page);
  // Only the blob comes back: the server must decrypt it with the key it kept in IndexedDB.
  const replayed = { type: 'reasoning', id: reasoning!.id, summary: [], encrypted_content: reasoning!.encrypted_content };
  const input = [{ role: 'user', content: 'What is 12 * 7?' }, replayed, { role: 'user', content: 'Thanks.' }];
  const counted = await callApi(page, 'POST', '/v1/responses/input_tokens', { input });
  expect(counted.status, JSON.stringify(counted.json)).toBe(200);
  const without = await callApi(page, 'POST', '/v1/responses/input_tokens', { input: [input[0], input[2]] });
  expect(counted.json.input_tokens).toBeGreaterThan(without.json.input_tokens);
  const second = await callApi(page, 'POST', '/v1/responses', { input, store: false, max_output_tokens: 8, temperature: 0 });
  expect(second.status, JSON.stringify(second.json)).toBe(200);

  const blob = reasoning!.encrypted_content as string;
  const tampered = { ...replayed, encrypted_content: blob.slice(0, 20) + (blob[20] === 'A' ? 'B' : 'A') + blob.slice(21) };
  const refused = await callApi(page, 'POST', '/v1/responses', { input: [input[0], tampered], store: false, max_output_tokens: 8 });
  expect(refused.status).toBe(400);
  expect(refused.json.error.type).toBe('invalid_request_error');
  expect(refused.json.error.param).toContain('input[1]');
});
