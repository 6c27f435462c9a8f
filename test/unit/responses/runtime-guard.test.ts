// The runtime the service worker mounts checks who may call before its model routes (issue 22 item 1): a
// cross-site or text/plain download request starts nothing; a malformed escape in a model id is a 400 (item 5).
// Only the refusals are exercised: they answer before the model manager touches any storage.
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../../src/sw/runtime.ts';

describe('runtime routes behind the request guard', () => {
  const download = (headers: Record<string, string>) =>
    new Request('http://app.test/v1/models/evil-model/download', { method: 'POST', headers, body: '{"url":"http://evil.test/x.gguf","pad":"="}' });

  it('a download posted from another origin or as text/plain is refused before the model manager', async () => {
    const runtime = createRuntime('http://app.test/');
    const crossSite = await runtime.handle(download({ 'content-type': 'application/json', origin: 'http://evil.test' }));
    expect(crossSite.status).toBe(403);
    expect(((await crossSite.json()) as { error: { code: string } }).error.code).toBe('cross_site_request');
    const plain = await runtime.handle(download({ 'content-type': 'text/plain' }));
    expect(plain.status).toBe(415);
    const responses = await runtime.handle(new Request('http://app.test/v1/responses', { method: 'POST', headers: { 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' }, body: '{"input":"x"}' }));
    expect(responses.status).toBe(403);
  });

  it('a malformed escape or an over-long model id in a model route is a short 400, never a 5xx (items 5 and 9)', async () => {
    const runtime = createRuntime('http://app.test/');
    for (const path of ['%ZZ', 'ok%E0%A4%A/download', `${'m'.repeat(1024 * 1024)}`]) {
      const response = await runtime.handle(new Request(`http://app.test/v1/models/${path}`));
      expect(response.status).toBe(400);
      const text = await response.text();
      expect(text.length).toBeLessThan(500);
      expect(JSON.parse(text)).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_model_id' } });
    }
  });
});
