// matmul_q4_k: Y[M, N] (+)= X[M, K] · Wᵀ (+ bias) with W in Q4_K, dequantized on the fly. M = 1 is the decode
// matvec (y = W·x); M > 1 is prefill.
//
// Bindings (group 0):
//   0 w      array<u32>  Q4_K super-blocks, row-major [n rows, k/256 blocks], the 144 GGUF bytes (36 u32) each:
//                        f16 d, f16 dmin (word 0), scales[12] (words 1..3: 8 pairs of 6-bit scale and min),
//                        qs[128] (words 4..35). Elements 64c + l (l < 32) are the low nibbles of qs[32c + l] with
//                        sub-block 2c, elements 64c + 32 + l the high nibbles with sub-block 2c + 1; value =
//                        d*scale(sub) * q - dmin*min(sub). Rows [0, n) of this row range.
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
const BLOCK_WORDS: u32 = 36u;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// Byte i (0..11) of the packed scales.
fn scale_byte(scales: vec3<u32>, i: u32) -> u32 {
  return (scales[i >> 2u] >> ((i & 3u) * 8u)) & 255u;
}

// (scale, min) of sub-block j (0..7): 6-bit values, j < 4 in the low 6 bits of bytes j and j + 4, j >= 4 in the
// nibbles of byte j + 4 with the top 2 bits taken from bytes j - 4 and j.
fn scale_min(scales: vec3<u32>, j: u32) -> vec2<f32> {
  if (j < 4u) {
    return vec2<f32>(f32(scale_byte(scales, j) & 63u), f32(scale_byte(scales, j + 4u) & 63u));
  }
  let packed = scale_byte(scales, j + 4u);
  let scale = (packed & 15u) | ((scale_byte(scales, j - 4u) >> 6u) << 4u);
  let minimum = (packed >> 4u) | ((scale_byte(scales, j) >> 6u) << 4u);
  return vec2<f32>(f32(scale), f32(minimum));
}

// The low (shift 0) or high (shift 4) nibbles of the four bytes of a word, low byte first.
fn nibbles(word: u32, shift: u32) -> vec4<f32> {
  return vec4<f32>((vec4<u32>(word) >> (vec4<u32>(0u, 8u, 16u, 24u) + shift)) & vec4<u32>(15u));
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
    let dm = unpack2x16float(w[base]);
    let scales = vec3<u32>(w[base + 1u], w[base + 2u], w[base + 3u]);
    for (var c = 0u; c < 4u; c++) {
      let low_sm = scale_min(scales, 2u * c);
      let high_sm = scale_min(scales, 2u * c + 1u);
      // Per token: (q·x over the low sub-block, q·x over the high one, Σx low, Σx high).
      var sums = array<vec4<f32>, MAX_TILE_M>(); // explicitly zeroed: some compilers hoist an uninitialised var out of the loop
      for (var l = 0u; l < 8u; l++) {
        let word = w[base + 4u + 8u * c + l];
        let low = nibbles(word, 0u);
        let high = nibbles(word, 4u);
        for (var t = 0u; t < TILE_M; t++) {
          let token = min(t0 + t, m - 1u);
          let xi = token * k4 + b * 64u + c * 16u + l;
          let xl = x[xi];
          let xh = x[xi + 8u];
          sums[t] += vec4<f32>(dot(low, xl), dot(high, xh), dot(xl, vec4<f32>(1.0)), dot(xh, vec4<f32>(1.0)));
        }
      }
      let coefficients = vec4<f32>(dm.x * low_sm.x, dm.x * high_sm.x, -dm.y * low_sm.y, -dm.y * high_sm.y);
      for (var t = 0u; t < TILE_M; t++) {
        acc[t] += dot(coefficients, sums[t]);
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
