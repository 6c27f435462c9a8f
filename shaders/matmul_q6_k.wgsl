// matmul_q6_k: Y[M, N] (+)= X[M, K] · Wᵀ (+ bias) with W in Q6_K, dequantized on the fly. M = 1 is the decode
// matvec (y = W·x); M > 1 is prefill.
//
// Bindings (group 0):
//   0 w      array<u32>  Q6_K super-blocks, row-major [n rows, k/256 blocks], the 210 GGUF bytes + 2 zero
//                        bytes (53 u32) each: ql[128] (words 0..31), qh[64] (words 32..47), int8 scales[16]
//                        (words 48..51), f16 d (word 52, low half). For half h (0, 1), l < 32, g (0..3): element
//                        128h + 32g + l = d * scales[8h + 2g + l/16] * (q - 32), q = 4 bits of ql[64h + 32(g&1) + l]
//                        (low nibble for g < 2, high for g >= 2) | 2 bits (qh[32h + l] >> 2g) << 4.
//                        Rows [0, n) of this row range.
//   1 x      array<vec4<f32>>  X [m, k] f32 row-major (k a multiple of 256).
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
const BLOCK_WORDS: u32 = 53u;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// The four bytes of a word, low byte first.
fn bytes4(word: u32) -> vec4<u32> {
  return (vec4<u32>(word) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(255u);
}

// Signed int8 scale i (0..15) of the block whose scale words start at w[at].
fn scale_i8(at: u32, i: u32) -> f32 {
  let byte = (w[at + (i >> 2u)] >> ((i & 3u) * 8u)) & 255u;
  return f32(bitcast<i32>(byte << 24u) >> 24u);
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
  let blocks = k / 256u;
  let k4 = k / 4u;

  var acc = array<f32, MAX_TILE_M>();
  for (var b = lane; b < blocks; b += K_SPLIT) {
    let base = (r * blocks + b) * BLOCK_WORDS;
    let d = unpack2x16float(w[base + 52u]).x;
    for (var h = 0u; h < 2u; h++) {
      for (var half16 = 0u; half16 < 2u; half16++) {
        // Elements 128h + 32g + 16*half16 + (0..15) for g = 0..3 share the scales 8h + 2g + half16.
        let scale_index = 8u * h + half16;
        let coefficients = d * vec4<f32>(
          scale_i8(base + 48u, scale_index), scale_i8(base + 48u, scale_index + 2u), scale_i8(base + 48u, scale_index + 4u), scale_i8(base + 48u, scale_index + 6u));
        var sums = array<vec4<f32>, MAX_TILE_M>(); // explicitly zeroed: some compilers hoist an uninitialised var out of the loop
        for (var l4 = 4u * half16; l4 < 4u * half16 + 4u; l4++) {
          let ql_a = bytes4(w[base + 16u * h + l4]);
          let ql_b = bytes4(w[base + 16u * h + 8u + l4]);
          let qh = bytes4(w[base + 32u + 8u * h + l4]);
          let q0 = vec4<f32>((ql_a & vec4<u32>(15u)) | ((qh & vec4<u32>(3u)) << vec4<u32>(4u))) - vec4<f32>(32.0);
          let q1 = vec4<f32>((ql_b & vec4<u32>(15u)) | (((qh >> vec4<u32>(2u)) & vec4<u32>(3u)) << vec4<u32>(4u))) - vec4<f32>(32.0);
          let q2 = vec4<f32>((ql_a >> vec4<u32>(4u)) | (((qh >> vec4<u32>(4u)) & vec4<u32>(3u)) << vec4<u32>(4u))) - vec4<f32>(32.0);
          let q3 = vec4<f32>((ql_b >> vec4<u32>(4u)) | ((qh >> vec4<u32>(6u)) << vec4<u32>(4u))) - vec4<f32>(32.0);
          for (var t = 0u; t < TILE_M; t++) {
            let token = min(t0 + t, m - 1u);
            let xi = token * k4 + b * 64u + 32u * h + l4;
            sums[t] += vec4<f32>(dot(q0, x[xi]), dot(q1, x[xi + 8u]), dot(q2, x[xi + 16u]), dot(q3, x[xi + 24u]));
          }
        }
        for (var t = 0u; t < TILE_M; t++) {
          acc[t] += dot(coefficients, sums[t]);
        }
      }
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
