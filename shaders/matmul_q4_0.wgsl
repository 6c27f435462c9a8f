// matmul_q4_0: Y[M, N] (+)= X[M, K] · Wᵀ (+ bias) with W in Q4_0, dequantized on the fly. M = 1 is the decode
// matvec (y = W·x); M > 1 is prefill.
//
// Bindings (group 0):
//   0 w      array<u32>  Q4_0 blocks, row-major [n rows, k/32 blocks], 5 u32 per block: word 0 = f16 d in the
//                        low half (high half zero), words 1..4 = 16 bytes qs; value j < 16 = d*((qs[j] & 15) - 8),
//                        value j + 16 = d*((qs[j] >> 4) - 8).
//                        The buffer holds rows [0, n) of this row range (a tensor split by rows binds each range).
//   1 x      array<vec4<f32>>  X [m, k] f32 row-major (k a multiple of 32).
//   2 bias   array<f32>  bias [y_offset + n] (read only when HAS_BIAS; bind any buffer otherwise).
//   3 y      array<f32>  Y, row t of Y at t*y_stride; this range's outputs at columns [y_offset, y_offset + n).
//   4 params uniform { n, k, m, y_offset, y_stride }.
// Overrides: WORKGROUP_SIZE; K_SPLIT (invocations sharing one row, each takes every K_SPLIT-th block, summed in
//   workgroup memory; 1 on CPU adapters); TILE_M (tokens per invocation, 1..8: each weight block is dequantized
//   once per TILE_M tokens); HAS_BIAS (adds bias[y_offset + row]); ACCUMULATE (adds into Y: fused residual).
// Dispatch: 1-D, ceil(n / (WORKGROUP_SIZE / K_SPLIT)) * ceil(m / TILE_M) workgroups (may arrive split over x, y).

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

const MAX_TILE_M: u32 = 8u;
const BLOCK_WORDS: u32 = 5u;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// The low (shift 0) or high (shift 4) nibbles of the four bytes of a word, low byte first, minus 8.
fn unpack_nibbles(word: u32, shift: u32) -> vec4<f32> {
  let q = (vec4<u32>(word) >> (vec4<u32>(0u, 8u, 16u, 24u) + shift)) & vec4<u32>(15u);
  return vec4<f32>(q) - vec4<f32>(8.0);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = params.n;
  let k = params.k;
  let m = params.m;
  let rows_per_group = WORKGROUP_SIZE / K_SPLIT;
  let row_groups = (n + rows_per_group - 1u) / rows_per_group;
  let wg = wid.x + wid.y * nwg.x;
  let t0 = (wg / row_groups) * TILE_M;
  if (t0 >= m) {
    return;
  }
  let lane = lid % K_SPLIT;
  let row = (wg % row_groups) * rows_per_group + lid / K_SPLIT;
  // Rows past the end compute on the last row and are not written: no branch around the loop.
  let r = min(row, n - 1u);
  let blocks = k / 32u;
  let k4 = k / 4u;

  var acc = array<f32, MAX_TILE_M>();
  for (var b = lane; b < blocks; b += K_SPLIT) {
    let base = (r * blocks + b) * BLOCK_WORDS;
    let d = unpack2x16float(w[base]).x;
    var block_sum = array<f32, MAX_TILE_M>(); // explicitly zeroed: some compilers hoist an uninitialised var out of the loop
    for (var i = 0u; i < 4u; i++) {
      let word = w[base + 1u + i];
      let low = unpack_nibbles(word, 0u); // elements 4i .. 4i+3
      let high = unpack_nibbles(word, 4u); // elements 16+4i .. 16+4i+3
      for (var t = 0u; t < TILE_M; t++) {
        let token = min(t0 + t, m - 1u);
        let xb = token * k4 + b * 8u + i;
        block_sum[t] += dot(low, x[xb]) + dot(high, x[xb + 4u]);
      }
    }
    for (var t = 0u; t < TILE_M; t++) {
      acc[t] += d * block_sum[t];
    }
  }

  if (K_SPLIT > 1u) {
    for (var t = 0u; t < TILE_M; t++) {
      partial[lid] = acc[t];
      workgroupBarrier();
      for (var stride = K_SPLIT >> 1u; stride > 0u; stride >>= 1u) {
        if (lane < stride) {
          partial[lid] += partial[lid + stride];
        }
        workgroupBarrier();
      }
      acc[t] = partial[lid - lane];
      workgroupBarrier();
    }
  }

  if (lane == 0u && row < n) {
    let column = params.y_offset + row;
    for (var t = 0u; t < TILE_M; t++) {
      let token = t0 + t;
      if (token < m) {
        let index = token * params.y_stride + column;
        var value = acc[t];
        if (HAS_BIAS) {
          value += bias[column];
        }
        if (ACCUMULATE) {
          value += y[index];
        }
        y[index] = value;
      }
    }
  }
}
