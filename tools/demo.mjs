// `npm run demo`: builds the app (if needed), serves it on http://127.0.0.1:4173/ and prints the URL.
// `npm run demo -- --check`: also opens the page in headless Chromium, sends one request through the service
// worker and prints the streamed answer, then exits (for machines without a display).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { serveApp } from './serve-app.mjs';
import { ensureChromium } from './ensure-chromium.mjs';

const check = process.argv.includes('--check');
const rebuild = process.argv.includes('--rebuild');
if (rebuild || !existsSync('dist/app/sw.js')) {
  const r = spawnSync('npm', ['run', 'build'], { stdio: 'inherit', env: { ...process.env, VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true' } });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const port = Number(process.env.PORT ?? (check ? 0 : 4173));
const app = await serveApp({ root: 'dist/app', port });
console.log(`webgpu-responses demo: ${app.url}`);
if (!check) {
  console.log('Open it in Chromium 124+ (WebGPU). Ctrl+C to stop.');
} else {
  const { chromium } = await import('playwright-core');
  const { chromiumArgs } = await import('./chromium-flags.mjs');
  const browser = await chromium.launch({ executablePath: ensureChromium(), args: chromiumArgs() });
  let status = 0;
  try {
    const page = await browser.newPage();
    page.on('console', (m) => m.type() === 'error' && console.error(`[page] ${m.text()}`));
    await page.goto(app.url);
    await page.waitForFunction(() => document.getElementById('status')?.textContent?.startsWith('Ready') || document.querySelector('#status.error'), null, { timeout: 180_000 });
    const ready = await page.textContent('#status');
    console.log(`page: ${ready}`);
    if (!ready?.startsWith('Ready')) throw new Error(ready ?? 'not ready');
    const answer = await page.evaluate(async () => {
      const response = await fetch('v1/responses', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          input: 'What is 2 + 3?',
          stream: true,
          max_output_tokens: 64,
          temperature: 0,
          tools: [
            {
              type: 'function',
              name: 'calculator',
              description: 'Evaluate an arithmetic expression.',
              parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'], additionalProperties: false },
            },
          ],
        }),
      });
      return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
    });
    console.log(`POST /v1/responses -> ${answer.status} ${answer.type}`);
    let text = '';
    for (const line of answer.body.split('\n')) {
      if (!line.startsWith('data: ')) continue;
      const event = JSON.parse(line.slice(6));
      if (event.type === 'response.output_item.added') {
        const item = event.item;
        process.stdout.write(`\n[${item.type}${item.name ? ` ${item.name}` : ''}${item.phase ? ` ${item.phase}` : ''}] `);
      }
      if (event.type?.endsWith('.delta')) {
        text += event.delta;
        process.stdout.write(event.delta);
      }
      if (event.type === 'response.completed' || event.type === 'response.incomplete' || event.type === 'response.failed') {
        console.log(`\n${event.type} (${event.response.usage?.output_tokens ?? 0} output tokens)`);
        if (event.type === 'response.failed') status = 1;
      }
    }
    if (!text && answer.status !== 200) {
      console.log(answer.body);
      status = 1;
    }
  } catch (e) {
    console.error(`demo check failed: ${e.message}`);
    status = 1;
  } finally {
    await browser.close();
    await app.close();
  }
  process.exit(status);
}
