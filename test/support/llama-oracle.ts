// Node-only: llama.cpp logits through tools/llama-oracle/logits.mjs (node-llama-cpp, CPU, F32 KV cache, flash
// attention off), all jobs in one child process.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LlamaOracleJob {
  /** Path of a GGUF file. */
  model: string;
  tokens: number[];
  /** Greedy continuation length (0 = none). */
  greedy?: number;
}

export interface LlamaOracleResult {
  tokens: number[];
  /** [position][vocab] logits. */
  logits: number[][];
  greedy?: number[];
  /** The logits after feeding greedy[i] (i < greedy.length - 1). */
  greedyLogits?: number[][];
}

const SCRIPT = fileURLToPath(new URL('../../tools/llama-oracle/logits.mjs', import.meta.url));

export function runLlamaOracle(jobs: LlamaOracleJob[]): LlamaOracleResult[] {
  const dir = mkdtempSync(join(tmpdir(), 'llama-oracle-'));
  try {
    const jobsPath = join(dir, 'jobs.json');
    const outPath = join(dir, 'out.json');
    writeFileSync(jobsPath, JSON.stringify(jobs));
    execFileSync(process.execPath, [SCRIPT, '--jobs', jobsPath, '--out', outPath], { stdio: ['ignore', 'ignore', 'inherit'] });
    return JSON.parse(readFileSync(outPath, 'utf8')) as LlamaOracleResult[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each tensor's ggml type id as node-llama-cpp's own GGUF reader sees it (an independent parser of the file). */
export async function llamaTensorTypes(path: string): Promise<Record<string, number>> {
  const { readGgufFileInfo } = (await import('../../tools/llama-oracle/node_modules/node-llama-cpp/dist/index.js')) as {
    readGgufFileInfo: (path: string, options: { logWarnings: boolean }) => Promise<{ fullTensorInfo?: { name: string; ggmlType: number }[] }>;
  };
  const info = await readGgufFileInfo(path, { logWarnings: false });
  return Object.fromEntries((info.fullTensorInfo ?? []).map((t) => [t.name, t.ggmlType]));
}
