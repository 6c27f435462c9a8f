// matmul_q4_0: Y[M, N] (+)= X[M, K] · Wᵀ (+ bias) with W in Q4_0, dequantized on the fly. M = 1 is the decode
// matvec (y = W·x); M > 1 is prefill.
//
// Bindings (group 0):
//   0 w      array<u32>  Q4_0 blocks, row-major [n rows, k/32 blocks], 5 u32 per block: word 0 = f16 d in the
//                        low half (high half zero), words 1..4 = 16 bytes qs; value j < 16 = d*((qs[j] & 15) - 8),
//                        value j + 16 = d*((qs[j] >> 4) - 8). Rows [0, n) of this row range.
//   1 x      array<vec4<f32>>  X [m, k] f32 row-major (k a multiple of 32).
//   2 bias   array<f32>  bias [y_offset + n] (read only when HAS_BIAS; bind any buffer otherwise).
//   3 y      array<f32>  Y, row t of Y at t*y_stride; this range's outputs at columns [y_offset, y_offset + n).
//   4 params uniform { n, k, m, y_offset, y_stride }.
// Each invocation computes 4 consecutive rows (a vec4 per token) for TILE_M tokens, so every weight word is
// dequantized once per TILE_M tokens and every x value serves 4 rows. K_SPLIT invocations may share the 4 rows (each
// takes every K_SPLIT-th block; partial sums added in workgroup memory): 1 on CPU adapters, more on GPUs.
// Overrides: WORKGROUP_SIZE; K_SPLIT (a power of two dividing WORKGROUP_SIZE); TILE_M (1..4 tokens per
//   invocation: 1 for decode); HAS_BIAS (adds bias[y_offset + row]); ACCUMULATE (adds into Y: the residual, fused).
// Dispatch: 1-D, ceil(n / (4 * WORKGROUP_SIZE / K_SPLIT)) * ceil(m / TILE_M) workgroups (may arrive split over
//   x and y; see src/gpu/dispatch.ts).

struct Params {
  n: u32,
  k: u32,
  m: u32,
  y_offset: u32,
  y_stride: u32,
}

@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;
override K_SPLIT: u32 = 1;
override TILE_M: u32 = 1;
override HAS_BIAS: bool = false;
override ACCUMULATE: bool = false;

const BLOCK_WORDS: u32 = 5u;
const BLOCK_ELEMENTS: u32 = 32u;

var<workgroup> partial: array<vec4<f32>, WORKGROUP_SIZE>;

// (W_r0 · v, W_r1 · v, W_r2 · v, W_r3 · v) for one vec4 of four rows' weights.
fn dot4(w0: vec4<f32>, w1: vec4<f32>, w2: vec4<f32>, w3: vec4<f32>, v: vec4<f32>) -> vec4<f32> {
  return vec4<f32>(dot(w0, v), dot(w1, v), dot(w2, v), dot(w3, v));
}

// The low (shift 0) or high (shift 4) nibbles of the four bytes of a word, low byte first, minus 8.
fn nibbles(word: u32, shift: u32) -> vec4<f32> {
  let q = (vec4<u32>(word) >> (vec4<u32>(0u, 8u, 16u, 24u) + shift)) & vec4<u32>(15u);
  return vec4<f32>(q) - vec4<f32>(8.0);
}

// The sum over the K_SPLIT invocations sharing these rows (uniform control flow: every invocation calls it).
fn sum_over_split(value: vec4<f32>, lid: u32, lane: u32) -> vec4<f32> {
  partial[lid] = value;
  workgroupBarrier();
  for (var stride = K_SPLIT >> 1u; stride > 0u; stride >>= 1u) {
    if (lane < stride) {
      partial[lid] += partial[lid + stride];
    }
    workgroupBarrier();
  }
  let total = partial[lid - lane];
  workgroupBarrier();
  return total;
}

// Writes token t's results for rows row0 .. row0 + 3 (those below n), adding the bias and the old Y if asked.
fn store(token: u32, row0: u32, value: vec4<f32>) {
  if (token >= params.m) {
    return;
  }
  for (var i = 0u; i < 4u; i++) {
    let row = row0 + i;
    if (row < params.n) {
      let column = params.y_offset + row;
      let index = token * params.y_stride + column;
      var result = value[i];
      if (HAS_BIAS) {
        result += bias[column];
      }
      if (ACCUMULATE) {
        result += y[index];
      }
      y[index] = result;
    }
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = params.n;
  let m = params.m;
  let rows_per_group = 4u * (WORKGROUP_SIZE / K_SPLIT);
  let row_groups = (n + rows_per_group - 1u) / rows_per_group;
  let wg = wid.x + wid.y * nwg.x;
  let t0 = (wg / row_groups) * TILE_M;
  if (t0 >= m) {
    return;
  }
  let lane = lid % K_SPLIT;
  let row0 = (wg % row_groups) * rows_per_group + (lid / K_SPLIT) * 4u;
  let blocks = params.k / BLOCK_ELEMENTS;
  // Rows and tokens past the end compute on the last ones and are not written: no branches in the loop.
  let last = n - 1u;
  let w0 = min(row0, last) * blocks * BLOCK_WORDS;
  let w1 = min(row0 + 1u, last) * blocks * BLOCK_WORDS;
  let w2 = min(row0 + 2u, last) * blocks * BLOCK_WORDS;
  let w3 = min(row0 + 3u, last) * blocks * BLOCK_WORDS;
  let k4 = params.k / 4u;
  let x0 = min(t0, m - 1u) * k4;
  let x1 = min(t0 + 1u, m - 1u) * k4;
  let x2 = min(t0 + 2u, m - 1u) * k4;
  let x3 = min(t0 + 3u, m - 1u) * k4;

  // acc_t: token t0 + t, rows row0 .. row0 + 3.
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  for (var b = lane; b < blocks; b += K_SPLIT) {
    let o0 = w0 + b * BLOCK_WORDS;
    let o1 = w1 + b * BLOCK_WORDS;
    let o2 = w2 + b * BLOCK_WORDS;
    let o3 = w3 + b * BLOCK_WORDS;
    let xb = b * (BLOCK_ELEMENTS / 4u);
    let d = vec4<f32>(unpack2x16float(w[o0]).x, unpack2x16float(w[o1]).x, unpack2x16float(w[o2]).x, unpack2x16float(w[o3]).x);
    var s0 = vec4<f32>(0.0);
    var s1 = vec4<f32>(0.0);
    var s2 = vec4<f32>(0.0);
    var s3 = vec4<f32>(0.0);
    for (var i = 1u; i < 5u; i++) {
      // Word i holds bytes 4(i-1) .. 4(i-1)+3: low nibbles are elements 4(i-1).., high nibbles 16 + 4(i-1)..
      let a0 = w[o0 + i];
      let a1 = w[o1 + i];
      let a2 = w[o2 + i];
      let a3 = w[o3 + i];
      let l0 = nibbles(a0, 0u);
      let l1 = nibbles(a1, 0u);
      let l2 = nibbles(a2, 0u);
      let l3 = nibbles(a3, 0u);
      let h0 = nibbles(a0, 4u);
      let h1 = nibbles(a1, 4u);
      let h2 = nibbles(a2, 4u);
      let h3 = nibbles(a3, 4u);
      let xi = xb + i - 1u;
      s0 += dot4(l0, l1, l2, l3, x[x0 + xi]) + dot4(h0, h1, h2, h3, x[x0 + xi + 4u]);
      if (TILE_M > 1u) {
        s1 += dot4(l0, l1, l2, l3, x[x1 + xi]) + dot4(h0, h1, h2, h3, x[x1 + xi + 4u]);
      }
      if (TILE_M > 2u) {
        s2 += dot4(l0, l1, l2, l3, x[x2 + xi]) + dot4(h0, h1, h2, h3, x[x2 + xi + 4u]);
      }
      if (TILE_M > 3u) {
        s3 += dot4(l0, l1, l2, l3, x[x3 + xi]) + dot4(h0, h1, h2, h3, x[x3 + xi + 4u]);
      }
    }
    acc0 += d * s0;
    if (TILE_M > 1u) {
      acc1 += d * s1;
      acc2 += d * s2;
      acc3 += d * s3;
    }
  }

  if (K_SPLIT > 1u) {
    acc0 = sum_over_split(acc0, lid, lane);
    if (TILE_M > 1u) {
      acc1 = sum_over_split(acc1, lid, lane);
    }
    if (TILE_M > 2u) {
      acc2 = sum_over_split(acc2, lid, lane);
    }
    if (TILE_M > 3u) {
      acc3 = sum_over_split(acc3, lid, lane);
    }
  }
  if (lane == 0u) {
    store(t0, row0, acc0);
    if (TILE_M > 1u) {
      store(t0 + 1u, row0, acc1);
    }
    if (TILE_M > 2u) {
      store(t0 + 2u, row0, acc2);
    }
    if (TILE_M > 3u) {
      store(t0 + 3u, row0, acc3);
    }
  }
}
