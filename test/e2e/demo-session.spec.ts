// The demo driven as a person uses it, and the web IDE as a developer does. The bundled toy model is weak, so these
// tests hold the page and the wire to their contract, not the model to good answers: every turn ends with an answer
// or a clear message and never an error, the page only runs (and only declares) its own tools, the conversation
// survives truncation, Stop, New chat, a reload and going offline; the web IDE shows each patch as a diff that is
// accepted into the file and undone. Screenshots at 1280x900 and 390x844 (no horizontal scroll) go to
// examples/screenshots/.
import { expect, test, type Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { callApi, openDemo } from './fixtures/page-requests.ts';

const shots = 'examples/screenshots';
mkdirSync(shots, { recursive: true });
const DEMO_TOOLS = ['calculator', 'get_time', 'apply_patch'];

/** The page scrolls sideways nowhere; the message box is in view. */
async function expectFitsViewport(page: Page) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
  expect(scrollWidth, 'horizontal scroll').toBeLessThanOrEqual(innerWidth);
}

async function shoot(page: Page, name: string, width: number, height: number) {
  await page.setViewportSize({ width, height });
  await page.waitForTimeout(200);
  await expectFitsViewport(page);
  await page.screenshot({ path: `${shots}/${name}-${width}x${height}.png` });
}

/** Every POST /v1/responses body the page sends from now on, in order. */
function recordResponsesBodies(page: Page): Record<string, any>[] {
  const bodies: Record<string, any>[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/v1/responses') bodies.push(request.postDataJSON() as Record<string, any>);
  });
  return bodies;
}

/** Sends a message with Enter and waits until its turn has ended (answer, note or stop). */
async function send(page: Page, text: string) {
  const before = await page.locator('.turn.assistant').count();
  await page.fill('#prompt', text);
  await page.locator('#prompt').press('Enter');
  const turn = page.locator('.turn.assistant').nth(before);
  await expect(turn).toBeAttached();
  await expect(turn).toHaveAttribute('aria-busy', 'false', { timeout: 240_000 });
  return turn;
}

/** The turn ended with an answer or a clear note, and with no error. */
async function expectAnsweredOrExplained(page: Page, turn: ReturnType<Page['locator']>, text: string) {
  await expect(turn.locator('.error'), `error after "${text}": ${await turn.textContent()}`).toHaveCount(0);
  const answer = ((await turn.locator('.message .text').allTextContents()).join('') + (await turn.locator('.note').allTextContents()).join('')).trim();
  expect(answer.length, `no answer or message after "${text}": ${await turn.textContent()}`).toBeGreaterThan(0);
}

/** The web IDE's open file, as its CodeMirror editor holds it. */
function ideFile(page: Page) {
  return page.evaluate(() => (window as unknown as { ideAgent: { file: () => string } }).ideAgent.file());
}

async function demoState(page: Page) {
  return page.evaluate(() => (window as unknown as { demoState: () => { conversation: { items: Record<string, unknown>[]; previousResponseId: string | null; messages: unknown[] } } }).demoState().conversation);
}

test('a 10-message conversation with tools and small talk, Stop, New chat, reload and offline', async ({ page, context }) => {
  test.setTimeout(1_500_000);
  const bodies = recordResponsesBodies(page);
  // Every text the model-load line shows, to check it says bytes, percent and time left.
  await page.addInitScript(() => {
    const seen: string[] = [];
    const announced: string[] = [];
    Object.assign(window, { loadTexts: seen, announced });
    new MutationObserver(() => {
      const text = document.getElementById('load-text')?.textContent;
      if (text && seen.at(-1) !== text) seen.push(text);
    }).observe(document, { subtree: true, childList: true, characterData: true });
    // What the polite live region says, change by change.
    document.addEventListener('DOMContentLoaded', () => {
      const region = document.getElementById('announcer')!;
      new MutationObserver(() => announced.push(region.textContent ?? '')).observe(region, { subtree: true, childList: true, characterData: true });
    });
  });
  await page.goto('/');
  // Send stays disabled until the runtime answers (no "HTTP 404" from a message sent during load).
  await expect(page.locator('#send')).toBeDisabled();
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });

  const messages = [
    'Hello!',
    'What is 12 * 7?',
    'What time is it in Tokyo?',
    // A long message (about 820 of the model's 2,048 tokens): with it the conversation surely outgrows the context.
    `Thanks! ${'Let me tell you about my week. On Monday I went for a long walk by the river, and the weather was lovely. '.repeat(20)}How are you today?`,
    'What is (3 + 4) * 2?',
    'Add eggs to the shopping list in notes.txt',
    'Tell me something nice.',
    'What is 100 / 4?',
    'What time is it in Europe/Paris?',
    'Thank you, goodbye!',
  ];
  for (const text of messages) {
    const turn = await send(page, text);
    await expectAnsweredOrExplained(page, turn, text);
  }
  await expect(page.locator('.turn.user')).toHaveCount(10);
  // One polite announcement per finished message, none per token; the chat itself is not a live region.
  const announced = await page.evaluate(() => (window as unknown as { announced: string[] }).announced);
  expect(announced.length, announced.join(' | ')).toBe(10);
  for (const line of announced) expect(line).toMatch(/^Assistant: /);
  await expect(page.locator('#chat')).not.toHaveAttribute('aria-live', /.*/);
  expect(await page.locator('[aria-live]').count()).toBe(1);
  // Phases read as words.
  expect(await page.locator('#chat').textContent()).not.toMatch(/final_answer|commentary/i);
  // Template markers never show in rendered answers; the model load said bytes, percent and what is left.
  for (const text of await page.locator('.message .text').allTextContents()) expect(text).not.toMatch(/<\/?(think|tool_call)>/);
  const loadTexts = await page.evaluate(() => (window as unknown as { loadTexts: string[] }).loadTexts);
  expect(loadTexts.join('\n')).toMatch(/Loading .+: [\d.]+ (kB|MB) of [\d.]+ (kB|MB) \(\d+%\)/);

  // The wire: auto truncation, only the page's own tools declared, and only those ever called.
  expect(bodies.length).toBeGreaterThanOrEqual(10);
  for (const body of bodies) {
    expect(body.truncation).toBe('auto');
    expect(body.tools.map((t: { name: string }) => t.name).sort()).toEqual([...DEMO_TOOLS].sort());
  }
  const state = await demoState(page);
  const called = state.items.filter((i) => i.type === 'function_call' || i.type === 'custom_tool_call').map((i) => i.name);
  expect(called.length, 'no tool was called in 10 messages').toBeGreaterThan(0);
  for (const name of called) expect(DEMO_TOOLS).toContain(name);
  // The conversation outgrew the toy model's 2,048-token context: the last response says what truncation left out.
  const last = await callApi(page, 'GET', `/v1/responses/${state.previousResponseId}`);
  expect(last.status).toBe(200);
  expect(Number(last.json.metadata.truncated_items), JSON.stringify(last.json.metadata)).toBeGreaterThan(0);

  await shoot(page, 'demo', 1280, 900);
  await shoot(page, 'demo', 390, 844);
  await page.setViewportSize({ width: 360, height: 740 });
  await expectFitsViewport(page);
  await expect(page.locator('#prompt')).toBeInViewport();
  await expect(page.locator('#new-chat')).toBeInViewport();
  await page.setViewportSize({ width: 390, height: 844 });
  // At 390 px the message box is in view and the conversations drawer leaves New chat uncovered.
  await expect(page.locator('#prompt')).toBeInViewport();
  await page.click('#toggle-sidebar');
  await expect(page.locator('#sidebar')).toBeVisible();
  const onTop = await page.evaluate(() => {
    const r = document.getElementById('new-chat')!.getBoundingClientRect();
    return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)?.id;
  });
  expect(onTop).toBe('new-chat');
  await expectFitsViewport(page);
  await page.screenshot({ path: `${shots}/demo-390x844-conversations.png` });
  await page.click('#toggle-sidebar');
  await page.setViewportSize({ width: 1280, height: 900 });

  // Reload restores the conversation from IndexedDB, and it goes on.
  await page.reload();
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  await expect(page.locator('.turn.user')).toHaveCount(10);
  await expect(page.locator('.turn.user').first()).toHaveText('Hello!');
  await expect(page.locator('#conversations li')).toHaveCount(1);

  // Offline: the page reloads from the app shell and answers.
  await context.setOffline(true);
  await page.reload();
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  await expect(page.locator('.turn.user')).toHaveCount(10);
  const offline = await send(page, 'What is 2 + 3?');
  await expectAnsweredOrExplained(page, offline, 'What is 2 + 3? (offline)');

  // Stop (Escape) while generating ends the turn as "stopped"; the next message is answered, not "not found".
  await page.fill('#prompt', 'Tell me a long story about the sea.');
  await page.locator('#prompt').press('Enter');
  const stopped = page.locator('.turn.assistant').last();
  await expect(stopped).toHaveClass(/generating/);
  await expect(page.locator('#stop')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(stopped).toHaveAttribute('aria-busy', 'false', { timeout: 60_000 });
  await expect(stopped.locator('.state')).toHaveText('stopped');
  const sentBefore = bodies.length;
  const after = await send(page, 'What is 6 * 7?');
  await expectAnsweredOrExplained(page, after, 'What is 6 * 7? (after Stop)');
  // The chain went on from a stored response: the cancelled one, or the last completed one.
  const continued = bodies[sentBefore]!.previous_response_id as string;
  const head = await callApi(page, 'GET', `/v1/responses/${continued}`);
  expect(head.status).toBe(200);
  expect(['cancelled', 'completed']).toContain(head.json.status);
  await expect(page.locator('.turn.assistant .error')).toHaveCount(0);

  // New chat while generating aborts the run: nothing of the old turn streams into the new chat.
  await page.fill('#prompt', 'What is 9 * 9?');
  await page.locator('#prompt').press('Enter');
  await expect(page.locator('.turn.assistant').last()).toHaveClass(/generating/);
  await page.click('#new-chat');
  await expect(page.locator('.turn')).toHaveCount(0);
  await expect(page.locator('#send')).toBeVisible({ timeout: 30_000 });
  await page.waitForTimeout(1500);
  await expect(page.locator('.turn')).toHaveCount(0);
  const fresh = await send(page, 'Hello again');
  await expectAnsweredOrExplained(page, fresh, 'Hello again (new chat)');
  // Shift+Enter is a new line, not a send.
  await page.locator('#prompt').fill('');
  await page.locator('#prompt').pressSequentially('line one');
  await page.locator('#prompt').press('Shift+Enter');
  await page.locator('#prompt').pressSequentially('line two');
  await expect(page.locator('#prompt')).toHaveValue('line one\nline two');
  await expect(page.locator('.turn.user')).toHaveCount(1);
  await page.locator('#prompt').fill('');
  // A message too long for the context even alone: one clear message with the way out, and the chat goes on.
  const huge = await send(page, 'word '.repeat(1200));
  await expect(huge.locator('.error')).toHaveCount(1);
  await expect(huge.locator('.error')).toContainText('Start a New chat');
  const afterHuge = await send(page, 'What is 1 + 1?');
  await expectAnsweredOrExplained(page, afterHuge, 'What is 1 + 1? (after a too-long message)');
  await expect(page.locator('#conversations li')).toHaveCount(2);
  await context.setOffline(false);
});

test('answers render as sanitized markdown with a copy button on code blocks', async ({ page }) => {
  await page.goto('/');
  const result = await page.evaluate(() => {
    const { toHtml, render } = (window as unknown as { demoMarkdown: { toHtml: (t: string) => string; render: (el: HTMLElement, t: string) => void } }).demoMarkdown;
    const text = '**bold** and `code`\n\n<img src=x onerror="window.pwned=1"><script>window.pwned=2</script><a href="javascript:alert(1)">link</a>\n\n```js\nconst x = 1;\n```\n</think>done<tool_call>';
    const div = document.createElement('div');
    render(div, text);
    return { html: toHtml(text), copy: div.querySelectorAll('.code-block .copy').length, code: div.querySelector('.code-block pre')?.textContent, text: div.textContent };
  });
  expect(result.html).toContain('<strong>bold</strong>');
  expect(result.html).not.toMatch(/onerror|<script|javascript:/);
  expect(result.copy).toBe(1);
  expect(result.code).toBe('const x = 1;\n');
  expect(result.text).not.toMatch(/<\/?(think|tool_call)>/);
  expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
});

test('the model panel downloads by URL, and a failed download is removed after a confirmation', async ({ page }) => {
  await openDemo(page);
  const panel = page.locator('#models');
  await panel.getByLabel('Model URL (a GGUF file)').fill(new URL('/models/toy-qwen3/model.gguf', page.url()).href);
  await panel.getByLabel('Name for the model').fill('toy-copy');
  await panel.getByRole('button', { name: 'Download by URL' }).click();
  await expect(panel.locator('[role=status]')).toHaveText('toy-copy downloaded.', { timeout: 60_000 });
  await expect(panel.locator('li', { hasText: 'toy-copy' })).toContainText('downloaded');
  await expect(page.locator('#model option', { hasText: 'toy-copy' })).toHaveCount(1);

  await panel.getByLabel('Model URL (a GGUF file)').fill(new URL('/models/missing/model.gguf', page.url()).href);
  await panel.getByLabel('Name for the model').fill('missing-model');
  await panel.getByRole('button', { name: 'Download by URL' }).click();
  await expect(panel.locator('[role=status]')).toContainText(/missing-model|404|not found/i, { timeout: 60_000 });
  await expect(panel.locator('[role=status]')).toHaveClass(/error/);
  const row = panel.locator('li', { hasText: 'missing-model' });
  await expect(row.getByRole('button', { name: 'Delete missing-model' })).toBeVisible();
  // The confirmation: dismissed keeps the model, accepted deletes it.
  page.once('dialog', (dialog) => void dialog.dismiss());
  await row.getByRole('button', { name: 'Delete missing-model' }).click();
  await expect(row).toHaveCount(1);
  page.once('dialog', (dialog) => void dialog.accept());
  await row.getByRole('button', { name: 'Delete missing-model' }).click();
  await expect(panel.locator('li', { hasText: 'missing-model' })).toHaveCount(0);
});

test('without stored history the page carries the items itself and a tool loop finishes', async ({ page }) => {
  test.setTimeout(600_000);
  const bodies = recordResponsesBodies(page);
  await openDemo(page);
  await page.uncheck('#store');
  const turn = await send(page, 'What is 12 * 7?');
  await expectAnsweredOrExplained(page, turn, 'What is 12 * 7? (store off)');
  const turn2 = await send(page, 'And what is 5 + 5?');
  await expectAnsweredOrExplained(page, turn2, 'And what is 5 + 5? (store off)');
  expect(bodies.length).toBeGreaterThanOrEqual(2);
  for (const body of bodies) {
    expect(body.store).toBe(false);
    expect(body.include).toEqual(['reasoning.encrypted_content']);
    expect(body.previous_response_id).toBeUndefined();
  }
  // Each later request resends what came before: the first message and the model's output items.
  const lastBody = bodies.at(-1)!;
  // The page shows the model its file first (a developer message), then the first message.
  expect(lastBody.input[0]).toMatchObject({ type: 'message', role: 'developer', content: expect.stringContaining('notes.txt holds:') });
  expect(lastBody.input[1]).toMatchObject({ type: 'message', role: 'user', content: 'What is 12 * 7?' });
  expect(lastBody.input.some((i: { type: string }) => i.type === 'reasoning' || i.type === 'message' && (i as { role?: string }).role === 'assistant' || i.type === 'function_call')).toBe(true);
  const calls = lastBody.input.filter((i: { type: string }) => i.type === 'function_call' || i.type === 'custom_tool_call');
  const outputs = lastBody.input.filter((i: { type: string }) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output');
  expect(outputs.map((o: { call_id: string }) => o.call_id)).toEqual(calls.map((c: { call_id: string }) => c.call_id));
  for (const item of lastBody.input.filter((i: { type: string }) => i.type === 'reasoning')) expect(typeof item.encrypted_content).toBe('string');
});

test('an answer cut off at max_output_tokens is left out of the chain: the next message continues from before it', async ({ page }) => {
  test.setTimeout(600_000);
  const bodies = recordResponsesBodies(page);
  await openDemo(page);
  const first = await send(page, 'What is 2 + 3?');
  await expectAnsweredOrExplained(page, first, 'What is 2 + 3?');
  const before = await demoState(page);
  expect(before.previousResponseId).not.toBeNull();
  // A small model's cut-off answer is often a loop; kept in the chain, every later turn loops on it.
  await page.fill('#max-tokens', '3');
  const cut = await send(page, 'Tell me about yourself.');
  await expect(cut.locator('.note')).toContainText('continues from before it');
  const after = await demoState(page);
  expect(after.previousResponseId).toBe(before.previousResponseId);
  expect(after.items.length).toBe(before.items.length);
  await page.fill('#max-tokens', '128');
  const next = await send(page, 'Hello!');
  await expectAnsweredOrExplained(page, next, 'Hello!');
  const hello = bodies.find((b) => JSON.stringify(b.input).includes('"Hello!"'))!;
  expect(hello.previous_response_id).toBe(before.previousResponseId);
  expect(JSON.stringify(hello.input)).not.toContain('Tell me about yourself.');
});

test('the web IDE at /examples/web-ide/: a patch shown as a diff, accepted into the file, undone; offline too', async ({ page, context }) => {
  test.setTimeout(600_000);
  await page.goto('examples/web-ide/');
  await expect(page.locator('h1')).toHaveText('web IDE example');
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  const before = await ideFile(page);
  // The editor is CodeMirror 6: line numbers, highlighting, typing and its own undo.
  const editor = page.locator('#editor .cm-editor');
  await expect(editor).toBeVisible();
  await expect(editor.locator('.cm-lineNumbers .cm-gutterElement', { hasText: /^3$/ })).toBeAttached();
  // Highlighted: the keyword `export` is a styled token.
  const keyword = editor.locator('.cm-line').first().locator('span', { hasText: /^export$/ });
  await expect(keyword).toHaveAttribute('class', /\S/);
  // ...and CodeMirror's styles apply under the page's CSP (no inline <style>): the gutter sits beside the text,
  // the keyword has its own colour.
  expect(await keyword.evaluate((el) => getComputedStyle(el).color)).not.toBe(await editor.locator('.cm-content').evaluate((el) => getComputedStyle(el).color));
  const gutterBox = (await editor.locator('.cm-gutters').boundingBox())!;
  const contentBox = (await editor.locator('.cm-content').boundingBox())!;
  expect(gutterBox.x + gutterBox.width).toBeLessThanOrEqual(contentBox.x + 1);
  await editor.locator('.cm-content').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('// typed');
  expect(await ideFile(page)).toBe(`${before}// typed`);
  await page.keyboard.press('Control+z');
  expect(await ideFile(page)).toBe(before);
  // Each tab keeps its own file.
  await page.getByRole('tab', { name: 'src/config.ts' }).click();
  expect(await ideFile(page)).toContain('retries');
  await page.getByRole('tab', { name: 'src/greet.ts' }).click();
  expect(await ideFile(page)).toBe(before);

  // The real agent through the real UI: its first step is a patch to review.
  await page.click('#run');
  const card = page.locator('#log .patch').first();
  await expect(card).toBeVisible({ timeout: 240_000 });
  await expect(card.locator('.diff .del')).toHaveCount(1);
  expect(await card.locator('.diff .add').count()).toBeGreaterThanOrEqual(1);
  let expected: string;
  if (await card.locator('.accept').isEnabled()) {
    const removed = ((await card.locator('.diff .del').textContent()) ?? '').replace(/^- (\d+: )?/, '');
    const added = (await card.locator('.diff .add').allTextContents()).map((t) => t.replace(/^\+ /, ''));
    const lines = before.split('\n');
    lines.splice(lines.indexOf(removed), 1, ...added);
    expected = lines.join('\n');
    await card.locator('.accept').click();
    await expect(card.locator('.verdict')).toHaveText('Accepted');
  } else {
    // The model's patch changes nothing: reject it, stop the run, and review a known patch through the same card.
    await card.locator('.reject').click();
    await page.click('#stop');
    await expect(page.locator('#run')).toBeEnabled({ timeout: 60_000 });
    const patch = "*** Begin Patch\n*** Update File: src/greet.ts\n@@\n-export function greet(name: string) {\n+export function welcome(name: string) {\n*** End Patch\n";
    void page.evaluate((p) => (window as unknown as { ideAgent: { proposePatch: (p: string) => Promise<string> } }).ideAgent.proposePatch(p), patch);
    expected = before.replace('greet(', 'welcome(');
    const injected = page.locator('#log .patch').last();
    await injected.locator('.accept').click();
    await expect(injected.locator('.verdict')).toHaveText('Accepted');
  }
  expect(await ideFile(page)).toBe(expected);
  await expect(page.locator('#editor .cm-patched').first()).toBeVisible();
  expect(expected).not.toBe(before);
  // Stop ends the run (its next step may be waiting for a review or generating).
  if (await page.locator('#stop').isEnabled()) await page.click('#stop');
  await expect(page.locator('#run')).toBeEnabled({ timeout: 120_000 });
  await expect(page.locator('#undo')).toBeEnabled();
  // Undo takes back every accepted patch, newest first.
  while (await page.locator('#undo').isEnabled()) await page.click('#undo');
  expect(await ideFile(page)).toBe(before);

  await shoot(page, 'web-ide', 1280, 900);
  await shoot(page, 'web-ide', 390, 844);
  await page.setViewportSize({ width: 1280, height: 900 });

  // Offline, once the service worker controls the site, /examples/web-ide/ is still the web IDE.
  await context.setOffline(true);
  await page.reload();
  await expect(page.locator('h1')).toHaveText('web IDE example');
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  await context.setOffline(false);
});

test('/examples/web-ide without the slash redirects to /examples/web-ide/ (server and, offline, the service worker)', async ({ page, context }) => {
  test.setTimeout(300_000);
  const first = await page.request.get('examples/web-ide', { maxRedirects: 0 });
  expect(first.status()).toBe(301);
  expect(first.headers().location).toBe('/examples/web-ide/');
  await page.goto('examples/web-ide?x=1');
  expect(new URL(page.url()).pathname).toBe('/examples/web-ide/');
  expect(new URL(page.url()).search).toBe('?x=1');
  // The page works there: its stylesheet and script loaded (the editor is up, the runtime ready).
  await expect(page.locator('#editor .cm-editor')).toBeVisible();
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  expect(await page.evaluate(() => getComputedStyle(document.body).display)).toBe('grid');
  await expect.poll(() => page.evaluate(() => navigator.serviceWorker.controller !== null), { timeout: 60_000 }).toBe(true);

  // Offline the service worker answers the slashless path with the same redirect, from its cache.
  await context.setOffline(true);
  await page.goto('examples/web-ide');
  expect(new URL(page.url()).pathname).toBe('/examples/web-ide/');
  await expect(page.locator('#editor .cm-editor')).toBeVisible();
  expect(await page.evaluate(() => getComputedStyle(document.body).display)).toBe('grid');
  await context.setOffline(false);
});
