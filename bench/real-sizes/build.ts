// Builds the random-weight model of a catalog entry's real shape (shapes.ts) under .tmp/real-sizes/<id>/ and
// llama.cpp's logits on it (the reference the bench's logits check compares with):
//   npx tsx bench/real-sizes/build.ts <catalog-id> [--positions 8]
// 1. make-test-model writes ONE layer in F32 at the real vocabulary (no hf/ files);
// 2. llama.cpp's llama_model_quantize (../shared/tools/llama-quantize.py) quantizes it to the catalog file's type,
//    choosing each tensor's type as for the published file (fallbacks where rows are not whole super-blocks);
// 3. bench/gpu/models.ts's repeatLayers copies that layer to every block: model.gguf (the real layer count);
// 4. node-llama-cpp (tools/llama-oracle) evaluates a prompt and its greedy continuation on model.gguf: ref.json
//    (the token sequence, llama.cpp's greedy tokens, the tensor types) and ref-logits.f32 ([position][vocab] f32).
// The prompt holds ids from the whole vocabulary (the last row, rows past the middle), so the embedding lookup
// and the LM head are read at their far rows. Cached: rebuilt only when the shape or this recipe changes.
// Big files stay under .tmp/ (ignored); the F32 and one-layer intermediates are deleted as soon as used.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTestModel } from '../../tools/make-test-model/build.ts';
import { buildByteLevelBpeVocab, tokenizerConfigJson, tokenizerJson } from '../../tools/make-test-model/byte-level-bpe.ts';
import { realTokenizerVocab } from '../../tools/make-test-model/real-tokenizer.ts';
import { CHATML_TOOLS_TEMPLATE } from '../../tools/make-test-model/chatml-template.ts';
import { llamaLibDir } from '../../test/support/ggml-oracle.ts';
import { runLlamaOracle } from '../../test/support/llama-oracle.ts';
import { repeatLayers } from '../gpu/models.ts';
import { realSizeShape, type RealSizeShape } from './shapes.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const REAL_SIZES_DIR = join(ROOT, '.tmp', 'real-sizes');
const QUANTIZE_SCRIPT = process.env.LLAMA_QUANTIZE_SCRIPT ?? join(ROOT, '..', 'shared', 'tools', 'llama-quantize.py');
const RECIPE = 2;

export interface RealSizeRef {
  id: string;
  /** The folder under .tmp/real-sizes. */
  dir: string;
  hash: string;
  /** The tokens whose logits ref-logits.f32 holds, position by position (prompt, then greedy[0 .. n-2]). */
  tokens: number[];
  prompt: number[];
  /** llama.cpp's greedy continuation of the prompt. */
  greedy: number[];
  vocab: number;
  layers: number;
  ftype: string;
  file_bytes: number;
  /** Tensor types in model.gguf: type name -> tensor count. */
  tensor_types: Record<string, number>;
  build_s: { generate: number; quantize: number; repeat: number; llama_logits: number };
}

function writeChunks(path: string, chunks: Uint8Array[]): number {
  const fd = openSync(path, 'w');
  let n = 0;
  try {
    for (const c of chunks) {
      let at = 0;
      while (at < c.byteLength) at += writeSync(fd, c, at, Math.min(c.byteLength - at, 1 << 30)); // (one write takes < 2 GiB)
      n += c.byteLength;
    }
  } finally {
    closeSync(fd);
  }
  return n;
}

/** Prompt ids: low (byte tokens and merges), the middle and the top of the vocabulary. */
function promptTokens(vocab: number, count: number): number[] {
  const pool = [72, 301, vocab - 1, Math.floor(vocab * 0.55), 101, vocab - 4097, 44, Math.floor(vocab * 0.8), 260, 15];
  for (let i = 1; pool.length < count; i++) pool.push((i * 7919) % vocab);
  return pool.slice(0, Math.max(2, count));
}

/** The folder of a built shape under .tmp/real-sizes: the id, with `-p<N>` for a position count other than the scope's. */
export function realSizeDirName(shape: RealSizeShape, positions: number): string {
  return positions === defaultPositions(shape) ? shape.id : `${shape.id}-p${positions}`;
}

/** Logit positions checked by default: 8 for the sub-1B shapes, 3 for the 1B and 3-4B ones. */
export function defaultPositions(shape: RealSizeShape): number {
  return shape.scope === 'full' ? 8 : 3;
}

export async function buildRealSize(shape: RealSizeShape, positions: number, log = (m: string) => process.stderr.write(`[real-sizes] ${m}\n`)): Promise<RealSizeRef> {
  const dir = join(REAL_SIZES_DIR, realSizeDirName(shape, positions));
  const promptLength = Math.ceil(positions / 2) + 1;
  const greedyLength = positions - promptLength + 1;
  const hash = createHash('sha256').update(JSON.stringify({ RECIPE, shape, positions })).digest('hex').slice(0, 16);
  const refPath = join(dir, 'ref.json');
  if (existsSync(refPath) && existsSync(join(dir, 'model.gguf')) && existsSync(join(dir, 'ref-logits.f32'))) {
    const ref = JSON.parse(readFileSync(refPath, 'utf8')) as RealSizeRef;
    if (ref.hash === hash) return { ...ref, dir: realSizeDirName(shape, positions) };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const layers = shape.options.layers ?? 1;
  const t0 = performance.now();
  log(`${shape.id}: generating one F32 layer at vocabulary ${shape.vocab} ...`);
  const bpe = buildByteLevelBpeVocab(250);
  const vocab = realTokenizerVocab(tokenizerJson(bpe), tokenizerConfigJson(bpe, CHATML_TOOLS_TEMPLATE, 4096), { vocabSize: shape.vocab });
  const f32Path = join(dir, 'one-layer-f32.gguf');
  {
    // Embedding rows of std 1/sqrt(hidden): the tied head then gives logits of std ~1 (N(0, 1) rows: sqrt(hidden),
    // ~30-55 here), the scale the 0.25 tolerance is stated for.
    const built = buildTestModel({ ...shape.options, type: 'F32', layers: 1, seed: 11, ggufOnly: true, embeddingStd: 1 / Math.sqrt(shape.options.hidden ?? 256) }, vocab);
    writeChunks(f32Path, built.files['model.gguf']);
  }
  const t1 = performance.now();
  log(`${shape.id}: llama_model_quantize to ${shape.ftype} ...`);
  const quantPath = join(dir, 'one-layer.gguf');
  execFileSync('python3', [QUANTIZE_SCRIPT, llamaLibDir(), f32Path, quantPath, shape.ftype], { stdio: ['ignore', 'ignore', 'pipe'] });
  rmSync(f32Path);
  const t2 = performance.now();
  log(`${shape.id}: repeating the layer ${layers} times ...`);
  const modelPath = join(dir, 'model.gguf');
  const chunks = repeatLayers(new Uint8Array(readFileSync(quantPath)), layers);
  const fileBytes = writeChunks(modelPath, chunks);
  rmSync(quantPath);
  const t3 = performance.now();
  log(`${shape.id}: llama.cpp logits (${positions} positions) ...`);
  const prompt = promptTokens(shape.vocab, promptLength);
  const [oracle] = runLlamaOracle([{ model: modelPath, tokens: prompt, greedy: greedyLength }]);
  const rows = [...oracle.logits, ...(oracle.greedyLogits ?? [])];
  const tokens = [...prompt, ...(oracle.greedy ?? []).slice(0, -1)];
  if (rows.length !== tokens.length) throw new Error(`llama.cpp gave ${rows.length} rows for ${tokens.length} tokens`);
  const logits = new Float32Array(rows.length * shape.vocab);
  rows.forEach((row, p) => {
    if (row.length !== shape.vocab) throw new Error(`llama.cpp's logits have ${row.length} entries, not ${shape.vocab}`);
    logits.set(row, p * shape.vocab);
  });
  writeFileSync(join(dir, 'ref-logits.f32'), new Uint8Array(logits.buffer));
  const t4 = performance.now();
  const { llamaTensorTypes } = await import('../../test/support/llama-oracle.ts');
  const types = await llamaTensorTypes(modelPath);
  const { GGML_TYPE_NAMES } = await import('../../src/common/weight-formats.ts');
  const tensorTypes: Record<string, number> = {};
  for (const id of Object.values(types)) {
    const name = (GGML_TYPE_NAMES as Record<number, string>)[id] ?? `ggml type ${id}`;
    tensorTypes[name] = (tensorTypes[name] ?? 0) + 1;
  }
  const s = (a: number, b: number) => Math.round((b - a) / 100) / 10;
  const ref: RealSizeRef = {
    id: shape.id, dir: realSizeDirName(shape, positions), hash, tokens, prompt, greedy: oracle.greedy ?? [], vocab: shape.vocab, layers, ftype: shape.ftype, file_bytes: fileBytes, tensor_types: tensorTypes,
    build_s: { generate: s(t0, t1), quantize: s(t1, t2), repeat: s(t2, t3), llama_logits: s(t3, t4) },
  };
  writeFileSync(refPath, JSON.stringify(ref, null, 1));
  log(`${shape.id}: ${(fileBytes / 1e6).toFixed(0)} MB, types ${JSON.stringify(tensorTypes)}, ${JSON.stringify(ref.build_s)} s`);
  if (statSync(modelPath).size !== fileBytes) throw new Error('model.gguf was not written whole');
  return ref;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [id, ...rest] = process.argv.slice(2);
  if (!id) throw new Error('usage: build.ts <catalog-id> [--positions N]');
  const at = rest.indexOf('--positions');
  const shape = realSizeShape(id);
  const positions = at >= 0 ? Number(rest[at + 1]) : defaultPositions(shape);
  const ref = await buildRealSize(shape, positions);
  process.stdout.write(`${JSON.stringify({ ...ref, tokens: ref.tokens.length })}\n`);
}
