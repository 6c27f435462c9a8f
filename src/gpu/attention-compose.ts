// The attention kernels composed per shape, their consts set and every loop marked `// unroll` written out, so that
// each index into their private arrays (queries, accumulators) is a constant (registers on a GPU; SwiftShader makes
// every non-constant index a per-lane gather or scatter):
// - shaders/attention_prefill.wgsl per head dim, rows per invocation and lanes sharing K/V loads (HEAD_DIM, ROWS,
//   LANES; LANES 4 also turns on `enable subgroups;`, the subgroup_invocation_id builtin and the shuffle of
//   from_lane);
// - shaders/attention.wgsl (decode, and prefill where it is not tiled) per head dim, rotated dims and query heads per
//   invocation (HEAD_DIM, ROT_DIMS, HEADS);
// - shaders/attention_decode.wgsl (the same on GPUs: a workgroup per KV head's chunk of query heads and split) per
//   head dim, rotated dims, query heads per workgroup and workgroup size (HEAD_DIM, ROT_DIMS, HEADS, WG).
// One module per shape, built once.
import type { KernelSource } from './pipeline-cache.ts';
import { attention, attentionDecode, attentionPrefill } from './shaders.ts';

/** Rows per invocation the composer accepts (private memory grows with rows x head dim). */
export const MAX_PREFILL_ROWS = 16;

const composed = new Map<string, KernelSource>();

/**
 * attention_prefill for head dim `headDim` (a multiple of 4, at most 256), `rows` query rows per invocation and
 * `lanes` (1, or 4: subgroups of exactly 4 lanes share each K/V row's loads; head dim a multiple of 16).
 */
export function attentionPrefillSource(headDim: number, rows: number, lanes: 1 | 4 = 1): KernelSource {
  if (!(headDim % 4 === 0 && headDim >= 4 && headDim <= 256)) throw new RangeError(`attention_prefill: head dim ${headDim} must be a multiple of 4 up to 256`);
  if (!(Number.isInteger(rows) && rows >= 1 && rows <= MAX_PREFILL_ROWS)) throw new RangeError(`attention_prefill: rows ${rows} must be 1..${MAX_PREFILL_ROWS}`);
  if (lanes !== 1 && !(lanes === 4 && headDim % 16 === 0)) throw new RangeError(`attention_prefill: lanes ${lanes} needs 4 and a head dim multiple of 16 (got ${headDim})`);
  const key = `${headDim}/${rows}/${lanes}`;
  let kernel = composed.get(key);
  if (!kernel) {
    let code = setConst(attentionPrefill.code, 'HEAD_DIM', headDim);
    code = setConst(code, 'ROWS', rows);
    code = setConst(code, 'LANES', lanes);
    if (lanes > 1) {
      code = `enable subgroups;\n${code}`;
      code = replaceLine(code, '  return x; // LANES > 1: subgroupShuffle', '  return subgroupShuffle(x, lane);');
      code = replaceLine(code, '  let lane = 0u; // LANES > 1: subgroup_invocation_id', '');
      code = replaceLine(code, '  @builtin(local_invocation_index) lid: u32,', '  @builtin(local_invocation_index) lid: u32,\n  @builtin(subgroup_invocation_id) lane: u32,');
    }
    code = unrollLoops(code, { HD4: headDim / 4, HDL: headDim / 4 / lanes, ROWS: rows });
    kernel = { name: `attention_prefill (head dim ${headDim}, ${rows} rows${lanes > 1 ? `, ${lanes} lanes` : ''})`, code };
    composed.set(key, kernel);
  }
  return kernel;
}

/** Query heads per invocation attentionSource accepts (private memory grows with heads x head dim). */
export const MAX_ATTENTION_HEADS = 8;
/** The largest head dim whose loops attentionSource writes out (see there). */
const MAX_UNROLLED_HEAD_DIM = 64;

/**
 * attention.wgsl for head dim `headDim` (a multiple of 4, at most 256), `ropeDims` rotated dims (its ROPE path: a
 * multiple of 8 for NEOX pairs, of 4 for interleaved ones, at most the head dim; any such value where the kernel runs
 * without ROPE) and `heads` query heads of one KV head per invocation (1..MAX_ATTENTION_HEADS).
 */
export function attentionSource(headDim: number, ropeDims: number, heads: number): KernelSource {
  if (!(headDim % 4 === 0 && headDim >= 4 && headDim <= 256)) throw new RangeError(`attention: head dim ${headDim} must be a multiple of 4 up to 256`);
  if (!(ropeDims % 4 === 0 && ropeDims >= 4 && ropeDims <= headDim)) throw new RangeError(`attention: ${ropeDims} rotated dims must be a multiple of 4 up to the head dim ${headDim}`);
  if (!(Number.isInteger(heads) && heads >= 1 && heads <= MAX_ATTENTION_HEADS)) throw new RangeError(`attention: heads ${heads} must be 1..${MAX_ATTENTION_HEADS}`);
  const key = `decode ${headDim}/${ropeDims}/${heads}`;
  let kernel = composed.get(key);
  if (!kernel) {
    let code = setConst(attention.code, 'HEAD_DIM', headDim, 'attention.wgsl');
    code = setConst(code, 'ROT_DIMS', ropeDims, 'attention.wgsl');
    code = setConst(code, 'HEADS', heads, 'attention.wgsl');
    // The loops over the head dim written out only up to head dim 64: there they are what several heads an
    // invocation need (Qwen2.5-0.5B's 7 heads of 64 at 2048 positions: 2.3 against 4.9 ms a layer on SwiftShader,
    // compiled in 2.4 s against 1.3), past it they gain ~3% for seconds more of compiling (head dim 128, 4 heads:
    // 7.0 against 0.9 s; 256, 2 heads: 13.6 against 0.7 s, when RoPE's loops were written out too). The loops over
    // the heads are always written out; RoPE's never (once an invocation and head).
    if (headDim > MAX_UNROLLED_HEAD_DIM) code = keepLoops(code, ['HD4']);
    code = unrollLoops(code, { HD4: headDim / 4, HEADS: heads });
    kernel = { name: `attention (head dim ${headDim}${ropeDims !== headDim ? `, ${ropeDims} rotated` : ''}${heads > 1 ? `, ${heads} heads` : ''})`, code };
    composed.set(key, kernel);
  }
  return kernel;
}

/** Workgroup memory attentionDecodeSource's kernel declares (bytes), for a shape to fit the device's limit. */
export function attentionDecodeSharedBytes(headDim: number, heads: number, workgroupSize: number): number {
  return (heads + 1) * headDim * 4 + 2 * heads * workgroupSize * 4 + (heads + 1) * 4;
}

/**
 * attention_decode.wgsl for head dim `headDim`, `ropeDims` rotated dims (as attentionSource), `heads` query heads of
 * one KV head per workgroup (1..MAX_ATTENTION_HEADS) and `workgroupSize` invocations (a power of two, at least head
 * dim / 4: its positions per tile and its value lanes).
 */
export function attentionDecodeSource(headDim: number, ropeDims: number, heads: number, workgroupSize: number): KernelSource {
  if (!(headDim % 4 === 0 && headDim >= 4 && headDim <= 256)) throw new RangeError(`attention_decode: head dim ${headDim} must be a multiple of 4 up to 256`);
  if (!(ropeDims % 4 === 0 && ropeDims >= 4 && ropeDims <= headDim)) throw new RangeError(`attention_decode: ${ropeDims} rotated dims must be a multiple of 4 up to the head dim ${headDim}`);
  if (!(Number.isInteger(heads) && heads >= 1 && heads <= MAX_ATTENTION_HEADS)) throw new RangeError(`attention_decode: heads ${heads} must be 1..${MAX_ATTENTION_HEADS}`);
  if (!(Number.isInteger(Math.log2(workgroupSize)) && workgroupSize >= headDim / 4)) throw new RangeError(`attention_decode: workgroup size ${workgroupSize} must be a power of two of at least head dim / 4 (${headDim / 4})`);
  const key = `decode-wg ${headDim}/${ropeDims}/${heads}/${workgroupSize}`;
  let kernel = composed.get(key);
  if (!kernel) {
    let code = setConst(attentionDecode.code, 'HEAD_DIM', headDim, 'attention_decode.wgsl');
    code = setConst(code, 'ROT_DIMS', ropeDims, 'attention_decode.wgsl');
    code = setConst(code, 'HEADS', heads, 'attention_decode.wgsl');
    code = setConst(code, 'WG', workgroupSize, 'attention_decode.wgsl');
    code = unrollLoops(code, { HEADS: heads });
    kernel = { name: `attention_decode (head dim ${headDim}${ropeDims !== headDim ? `, ${ropeDims} rotated` : ''}, ${heads} heads, ${workgroupSize} invocations)`, code };
    composed.set(key, kernel);
  }
  return kernel;
}

function setConst(code: string, name: string, value: number, file = 'attention_prefill.wgsl'): string {
  const pattern = new RegExp(`^const ${name}: u32 = \\d+u;$`, 'm');
  if (!pattern.test(code)) throw new Error(`${file}: no 'const ${name}: u32 = ...u;' line to set`);
  return code.replace(pattern, `const ${name}: u32 = ${value}u;`);
}

function replaceLine(code: string, line: string, by: string): string {
  const lines = code.split('\n');
  const at = lines.indexOf(line);
  if (at < 0 || lines.indexOf(line, at + 1) >= 0) throw new Error(`attention_prefill.wgsl: expected the line '${line.trim()}' once`);
  lines.splice(at, 1, ...(by ? [by] : []));
  return lines.join('\n');
}

/** The `// unroll` marks taken off the loops over these bounds (they stay loops). */
export function keepLoops(code: string, bounds: readonly string[]): string {
  if (bounds.length === 0) return code;
  const marked = new RegExp(`^[ \\t]*\\/\\/ unroll\\n([ \\t]*for \\(var (\\w+) = 0u; \\2 < (?:${bounds.join('|')}); \\2\\+\\+\\) \\{)$`, 'gm');
  return code.replace(marked, '$1');
}

const LOOP = /^([ \t]*)\/\/ unroll\n[ \t]*for \(var (\w+) = 0u; \2 < (\w+); \2\+\+\) \{\n/m;

/**
 * Each `// unroll` + `for (var x = 0u; x < N; x++) {` loop (N a name in `bounds` or a literal like `8u`) written
 * out as N blocks `{ const x = <k>u; body }`, inner marked loops too. Braces in the body must balance (no braces
 * in comments or strings).
 */
export function unrollLoops(code: string, bounds: Readonly<Record<string, number>>): string {
  const match = LOOP.exec(code);
  if (!match) return code;
  const [whole, indent, name, bound] = match;
  const count = bounds[bound] ?? (/^\d+u?$/.test(bound) ? Number.parseInt(bound, 10) : NaN);
  if (!Number.isInteger(count)) throw new Error(`unroll: loop bound '${bound}' is neither a known const nor a literal`);
  const bodyStart = match.index + whole.length;
  let depth = 1;
  let at = bodyStart;
  for (; at < code.length && depth > 0; at++) {
    if (code[at] === '{') depth++;
    else if (code[at] === '}') depth--;
  }
  if (depth !== 0) throw new Error(`unroll: unbalanced braces in the loop over ${name}`);
  const body = unrollLoops(code.slice(bodyStart, at - 1), bounds);
  const lineEnd = code.indexOf('\n', at);
  const rest = lineEnd < 0 ? '' : code.slice(lineEnd + 1);
  const copies = Array.from({ length: count }, (_, k) => `${indent}{\n${indent}  const ${name} = ${k}u;\n${body}${indent}}\n`).join('');
  return code.slice(0, match.index) + copies + unrollLoops(rest, bounds);
}
