// One llama.cpp CPU build for the oracle on every x86-64 host. node-llama-cpp ships ggml's CPU backend compiled for
// a dozen instruction sets (libggml-cpu-{x64,sse42,sandybridge,haswell,skylakex,icelake,zen4,...}.so) and ggml loads
// the one that scores best on the host's CPU. Their numerics differ: on a generated F16 smollm3 model the zen4 build
// (an AMD EPYC with AVX-512) and the haswell build (AVX2, FMA, F16C) disagree by 2.8e-2 in the logits, more than the
// F16 tolerance of the tests that compare against them, so the same commit passed on one CI host and failed on the
// next. The oracle keeps the haswell build (every x86-64 server of the last decade has AVX2) and, for older CPUs,
// the sse42 and plain x64 ones; the others are moved to `unpinned-cpu-variants/` beside the bins folder, where ggml
// does not look. Idempotent; safe when another process pins at the same time.
import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The CPU builds the oracle may load, best first (ggml picks the best the CPU supports). */
export const PINNED_CPU_VARIANTS = ['haswell', 'sse42', 'x64'];

const HERE = dirname(fileURLToPath(import.meta.url));

/** The bins folder of the installed linux-x64 package, or null when it is not installed (other platforms). */
export function oracleBinsDir(root = HERE) {
  const dir = join(root, 'node_modules', '@node-llama-cpp', 'linux-x64', 'bins', 'linux-x64');
  return existsSync(dir) ? dir : null;
}

/** Moves every CPU build but the pinned ones out of `binsDir`; returns the names moved. */
export function pinCpuVariant(binsDir = oracleBinsDir()) {
  if (!binsDir) return [];
  const aside = join(binsDir, '..', 'unpinned-cpu-variants');
  const moved = [];
  for (const name of readdirSync(binsDir)) {
    const variant = /^libggml-cpu-(.+)\.so$/.exec(name)?.[1];
    if (!variant || PINNED_CPU_VARIANTS.includes(variant)) continue;
    mkdirSync(aside, { recursive: true });
    try {
      renameSync(join(binsDir, name), join(aside, name));
      moved.push(name);
    } catch (error) {
      if (error?.code !== 'ENOENT') throw error; // another process moved it first
    }
  }
  return moved;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const moved = pinCpuVariant();
  console.log(moved.length ? `llama.cpp oracle pinned to ${PINNED_CPU_VARIANTS.join('/')}: moved ${moved.join(', ')}` : 'llama.cpp oracle: CPU build already pinned');
}
