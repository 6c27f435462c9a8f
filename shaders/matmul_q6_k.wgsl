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

const BLOCK_WORDS: u32 = 53u;
const BLOCK_ELEMENTS: u32 = 256u;

var<workgroup> partial: array<vec4<f32>, WORKGROUP_SIZE>;

// (W_r0 · v, W_r1 · v, W_r2 · v, W_r3 · v) for one vec4 of four rows' weights.
fn dot4(w0: vec4<f32>, w1: vec4<f32>, w2: vec4<f32>, w3: vec4<f32>, v: vec4<f32>) -> vec4<f32> {
  return vec4<f32>(dot(w0, v), dot(w1, v), dot(w2, v), dot(w3, v));
}

// Signed int8 scale i (0..15) of the block at word o.
fn scale_i8(o: u32, i: u32) -> f32 {
  let byte = (w[o + 48u + (i >> 2u)] >> ((i & 3u) * 8u)) & 255u;
  return f32(bitcast<i32>(byte << 24u) >> 24u);
}

// The values q - 32 of four consecutive elements of one group: 4 bits of each byte of ql_word (low nibbles for
// ql_shift 0, high for 4) joined with 2 bits of each byte of qh_word (at qh_shift) as bits 4-5.
fn q6(ql_word: u32, qh_word: u32, ql_shift: u32, qh_shift: u32) -> vec4<f32> {
  let shifts = vec4<u32>(0u, 8u, 16u, 24u);
  let low = (vec4<u32>(ql_word) >> (shifts + ql_shift)) & vec4<u32>(15u);
  let high = (vec4<u32>(qh_word) >> (shifts + qh_shift)) & vec4<u32>(3u);
  return vec4<f32>(low | (high << vec4<u32>(4u))) - vec4<f32>(32.0);
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
    let d = vec4<f32>(unpack2x16float(w[o0 + 52u]).x, unpack2x16float(w[o1 + 52u]).x, unpack2x16float(w[o2 + 52u]).x, unpack2x16float(w[o3 + 52u]).x);
    for (var h = 0u; h < 2u; h++) {
      for (var half16 = 0u; half16 < 2u; half16++) {
        // Elements 128h + 32g + 16*half16 + (0..15), g = 0..3, use scale 8h + 2g + half16 (per row).
        let si = 8u * h + half16;
        let s0 = d * vec4<f32>(scale_i8(o0, si), scale_i8(o1, si), scale_i8(o2, si), scale_i8(o3, si));
        let s1 = d * vec4<f32>(scale_i8(o0, si + 2u), scale_i8(o1, si + 2u), scale_i8(o2, si + 2u), scale_i8(o3, si + 2u));
        let s2 = d * vec4<f32>(scale_i8(o0, si + 4u), scale_i8(o1, si + 4u), scale_i8(o2, si + 4u), scale_i8(o3, si + 4u));
        let s3 = d * vec4<f32>(scale_i8(o0, si + 6u), scale_i8(o1, si + 6u), scale_i8(o2, si + 6u), scale_i8(o3, si + 6u));
        for (var l = 0u; l < 4u; l++) {
          // Words of ql[l4*4 ..] (a), ql[32 + l4*4 ..] (b) and qh[l4*4 ..] of this half: elements 4*l4 .. 4*l4+3
          // of the four groups. One group at a time keeps few values live (CPU adapters spill otherwise).
          let l4 = 4u * half16 + l;
          let ia = 16u * h + l4;
          let ib = ia + 8u;
          let ih = 32u + 8u * h + l4;
          let a0 = w[o0 + ia];
          let a1 = w[o1 + ia];
          let a2 = w[o2 + ia];
          let a3 = w[o3 + ia];
          let b0 = w[o0 + ib];
          let b1 = w[o1 + ib];
          let b2 = w[o2 + ib];
          let b3 = w[o3 + ib];
          let h0 = w[o0 + ih];
          let h1 = w[o1 + ih];
          let h2 = w[o2 + ih];
          let h3 = w[o3 + ih];
          let xi = xb + 32u * h + l4;
          // Group 0: low nibbles of a, qh bits 0-1; group 1: low nibbles of b, bits 2-3; group 2: high nibbles
          // of a, bits 4-5; group 3: high nibbles of b, bits 6-7.
          let g0_0 = q6(a0, h0, 0u, 0u);
          let g0_1 = q6(a1, h1, 0u, 0u);
          let g0_2 = q6(a2, h2, 0u, 0u);
          let g0_3 = q6(a3, h3, 0u, 0u);
          acc0 += s0 * dot4(g0_0, g0_1, g0_2, g0_3, x[x0 + xi]);
          if (TILE_M > 1u) {
            acc1 += s0 * dot4(g0_0, g0_1, g0_2, g0_3, x[x1 + xi]);
          }
          if (TILE_M > 2u) {
            acc2 += s0 * dot4(g0_0, g0_1, g0_2, g0_3, x[x2 + xi]);
          }
          if (TILE_M > 3u) {
            acc3 += s0 * dot4(g0_0, g0_1, g0_2, g0_3, x[x3 + xi]);
          }
          let g1_0 = q6(b0, h0, 0u, 2u);
          let g1_1 = q6(b1, h1, 0u, 2u);
          let g1_2 = q6(b2, h2, 0u, 2u);
          let g1_3 = q6(b3, h3, 0u, 2u);
          acc0 += s1 * dot4(g1_0, g1_1, g1_2, g1_3, x[x0 + xi + 8u]);
          if (TILE_M > 1u) {
            acc1 += s1 * dot4(g1_0, g1_1, g1_2, g1_3, x[x1 + xi + 8u]);
          }
          if (TILE_M > 2u) {
            acc2 += s1 * dot4(g1_0, g1_1, g1_2, g1_3, x[x2 + xi + 8u]);
          }
          if (TILE_M > 3u) {
            acc3 += s1 * dot4(g1_0, g1_1, g1_2, g1_3, x[x3 + xi + 8u]);
          }
          let g2_0 = q6(a0, h0, 4u, 4u);
          let g2_1 = q6(a1, h1, 4u, 4u);
          let g2_2 = q6(a2, h2, 4u, 4u);
          let g2_3 = q6(a3, h3, 4u, 4u);
          acc0 += s2 * dot4(g2_0, g2_1, g2_2, g2_3, x[x0 + xi + 16u]);
          if (TILE_M > 1u) {
            acc1 += s2 * dot4(g2_0, g2_1, g2_2, g2_3, x[x1 + xi + 16u]);
          }
          if (TILE_M > 2u) {
            acc2 += s2 * dot4(g2_0, g2_1, g2_2, g2_3, x[x2 + xi + 16u]);
          }
          if (TILE_M > 3u) {
            acc3 += s2 * dot4(g2_0, g2_1, g2_2, g2_3, x[x3 + xi + 16u]);
          }
          let g3_0 = q6(b0, h0, 4u, 6u);
          let g3_1 = q6(b1, h1, 4u, 6u);
          let g3_2 = q6(b2, h2, 4u, 6u);
          let g3_3 = q6(b3, h3, 4u, 6u);
          acc0 += s3 * dot4(g3_0, g3_1, g3_2, g3_3, x[x0 + xi + 24u]);
          if (TILE_M > 1u) {
            acc1 += s3 * dot4(g3_0, g3_1, g3_2, g3_3, x[x1 + xi + 24u]);
          }
          if (TILE_M > 2u) {
            acc2 += s3 * dot4(g3_0, g3_1, g3_2, g3_3, x[x2 + xi + 24u]);
          }
          if (TILE_M > 3u) {
            acc3 += s3 * dot4(g3_0, g3_1, g3_2, g3_3, x[x3 + xi + 24u]);
          }
        }
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
