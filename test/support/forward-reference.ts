// Plain TypeScript references for the forward-pass kernels (weight products, embedding, RoPE, attention,
// SwiGLU, add, argmax), computed in f64 from the kernels' exact inputs, and random data in the GPU weight layouts.
// The dequantizers here are written from the block definitions (llama.cpp's dequantize_row_* loops), block by
// block, independently of the WGSL (which decodes by words) and of src/model/dequantize.ts.
import type { Reference } from './kernel-reference.ts';

/** Weight types of the product kernels (F32 and F16 as blocks of 4 weights). */
export type QuantType = 'F32' | 'F16' | 'Q8_0' | 'Q4_0' | 'Q4_K' | 'Q6_K';

/** Elements per block and bytes per block in the GPU layout (src/model/tensor-types.ts). */
export const QUANT_BLOCKS: Readonly<Record<QuantType, { elements: number; bytes: number }>> = {
  F32: { elements: 4, bytes: 16 },
  F16: { elements: 4, bytes: 8 },
  Q8_0: { elements: 32, bytes: 36 },
  Q4_0: { elements: 32, bytes: 20 },
  Q4_K: { elements: 256, bytes: 144 },
  Q6_K: { elements: 256, bytes: 212 },
};

/** The value of an IEEE half-float bit pattern. */
export function halfBitsToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** A random positive normal half float in [2^minExp, 2^(maxExp+1)), as bits. */
function randomHalfBits(random: () => number, minExp: number, maxExp: number): number {
  const exponent = minExp + 15 + Math.floor(random() * (maxExp - minExp + 1));
  return (exponent << 10) | Math.floor(random() * 1024);
}

/**
 * `rows` rows of `k` random elements of `type`, in the GPU layout: scales are small positive halves (like a real
 * model's), every quant byte random (so every code path of the bit unpacking is hit, including negative Q6_K
 * and Q8_0 values and the top bits of the Q4_K 6-bit scales).
 */
export function randomQuantRows(random: () => number, type: QuantType, rows: number, k: number): Uint8Array {
  const { elements, bytes } = QUANT_BLOCKS[type];
  if (k % elements !== 0) throw new Error(`k = ${k} is not a multiple of the ${type} block (${elements})`);
  const blocks = (rows * k) / elements;
  const out = new Uint8Array(blocks * bytes);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const at = b * bytes;
    for (let i = 0; i < bytes; i++) out[at + i] = Math.floor(random() * 256);
    switch (type) {
      case 'F32':
        for (let i = 0; i < 4; i++) view.setFloat32(at + 4 * i, random() * 2 - 1, true);
        break;
      case 'F16':
        for (let i = 0; i < 4; i++) view.setUint16(at + 2 * i, randomHalfBits(random, -8, 0) | (random() < 0.5 ? 0x8000 : 0), true);
        break;
      case 'Q8_0':
      case 'Q4_0':
        // The GPU layout's d: the f32 of an f16 (src/common/weight-formats.ts widens it at upload).
        view.setFloat32(at, halfBitsToNumber(randomHalfBits(random, -12, -7)), true);
        break;
      case 'Q4_K':
        view.setUint16(at, randomHalfBits(random, -14, -10), true); // d
        view.setUint16(at + 2, randomHalfBits(random, -14, -10), true); // dmin
        break;
      case 'Q6_K':
        view.setUint16(at + 208, randomHalfBits(random, -14, -10), true);
        view.setUint16(at + 210, 0, true);
        break;
    }
  }
  return out;
}

/**
 * Dequantized rows of a GPU-layout buffer, split as value = scaled - offset (offset is the Q4_K min term, 0 for
 * the others), both exact in f64: `scaled` and `offset` give the rounding-error magnitude of a product.
 */
export function dequantizeRows(type: QuantType, data: Uint8Array, rows: number, k: number): { scaled: Float64Array; offset: Float64Array } {
  const { elements, bytes } = QUANT_BLOCKS[type];
  const scaled = new Float64Array(rows * k);
  const offset = new Float64Array(rows * k);
  const half = (at: number) => halfBitsToNumber(data[at] | (data[at + 1] << 8));
  const f32 = (at: number) => new DataView(data.buffer, data.byteOffset).getFloat32(at, true);
  const int8 = (v: number) => (v << 24) >> 24;
  for (let b = 0; b < (rows * k) / elements; b++) {
    const at = b * bytes;
    const y = b * elements;
    switch (type) {
      case 'F32':
        for (let j = 0; j < 4; j++) scaled[y + j] = new DataView(data.buffer, data.byteOffset).getFloat32(at + 4 * j, true);
        break;
      case 'F16':
        for (let j = 0; j < 4; j++) scaled[y + j] = half(at + 2 * j);
        break;
      case 'Q8_0': {
        const d = f32(at);
        for (let j = 0; j < 32; j++) scaled[y + j] = d * int8(data[at + 4 + j]);
        break;
      }
      case 'Q4_0': {
        const d = f32(at);
        for (let j = 0; j < 16; j++) {
          scaled[y + j] = d * ((data[at + 4 + j] & 15) - 8);
          scaled[y + j + 16] = d * ((data[at + 4 + j] >> 4) - 8);
        }
        break;
      }
      case 'Q4_K': {
        const d = half(at);
        const dmin = half(at + 2);
        const sc = at + 4;
        const scaleMin = (j: number): [number, number] =>
          j < 4
            ? [data[sc + j] & 63, data[sc + j + 4] & 63]
            : [(data[sc + j + 4] & 15) | ((data[sc + j - 4] >> 6) << 4), (data[sc + j + 4] >> 4) | ((data[sc + j] >> 6) << 4)];
        for (let chunk = 0; chunk < 4; chunk++) {
          const [s1, m1] = scaleMin(2 * chunk);
          const [s2, m2] = scaleMin(2 * chunk + 1);
          for (let l = 0; l < 32; l++) {
            const q = data[at + 16 + 32 * chunk + l];
            scaled[y + 64 * chunk + l] = d * s1 * (q & 15);
            offset[y + 64 * chunk + l] = dmin * m1;
            scaled[y + 64 * chunk + 32 + l] = d * s2 * (q >> 4);
            offset[y + 64 * chunk + 32 + l] = dmin * m2;
          }
        }
        break;
      }
      case 'Q6_K': {
        const d = half(at + 208);
        for (let n = 0; n < 2; n++) {
          const ql = at + 64 * n;
          const qh = at + 128 + 32 * n;
          const sc = at + 192 + 8 * n;
          const yy = y + 128 * n;
          for (let l = 0; l < 32; l++) {
            const is = l >> 4;
            const q1 = ((data[ql + l] & 15) | ((data[qh + l] & 3) << 4)) - 32;
            const q2 = ((data[ql + l + 32] & 15) | (((data[qh + l] >> 2) & 3) << 4)) - 32;
            const q3 = ((data[ql + l] >> 4) | (((data[qh + l] >> 4) & 3) << 4)) - 32;
            const q4 = ((data[ql + l + 32] >> 4) | (((data[qh + l] >> 6) & 3) << 4)) - 32;
            scaled[yy + l] = d * int8(data[sc + is]) * q1;
            scaled[yy + l + 32] = d * int8(data[sc + is + 2]) * q2;
            scaled[yy + l + 64] = d * int8(data[sc + is + 4]) * q3;
            scaled[yy + l + 96] = d * int8(data[sc + is + 6]) * q4;
          }
        }
        break;
      }
    }
  }
  return { scaled, offset };
}

/**
 * Y[m, n] = X[m, k]·Wᵀ (+ bias) (+ Y0) for dequantized W; the magnitude for the f32 rounding bound counts both
 * parts of a Q4_K weight (the kernel sums scaled·x and offset·x separately), the bias and Y0.
 */
export function quantMatmulReference(
  w: { scaled: Float64Array; offset: Float64Array },
  x: Float32Array,
  m: number,
  n: number,
  k: number,
  bias?: Float32Array,
  y0?: Float32Array,
): Reference {
  const values = new Float64Array(m * n);
  const magnitude = new Float64Array(m * n);
  for (let t = 0; t < m; t++) {
    for (let r = 0; r < n; r++) {
      let sum = 0;
      let abs = 0;
      for (let j = 0; j < k; j++) {
        const xv = x[t * k + j];
        const s = w.scaled[r * k + j];
        const o = w.offset[r * k + j];
        sum += (s - o) * xv;
        abs += (Math.abs(s) + Math.abs(o)) * Math.abs(xv);
      }
      if (bias) {
        sum += bias[r];
        abs += Math.abs(bias[r]);
      }
      if (y0) {
        sum += y0[t * n + r];
        abs += Math.abs(y0[t * n + r]);
      }
      values[t * n + r] = sum;
      magnitude[t * n + r] = abs;
    }
  }
  return { values, magnitude, terms: k + 2 };
}

/** RoPE of x [m, heads, headDim] in place (f64), angle = fround(position * invFreq[p]) as the kernel forms it. */
export function ropeReference(
  x: Float32Array,
  m: number,
  heads: number,
  headDim: number,
  pos0: number,
  invFreq: Float32Array,
  neox: boolean,
): Float64Array {
  const out = Float64Array.from(x);
  const pairs = headDim / 2;
  for (let t = 0; t < m; t++) {
    for (let h = 0; h < heads; h++) {
      const base = (t * heads + h) * headDim;
      for (let p = 0; p < pairs; p++) {
        const angle = Math.fround((pos0 + t) * invFreq[p]);
        const i0 = neox ? p : 2 * p;
        const i1 = neox ? p + pairs : 2 * p + 1;
        const a = x[base + i0];
        const b = x[base + i1];
        out[base + i0] = a * Math.cos(angle) - b * Math.sin(angle);
        out[base + i1] = a * Math.sin(angle) + b * Math.cos(angle);
      }
    }
  }
  return out;
}

/**
 * Causal GQA attention, f64 with a plain (two-pass) softmax: query t of q [m, nHeads, headDim] at position pos0 + t
 * over cache positions [0, pos0 + t] of kCache/vCache [nKvHeads, maxSeq, headDim].
 */
export function attentionReference(
  q: Float32Array,
  kCache: Float32Array,
  vCache: Float32Array,
  a: {
    m: number; nHeads: number; nKvHeads: number; headDim: number; pos0: number; maxSeq: number; scale: number;
    /** Query t attends to positions [pos0 + t + 1 - window, pos0 + t] only (0 or absent: all of [0, pos0 + t]). */
    window?: number;
    /** A logit per head in the softmax's denominator with no value (gpt-oss's attention sinks). */
    sinks?: ArrayLike<number>;
  },
): Float64Array {
  const { m, nHeads, nKvHeads, headDim, pos0, maxSeq, scale } = a;
  const out = new Float64Array(m * nHeads * headDim);
  const group = nHeads / nKvHeads;
  for (let t = 0; t < m; t++) {
    const length = pos0 + t + 1;
    const first = a.window ? Math.max(0, length - a.window) : 0;
    for (let h = 0; h < nHeads; h++) {
      const qb = (t * nHeads + h) * headDim;
      const cb = Math.floor(h / group) * maxSeq * headDim;
      const scores = new Float64Array(length);
      let max = a.sinks ? a.sinks[h] : -Infinity;
      for (let p = first; p < length; p++) {
        let s = 0;
        for (let i = 0; i < headDim; i++) s += q[qb + i] * kCache[cb + p * headDim + i];
        scores[p] = s * scale;
        max = Math.max(max, scores[p]);
      }
      let sum = a.sinks ? Math.exp(a.sinks[h] - max) : 0;
      for (let p = first; p < length; p++) sum += (scores[p] = Math.exp(scores[p] - max));
      for (let p = first; p < length; p++) {
        const weight = scores[p] / sum;
        for (let i = 0; i < headDim; i++) out[qb + i] += weight * vCache[cb + p * headDim + i];
      }
    }
  }
  return out;
}

/** silu(gate) * up, elementwise. */
export function swigluReference(gate: ArrayLike<number>, up: ArrayLike<number>): Float64Array {
  const out = new Float64Array(gate.length);
  for (let i = 0; i < gate.length; i++) out[i] = (gate[i] / (1 + Math.exp(-gate[i]))) * up[i];
  return out;
}

/** The index of the largest value, ties to the lowest index (NaN never wins). */
export function argmaxReference(values: ArrayLike<number>): number {
  let best = -1;
  for (let i = 0; i < values.length; i++) {
    if (Number.isNaN(values[i])) continue;
    if (best < 0 || values[i] > values[best]) best = i;
  }
  return best;
}
