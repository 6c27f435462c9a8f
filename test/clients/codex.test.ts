// Codex CLI (`@openai/codex`, its own binary) in `codex exec` against `webgpu-responses serve`, through a custom
// provider with `wire_api = "responses"` in a temporary CODEX_HOME. The model is made up (codex-model.ts): the toy
// tokenizer over one random layer that ends its turn at once, with a 16k context. The test asserts the wire: every
// request Codex made was answered, the turn ended and `codex exec` exited 0.
//
// Codex's own base prompt and tool set come to 16,219 tokens of this tokenizer (about 11k of OpenAI's); their
// prefill takes minutes on SwiftShader, so the default run swaps in a one-line `model_instructions_file` and turns
// the optional tools off (~2.8k tokens, seconds). WEBGPU_RESPONSES_CODEX_FULL=1 runs the full prompt as well.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT, startServe, stopServe, type Served } from '../../tools/serve-process.ts';
import { writeEndOfTurnModel } from './codex-model.ts';
import { fieldSurvey, readRequestLog } from './request-log.ts';

const CODEX = join(ROOT, 'node_modules/.bin/codex');
const API_KEY = 'sk-codex-test';
const full = process.env.WEBGPU_RESPONSES_CODEX_FULL === '1';

let dir: string;
let logFile: string;
let served: Served;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'codex-'));
  logFile = join(dir, 'requests.jsonl');
  const model = writeEndOfTurnModel(join(dir, 'model'));
  served = await startServe(['--model', `codex-eot=${model}`, '--context-length', '16384', '--store', join(dir, 'store'), '--api-key', API_KEY, '--log-requests', logFile]);
});

afterAll(async () => {
  if (served) await stopServe(served);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function codexHome(name: string, short: boolean): string {
  const home = join(dir, name);
  mkdirSync(home, { recursive: true });
  const lines = [
    'model = "codex-eot"',
    'model_provider = "webgpu"',
    'approval_policy = "never"',
    'sandbox_mode = "read-only"',
    'model_context_window = 16384',
  ];
  if (short) {
    writeFileSync(join(home, 'instructions.md'), 'You are a coding agent. Answer briefly.\n');
    lines.push(
      `model_instructions_file = ${JSON.stringify(join(home, 'instructions.md'))}`,
      'web_search = "disabled"',
      '',
      '[features]',
      'goals = false',
      'multi_agent = false',
      'view_image = false',
      'image_generation = false',
      'skill_search = false',
      'shell_snapshot = false',
      'apps = false',
    );
  }
  lines.push(
    '',
    '[model_providers.webgpu]',
    'name = "webgpu-responses"',
    `base_url = ${JSON.stringify(`${served.url}/v1`)}`,
    'wire_api = "responses"',
    'env_key = "WEBGPU_RESPONSES_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    'stream_idle_timeout_ms = 900000',
  );
  writeFileSync(join(home, 'config.toml'), `${lines.join('\n')}\n`);
  return home;
}

async function codexExec(home: string, prompt: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const work = join(dir, 'work');
  mkdirSync(work, { recursive: true });
  const child = spawn(CODEX, ['exec', '--skip-git-repo-check', prompt], {
    cwd: work,
    env: { ...process.env, CODEX_HOME: home, WEBGPU_RESPONSES_KEY: API_KEY, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

describe.skipIf(!existsSync(CODEX))('Codex CLI (codex exec, wire_api = "responses")', () => {
  test('a turn with a short base prompt: every request answered, the turn ends, exit 0', async () => {
    const before = readRequestLog(logFile).length;
    const result = await codexExec(codexHome('home-short', true), 'Say hi', 240_000);
    const sent = readRequestLog(logFile).slice(before);
    const survey = fieldSurvey(sent);
    console.log(`codex exec: exit ${result.code}; ${sent.length} request(s); fields ${survey.fields.join(', ')}; input types ${survey.inputTypes.join(', ')}`);
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    expect(result.stderr).toMatch(/tokens used/);
    expect(result.stderr).not.toMatch(/stream disconnected|error sending request|unexpected status/i);
    const posts = sent.filter((r) => r.method === 'POST' && r.path === '/v1/responses');
    expect(posts.length).toBeGreaterThanOrEqual(1);
    for (const r of posts) {
      expect(r.body?.model).toBe('codex-eot');
      expect(r.body?.stream).toBe(true);
    }
  });

  test.runIf(full)("a turn with Codex's own base prompt and tools (~16k tokens of this model's tokenizer)", async () => {
    const result = await codexExec(codexHome('home-full', false), 'Say hi', 900_000);
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    expect(result.stderr).toMatch(/tokens used/);
  }, 1_000_000);
});
