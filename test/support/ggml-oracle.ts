// Node-only: llama.cpp's own code for weight formats, through ctypes on the libraries that node-llama-cpp ships
// (tools/llama-oracle/node_modules/@node-llama-cpp/linux-x64): ggml's dequantization of raw blocks
// (test/support/ggml-dequantize-oracle.py) and llama_model_quantize, the code behind `llama-quantize`
// (../shared/tools/llama-quantize.py), to make quantized test files the way published ones are made.
// Quantized files are cached per (source, ftype) under the test-model cache dir; nothing needs the network.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEQUANTIZE_SCRIPT = join(ROOT, 'test', 'support', 'ggml-dequantize-oracle.py');
/** The quantizer script of the shared tools (outside this repository: ../shared/tools). */
const QUANTIZE_SCRIPT = process.env.LLAMA_QUANTIZE_SCRIPT ?? join(ROOT, '..', 'shared', 'tools', 'llama-quantize.py');

/** The bins folder of the node-llama-cpp prebuilt package (libllama, libggml-base). */
export function llamaLibDir(): string {
  const require = createRequire(join(ROOT, 'tools', 'llama-oracle', 'package.json'));
  for (const base of require.resolve.paths('@node-llama-cpp/linux-x64') ?? []) {
    const dir = join(base, '@node-llama-cpp', 'linux-x64', 'bins', 'linux-x64');
    if (existsSync(join(dir, 'libggml-base.so'))) return dir;
  }
  throw new Error('@node-llama-cpp/linux-x64 is not installed under tools/llama-oracle (npm ci there)');
}

export interface GgmlDequantizeJob {
  /** ggml type id. */
  type: number;
  /** Raw blocks in the file layout. */
  bytes: Uint8Array;
  elements: number;
}

/** ggml's to_float of each job's blocks (one python process for all). */
export function ggmlDequantize(jobs: GgmlDequantizeJob[]): Float32Array[] {
  const dir = mkdtempSync(join(tmpdir(), 'ggml-dequantize-'));
  try {
    const list = jobs.map((job, i) => {
      const file = join(dir, `${i}.bin`);
      writeFileSync(file, job.bytes);
      return { type: job.type, file, elements: job.elements };
    });
    writeFileSync(join(dir, 'jobs.json'), JSON.stringify(list));
    execFileSync('python3', [DEQUANTIZE_SCRIPT, llamaLibDir(), join(dir, 'jobs.json'), join(dir, 'out.bin')], { stdio: ['ignore', 'ignore', 'inherit'] });
    const out = readFileSync(join(dir, 'out.bin'));
    const all = new Float32Array(out.buffer, out.byteOffset, out.byteLength / 4);
    let at = 0;
    return jobs.map((job) => {
      const values = all.slice(at, at + job.elements);
      at += job.elements;
      return values;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The llama_ftype names llama-quantize.py takes that the tests use. */
export type LlamaFtype =
  | 'Q4_K_M' | 'Q4_K_S' | 'Q5_K_M' | 'Q5_K_S' | 'Q3_K_S' | 'Q3_K_M' | 'Q3_K_L' | 'Q2_K' | 'Q4_0' | 'Q4_1' | 'Q5_0'
  | 'Q5_1' | 'Q6_K' | 'Q8_0' | 'IQ4_NL' | 'IQ4_XS' | 'F16' | 'BF16' | 'TQ1_0' | 'TQ2_0' | 'MXFP4_MOE';

/**
 * `source` (an F32 or F16 GGUF) quantized by llama.cpp's llama_model_quantize to `ftype`, cached beside the
 * source (a file named by the ftype in the source's folder). Safe when several workers ask at once.
 */
export function llamaQuantize(source: string, ftype: LlamaFtype): string {
  const out = join(dirname(source), `model-${ftype.toLowerCase()}.gguf`);
  if (existsSync(out)) return out;
  if (!existsSync(QUANTIZE_SCRIPT)) throw new Error(`llama-quantize.py not found at ${QUANTIZE_SCRIPT} (set LLAMA_QUANTIZE_SCRIPT)`);
  mkdirSync(dirname(out), { recursive: true });
  const staging = `${out}.${process.pid}.${Date.now()}.tmp`;
  try {
    execFileSync('python3', [QUANTIZE_SCRIPT, llamaLibDir(), source, staging, ftype], { stdio: ['ignore', 'ignore', 'pipe'] });
    renameSync(staging, out);
  } finally {
    rmSync(staging, { force: true });
  }
  return out;
}
