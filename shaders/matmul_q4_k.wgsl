// matmul_q4_k: Y[M, N] (+)= X[M, K] · Wᵀ (+ bias) with W in Q4_K, dequantized on the fly. M = 1 is the decode
// matvec (y = W·x); M > 1 is prefill.
//
// Bindings (group 0):
//   0 w      array<u32>  Q4_K super-blocks, row-major [n rows, k/256 blocks], the 144 GGUF bytes (36 u32) each:
//                        f16 d, f16 dmin (word 0), scales[12] (words 1..3: 8 pairs of 6-bit scale and min),
//                        qs[128] (words 4..35). Elements 64c + l (l < 32) are the low nibbles of qs[32c + l] with
//                        sub-block 2c, elements 64c + 32 + l the high nibbles with sub-block 2c + 1; value =
//                        d*scale(sub)*q - dmin*min(sub). Rows [0, n) of this row range.
//   1 x      array<vec4<f32>>  X [m, k] f32 row-major (k a multiple of 256).
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

const BLOCK_WORDS: u32 = 36u;
const BLOCK_ELEMENTS: u32 = 256u;

var<workgroup> partial: array<vec4<f32>, WORKGROUP_SIZE>;

// (W_r0 · v, W_r1 · v, W_r2 · v, W_r3 · v) for one vec4 of four rows' weights.
fn dot4(w0: vec4<f32>, w1: vec4<f32>, w2: vec4<f32>, w3: vec4<f32>, v: vec4<f32>) -> vec4<f32> {
  return vec4<f32>(dot(w0, v), dot(w1, v), dot(w2, v), dot(w3, v));
}

// The 8 six-bit (scale, min) pairs of a block from its 12 scale bytes (words a, b, c): columns 0 and 1 are the
// scales of sub-blocks 0..3 and 4..7, columns 2 and 3 their mins. Sub-blocks j < 4 use the low 6 bits of bytes
// j (scale) and j + 4 (min); j >= 4 the nibbles of byte j + 4 with the top 2 bits from bytes j - 4 and j.
fn scales_mins(a: u32, b: u32, c: u32) -> mat4x4<f32> {
  let shifts = vec4<u32>(0u, 8u, 16u, 24u);
  let bytes_a = (vec4<u32>(a) >> shifts) & vec4<u32>(255u);
  let bytes_b = (vec4<u32>(b) >> shifts) & vec4<u32>(255u);
  let bytes_c = (vec4<u32>(c) >> shifts) & vec4<u32>(255u);
  let six = vec4<u32>(63u);
  let top = vec4<u32>(6u);
  return mat4x4<f32>(
    vec4<f32>(bytes_a & six),
    vec4<f32>((bytes_c & vec4<u32>(15u)) | ((bytes_a >> top) << vec4<u32>(4u))),
    vec4<f32>(bytes_b & six),
    vec4<f32>((bytes_c >> vec4<u32>(4u)) | ((bytes_b >> top) << vec4<u32>(4u))),
  );
}

// The low (shift 0) or high (shift 4) nibbles of the four bytes of a word, low byte first.
fn nibbles(word: u32, shift: u32) -> vec4<f32> {
  return vec4<f32>((vec4<u32>(word) >> (vec4<u32>(0u, 8u, 16u, 24u) + shift)) & vec4<u32>(15u));
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
    let dm0 = unpack2x16float(w[o0]);
    let dm1 = unpack2x16float(w[o1]);
    let dm2 = unpack2x16float(w[o2]);
    let dm3 = unpack2x16float(w[o3]);
    let d = vec4<f32>(dm0.x, dm1.x, dm2.x, dm3.x);
    let dmin = vec4<f32>(dm0.y, dm1.y, dm2.y, dm3.y);
    let sm0 = scales_mins(w[o0 + 1u], w[o0 + 2u], w[o0 + 3u]);
    let sm1 = scales_mins(w[o1 + 1u], w[o1 + 2u], w[o1 + 3u]);
    let sm2 = scales_mins(w[o2 + 1u], w[o2 + 2u], w[o2 + 3u]);
    let sm3 = scales_mins(w[o3 + 1u], w[o3 + 2u], w[o3 + 3u]);
    for (var c = 0u; c < 4u; c++) {
      // Chunk c: 64 elements, low nibbles = sub-block 2c, high nibbles = sub-block 2c + 1.
      let half = c >> 1u;
      let j = 2u * (c & 1u);
      let low_scale = d * vec4<f32>(sm0[half][j], sm1[half][j], sm2[half][j], sm3[half][j]);
      let high_scale = d * vec4<f32>(sm0[half][j + 1u], sm1[half][j + 1u], sm2[half][j + 1u], sm3[half][j + 1u]);
      let low_min = dmin * vec4<f32>(sm0[2u + half][j], sm1[2u + half][j], sm2[2u + half][j], sm3[2u + half][j]);
      let high_min = dmin * vec4<f32>(sm0[2u + half][j + 1u], sm1[2u + half][j + 1u], sm2[2u + half][j + 1u], sm3[2u + half][j + 1u]);
      // Per token: q·x over the low and the high sub-block (rows in the components), and Σx over each.
      var lo0 = vec4<f32>(0.0);
      var lo1 = vec4<f32>(0.0);
      var lo2 = vec4<f32>(0.0);
      var lo3 = vec4<f32>(0.0);
      var hi0 = vec4<f32>(0.0);
      var hi1 = vec4<f32>(0.0);
      var hi2 = vec4<f32>(0.0);
      var hi3 = vec4<f32>(0.0);
      var sx0 = vec2<f32>(0.0);
      var sx1 = vec2<f32>(0.0);
      var sx2 = vec2<f32>(0.0);
      var sx3 = vec2<f32>(0.0);
      for (var l = 0u; l < 8u; l++) {
        let qi = 4u + 8u * c + l;
        let a0 = w[o0 + qi];
        let a1 = w[o1 + qi];
        let a2 = w[o2 + qi];
        let a3 = w[o3 + qi];
        let l0 = nibbles(a0, 0u);
        let l1 = nibbles(a1, 0u);
        let l2 = nibbles(a2, 0u);
        let l3 = nibbles(a3, 0u);
        let h0 = nibbles(a0, 4u);
        let h1 = nibbles(a1, 4u);
        let h2 = nibbles(a2, 4u);
        let h3 = nibbles(a3, 4u);
        let xi = xb + 16u * c + l;
        let xl0 = x[x0 + xi];
        let xh0 = x[x0 + xi + 8u];
        lo0 += dot4(l0, l1, l2, l3, xl0);
        hi0 += dot4(h0, h1, h2, h3, xh0);
        sx0 += vec2<f32>(dot(xl0, vec4<f32>(1.0)), dot(xh0, vec4<f32>(1.0)));
        if (TILE_M > 1u) {
          let xl1 = x[x1 + xi];
          let xh1 = x[x1 + xi + 8u];
          lo1 += dot4(l0, l1, l2, l3, xl1);
          hi1 += dot4(h0, h1, h2, h3, xh1);
          sx1 += vec2<f32>(dot(xl1, vec4<f32>(1.0)), dot(xh1, vec4<f32>(1.0)));
        }
        if (TILE_M > 2u) {
          let xl2 = x[x2 + xi];
          let xh2 = x[x2 + xi + 8u];
          lo2 += dot4(l0, l1, l2, l3, xl2);
          hi2 += dot4(h0, h1, h2, h3, xh2);
          sx2 += vec2<f32>(dot(xl2, vec4<f32>(1.0)), dot(xh2, vec4<f32>(1.0)));
        }
        if (TILE_M > 3u) {
          let xl3 = x[x3 + xi];
          let xh3 = x[x3 + xi + 8u];
          lo3 += dot4(l0, l1, l2, l3, xl3);
          hi3 += dot4(h0, h1, h2, h3, xh3);
          sx3 += vec2<f32>(dot(xl3, vec4<f32>(1.0)), dot(xh3, vec4<f32>(1.0)));
        }
      }
      acc0 += low_scale * lo0 + high_scale * hi0 - low_min * sx0.x - high_min * sx0.y;
      if (TILE_M > 1u) {
        acc1 += low_scale * lo1 + high_scale * hi1 - low_min * sx1.x - high_min * sx1.y;
        acc2 += low_scale * lo2 + high_scale * hi2 - low_min * sx2.x - high_min * sx2.y;
        acc3 += low_scale * lo3 + high_scale * hi3 - low_min * sx3.x - high_min * sx3.y;
      }
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
