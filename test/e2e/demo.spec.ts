// The demo page and the embedding, as a person and a web IDE use them: the demo answers offline with reasoning,
// a tool call and a final answer rendered; the `openai` SDK in a page gets a streamed response and a tool call;
// the web-IDE example applies a patch to its file. Screenshots of each go to .tmp/screenshots and must not be blank.
import { expect, test, type Page } from '@playwright/test';
import { copyFileSync, mkdirSync } from 'node:fs';
import { makeTestModel } from '../support/test-models.ts';

const shots = '.tmp/screenshots';
mkdirSync(shots, { recursive: true });

/** A screenshot that is not one flat colour (a blank or crashed page would be). */
async function screenshotNotBlank(page: Page, name: string) {
  const png = await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
  const colours = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const canvas = new OffscreenCanvas(img.width, img.height);
    const ctx = canvas.getContext('2d')!;
    ctx.drawImage(img, 0, 0);
    const data = ctx.getImageData(0, 0, img.width, img.height).data;
    const seen = new Set<number>();
    for (let i = 0; i < data.length && seen.size < 64; i += 4 * 97) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    return seen.size;
  }, png.toString('base64'));
  expect(colours, `${name} screenshot looks blank`).toBeGreaterThan(8);
}

test('the demo answers offline with reasoning, a tool call and a final answer rendered', async ({ page, context }) => {
  await page.goto('/');
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  await context.setOffline(true);
  await page.reload();
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  await page.fill('#prompt', 'What is 12 * 7?');
  await page.keyboard.press('Control+Enter');
  await expect(page.locator('#send')).toBeEnabled({ timeout: 150_000 });
  await expect(page.locator('.assistant details.reasoning').first()).toBeAttached();
  await expect(page.locator('.assistant .tool').first()).toContainText('calculator');
  await expect(page.locator('.assistant .phase', { hasText: 'Answer' }).first()).toBeAttached();
  await expect(page.locator('#stats')).toContainText('tokens/s');
  await screenshotNotBlank(page, 'demo');
  await context.setOffline(false);
});

test('the openai SDK in a page gets a streamed response and a tool call', async ({ page }) => {
  await page.goto('examples/web-ide/');
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  const result = await page.evaluate(async () => {
    const { client } = (window as unknown as { ideAgent: { client: import('openai').default } }).ideAgent;
    // A tool the bundled model knows (the demo's calculator). On a tool it never saw (get_weather with a `city`
    // parameter where training had `location`) the strict schema makes it write `city`, and the toy model then
    // babbles inside the string until max_output_tokens: a limit of the model, not of the stream.
    const stream = client.responses.stream({
      model: 'default',
      input: 'What is 12 * 7?',
      tools: [
        {
          type: 'function',
          name: 'calculator',
          description: 'Evaluate an arithmetic expression with + - * / ( ) and decimals.',
          parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'], additionalProperties: false },
          strict: true,
        },
      ],
      tool_choice: 'required',
      max_output_tokens: 200,
      temperature: 0,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    return { types, output: final.output, status: final.status };
  });
  expect(result.types[0]).toBe('response.created');
  expect(result.types).toContain('response.function_call_arguments.delta');
  const call = result.output.find((o) => o.type === 'function_call');
  expect(call, JSON.stringify(result.output)).toBeTruthy();
  if (call?.type !== 'function_call') throw new Error('no function call');
  expect(result.status).toBe('completed');
  expect(call.name).toBe('calculator');
  const args = JSON.parse(call.arguments) as Record<string, unknown>;
  expect(Object.keys(args)).toEqual(['expression']);
  expect(typeof args.expression).toBe('string');
});

test('the web-IDE example applies a patch from the agent to its file', async ({ page }) => {
  // A changed literal in src/config.ts: the bundled toy model writes that edit exactly; its renames of
  // src/greet.ts copy the old line unchanged, which the page refuses ("this patch changes nothing").
  await page.goto('examples/web-ide/');
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  const ideFile = () => page.evaluate(() => (window as unknown as { ideAgent: { file: () => string } }).ideAgent.file());
  await page.evaluate(() => (window as unknown as { ideAgent: { open: (name: string) => void } }).ideAgent.open('src/config.ts'));
  const before = await ideFile();
  expect(before).toContain('export const retries = 3;');
  const outcome = await page.evaluate(async () => {
    const { runAgent } = (window as unknown as { ideAgent: { runAgent: (t: string) => Promise<{ patches: number }> } }).ideAgent;
    return runAgent("I'd like retries to be 42.");
  });
  const log = await page.textContent('#log');
  // Every call is constrained by the apply_patch grammar, so each parses; it must also have been applied.
  expect(log).toContain('apply_patch →');
  expect(outcome.patches, log ?? '').toBeGreaterThan(0);
  expect(await ideFile(), log ?? '').toBe(before.replace('export const retries = 3;', 'export const retries = 42;'));
  await screenshotNotBlank(page, 'web-ide');
});

test('the demo imports a local GGUF file through its model panel, lists it with storage use and can answer with it', async ({ page }) => {
  const model = await makeTestModel({ arch: 'llama', type: 'Q4_0', seed: 11 });
  copyFileSync(model.ggufPath, '.tmp/demo-import.gguf');
  await page.goto('/');
  await expect(page.locator('#status')).toHaveText(/^Ready/, { timeout: 150_000 });
  await expect(page.locator('#models .storage')).toContainText('Storage:');
  await expect(page.locator('#models li').first()).toContainText('toy-qwen3');
  await page.setInputFiles('#models input[type=file]', '.tmp/demo-import.gguf');
  await expect(page.locator('#models [role=status]')).toHaveText('demo-import.gguf imported.', { timeout: 60_000 });
  await expect(page.locator('#models li', { hasText: 'demo-import' })).toContainText('downloaded');
  await expect(page.locator('#model option', { hasText: 'demo-import' })).toHaveCount(1);
  await page.selectOption('#model', 'demo-import');
  await page.fill('#max-tokens', '8');
  await page.uncheck('#tools');
  await page.fill('#prompt', 'Hello');
  await page.click('#send');
  await expect(page.locator('#send')).toBeEnabled({ timeout: 120_000 });
  await expect(page.locator('#stats')).toContainText('tokens/s');
  await expect(page.locator('.assistant .error')).toHaveCount(0);
});
