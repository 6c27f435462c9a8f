// Starting and stopping `webgpu-responses serve` as a child process (node tools/cli.mjs serve --port 0 …) for what
// drives it over HTTP (the node-host and client tests, tools/train-toy-model/page_eval.ts): the bound URL is read
// from its stdout, stderr is kept for failure messages.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CLI = join(ROOT, 'tools/cli.mjs');
export const TOY_MODEL = join(ROOT, 'public/models/toy-qwen3/model.gguf');

export interface Served {
  url: string;
  child: ChildProcess;
  stderr: () => string;
}

/**
 * Starts serve with these arguments (after `serve --port 0`); resolves with its URL once it listens. `env` is
 * added to this process's environment.
 */
export async function startServe(args: string[], startMs = 90_000, env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in ${startMs / 1000} s; stderr:\n${err}`)), startMs);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening; stderr:\n${err}`));
    });
  });
  return { url, child, stderr: () => err };
}

/** Sends `signal` and waits (20 s at most, then SIGKILL) for the exit code. */
export async function stopServe(served: Served, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (served.child.exitCode !== null) return served.child.exitCode;
  const exited = once(served.child, 'exit');
  served.child.kill(signal);
  const [code] = (await Promise.race([exited, new Promise((r) => setTimeout(() => r([null]), 20_000))])) as [number | null];
  if (served.child.exitCode === null) served.child.kill('SIGKILL');
  return code;
}

