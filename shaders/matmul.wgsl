// matmul: the skeleton shared by every weight product kernel (matmul_f32, matmul_f16, matmul_q8_0, matmul_q4_0,
// matmul_q4_k, matmul_q6_k): Y[M, N] (+)= X[M, K] · Wᵀ (+ bias), W dequantized on the fly. M = 1 is the decode
// matvec (y = W·x); M > 1 is prefill.
//
// Not a kernel by itself. WGSL has no #include, so src/gpu/shaders.ts (composeWgsl) builds each kernel's source
// as its type's file (shaders/matmul_<type>.wgsl), the K_SPLIT reduction and this one; module-scope declarations may come in any
// order. This file holds what is the same for every type: bindings, params, overrides, the tile of 4 rows ×
// TILE_M tokens, the loop over blocks, the K_SPLIT reduction and the output write (bias, accumulate). The type's
// file defines only its block format and decoding:
//   const BLOCK_WORDS: u32     u32 words per block of one row;
//   const BLOCK_ELEMENTS: u32  weights per block (a multiple of 4; k is a multiple of it);
//   fn accumulate_block(o0, o1, o2, o3: u32, b: u32, x0, x1, x2, x3: u32,
//                       acc0, acc1, acc2, acc3: ptr<function, vec4<f32>>)
//       adds to *acc_t, for token t0 + t (t < TILE_M; the others may be left alone or get any value), the dot
//       products of rows row0 .. row0 + 3 (the components) of block b, whose words start at w[o0] .. w[o3], with
//       the block's x values, which start at x[x_t + b·BLOCK_ELEMENTS/4] (vec4 index). The body multiplies b
//       itself: an integer division costs a CPU adapter one `div` a lane (SwiftShader), a multiply one SIMD op.
//   const UP_OWN_PASS: bool   GATED: whether the up rows take a pass over the blocks of their own (true for the
//                              quantized bodies; the plain F32/F16 body shares the x loads in one pass).
// The type's code may call dot4 (shaders/decode_units.wgsl). Keep each type's tricks there (decoding scales once per block, grouping)
// and named registers rather than indexed private arrays (SwiftShader is slow with those); initialise every var.
// Activations: a body reads x[i] itself, or takes 4 vec4s at once through x_group(i, step, gap)
// (x[i], x[i + step], x[i + gap], x[i + gap + step]; x_quad(i): x[i .. i + 3]) and x_q0 .. x_q3 (each of them;
// shaders/matmul_activations.wgsl, with the exchange from the split part).
// Where SHARED_X is true (decode, TILE_M 1, on the subgroup split with K_SPLIT 1: a quad's 4 invocations then take
// the same blocks and token, 4 rows apart each) each invocation of the quad loads one of the 4 and quadBroadcast
// hands it to the others: on a CPU adapter every non-constant load is a gather, a lane at a time, and the activations
// were most of a body's gathers (bench/README.md, "Activations shared by the quad"). So a word's four fields (Q6_K,
// Q2_K/Q3_K: step 8, gap 16) take one load for token 0; the light bodies (Q8_0, Q4_0/Q4_1) take their words in fours
// there (written out: faster for them, slower for the heavier bodies and for prefill's tiles of 4 tokens), and keep
// their word loop otherwise.
// The K_SPLIT reduction, fn sum_over_split(value: vec4<f32>, lid: u32, lane: u32) -> vec4<f32> (the sum over the
// K_SPLIT invocations sharing these rows, called in uniform control flow), and NORM_SUBGROUP with
// fn subgroup_sum(value: vec4<f32>) -> vec4<f32> (NORM_OUT's sums per subgroup of NORM_SUBGROUP invocations where
// it is not 0; see norm_group_sum), come from a third part:
// shaders/matmul_split_workgroup.wgsl (workgroup memory) or, where every subgroup holds at least K_SPLIT
// invocations, shaders/matmul_split_subgroup.wgsl (subgroup shuffles, after an `enable subgroups;` line).
//
// Bindings (group 0):
//   0 w      array<u32>  the blocks, row-major [n rows, k / BLOCK_ELEMENTS blocks], BLOCK_WORDS u32 each (the
//                        format is in the type's file). Rows [0, n) of this row range (a tensor split by rows
//                        binds each range).
//   1 x      array<vec4<f32>>  X [m, k] f32 row-major (k a multiple of BLOCK_ELEMENTS).
//   2 bias   array<f32>  bias [y_offset + n] (read only when HAS_BIAS; bind any buffer otherwise).
//   3 y      array<f32>  Y, row t of Y at t*y_stride; this range's outputs at columns [y_offset, y_offset + n).
//   4 params uniform { n, k, m, y_offset, y_stride, norm_groups, eps }.
//   5 norm_sums  array<f32>  RMSNorm fused across a product boundary (src/model/forward-plan.ts): sums of squares of
//                        the residual stream, [m, norm_groups]: NORM_OUT writes them (one per token and row group
//                        of this dispatch), NORMED reads them (norm_groups per token). Bind any buffer otherwise.
//   6 norm_weight array<f32>  NORM_OUT: the next norm's weights g [n] (any buffer otherwise).
//   7 normed     array<f32>  NORM_OUT: Y·g, laid out as Y (the next products' input; any buffer otherwise).
// Each invocation computes 4 consecutive rows (a vec4 per token) for TILE_M tokens, so every weight word is
// dequantized once per TILE_M tokens and every x value serves 4 rows. K_SPLIT invocations may share the 4 rows (each
// takes every K_SPLIT-th block; partial sums added in workgroup memory): 1 on CPU adapters, more on GPUs.
// Overrides: WORKGROUP_SIZE; K_SPLIT (a power of two dividing WORKGROUP_SIZE); TILE_M (1..4 tokens per
//   invocation: 1 for decode); HAS_BIAS (adds bias[y_offset + row]); ACCUMULATE (adds into Y: the residual, fused);
//   GATED (SwiGLU: w holds two matrices of n rows each, gate then up, as the weight loader stacks them; Y gets
//   silu(gate·x) · (up·x), so the gate and up products and the activation are one dispatch reading x once);
//   GELU (with GATED: GeGLU, Gemma's gelu_tanh(gate·x) · (up·x), in place of SiLU); GELU_F16 (with GELU: the GELU as
//   llama.cpp's CPU backend computes it, from a table over f16: input and result rounded to f16, |g| >= 10 exact;
//   for comparing with that oracle); NORM_OUT (with ACCUMULATE, where Y is the residual stream: also writes Y·g to
//   `normed` and each token's sum of the new Y² over this workgroup's rows to norm_sums[t·norm_groups + row
//   group], so that the next product needs no RMSNorm dispatch); NORMED (x is such a Y·g: the sums are scaled by
//   1/sqrt(Σ norm_sums of the token / k + eps) before bias and SwiGLU, i.e. the product of RMSNorm(Y)·g).
// Dispatch: 1-D, ceil(n / (4 * WORKGROUP_SIZE / K_SPLIT)) * ceil(m / TILE_M) workgroups (may arrive split over
//   x and y; see src/gpu/dispatch.ts).

override WORKGROUP_SIZE: u32 = 64;
override K_SPLIT: u32 = 1;
override TILE_M: u32 = 1;

// NORM_OUT: the sums of squares go out per norm group of invocations: the workgroup, or where the split part has
// NORM_SUBGROUP (consecutive invocations in subgroups of that exact size: CPU adapters) each subgroup, summed
// without a barrier (on SwiftShader a barrier anywhere in a kernel runs its subgroups as coroutines, which cost the
// 20M rows' decode ~4%: bench/README.md). src/gpu/kernels/products.ts normGroups counts them the same way.
var<workgroup> norm_partial: array<vec4<f32>, WORKGROUP_SIZE>;

fn norm_group_size() -> u32 {
  return select(WORKGROUP_SIZE, NORM_SUBGROUP, NORM_SUBGROUP > 0u);
}

// The sum of `value` over the invocation's norm group, valid in its first invocation (uniform control flow).
fn norm_group_sum(value: vec4<f32>, lid: u32) -> vec4<f32> {
  if (NORM_SUBGROUP > 0u) {
    return subgroup_sum(value);
  }
  norm_partial[lid] = value;
  workgroupBarrier();
  var total = vec4<f32>(0.0);
  if (lid == 0u) {
    for (var i = 0u; i < WORKGROUP_SIZE; i++) {
      total += norm_partial[i];
    }
  }
  return total;
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
  x_lane = lid & 3u;
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

  // acc_t: token t0 + t, rows row0 .. row0 + 3 (GATED: of the gate; up_t: of the up matrix, n rows further on).
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  var up0 = vec4<f32>(0.0);
  var up1 = vec4<f32>(0.0);
  var up2 = vec4<f32>(0.0);
  var up3 = vec4<f32>(0.0);
  let up_words = n * blocks * BLOCK_WORDS;
  // GATED: the up rows in the same pass over the blocks (their x loads shared with the gate's), or, where the body
  // says UP_OWN_PASS, in a second pass (two bodies inlined in one loop made the quantized ones spill: bench/README.md,
  // "The up matrix in its own pass").
  for (var b = lane; b < blocks; b += K_SPLIT) {
    let o = b * BLOCK_WORDS;
    accumulate_block(w0 + o, w1 + o, w2 + o, w3 + o, b, x0, x1, x2, x3, &acc0, &acc1, &acc2, &acc3);
    if (GATED && !UP_OWN_PASS) {
      let u = up_words + o;
      accumulate_block(w0 + u, w1 + u, w2 + u, w3 + u, b, x0, x1, x2, x3, &up0, &up1, &up2, &up3);
    }
  }
  if (GATED && UP_OWN_PASS) {
    for (var b = lane; b < blocks; b += K_SPLIT) {
      let u = up_words + b * BLOCK_WORDS;
      accumulate_block(w0 + u, w1 + u, w2 + u, w3 + u, b, x0, x1, x2, x3, &up0, &up1, &up2, &up3);
    }
  }

  if (K_SPLIT > 1u) {
    acc0 = sum_over_split(acc0, lid, lane);
    if (GATED) {
      up0 = sum_over_split(up0, lid, lane);
    }
    if (TILE_M > 1u) {
      acc1 = sum_over_split(acc1, lid, lane);
      if (GATED) {
        up1 = sum_over_split(up1, lid, lane);
      }
    }
    if (TILE_M > 2u) {
      acc2 = sum_over_split(acc2, lid, lane);
      if (GATED) {
        up2 = sum_over_split(up2, lid, lane);
      }
    }
    if (TILE_M > 3u) {
      acc3 = sum_over_split(acc3, lid, lane);
      if (GATED) {
        up3 = sum_over_split(up3, lid, lane);
      }
    }
  }
  if (NORMED) {
    // RMSNorm's scale is one factor per token (shaders/norm_scale.wgsl): applied to the sums, the weights saw x·g.
    let r = vec4<f32>(norm_scale(t0), norm_scale(t0 + 1u), norm_scale(t0 + 2u), norm_scale(t0 + 3u));
    acc0 *= r.x;
    acc1 *= r.y;
    acc2 *= r.z;
    acc3 *= r.w;
    up0 *= r.x;
    up1 *= r.y;
    up2 *= r.z;
    up3 *= r.w;
  }
  if (GATED) {
    acc0 = swiglu(acc0, up0);
    acc1 = swiglu(acc1, up1);
    acc2 = swiglu(acc2, up2);
    acc3 = swiglu(acc3, up3);
  }
  var squares = vec4<f32>(0.0);
  if (lane == 0u) {
    squares.x = store(t0, row0, acc0);
    if (TILE_M > 1u) {
      squares.y = store(t0 + 1u, row0, acc1);
    }
    if (TILE_M > 2u) {
      squares.z = store(t0 + 2u, row0, acc2);
    }
    if (TILE_M > 3u) {
      squares.w = store(t0 + 3u, row0, acc3);
    }
  }
  if (NORM_OUT) {
    // The sums of squares (components: tokens t0 .. t0 + 3) of each norm group, written by its first invocation.
    let total = norm_group_sum(squares, lid);
    let size = norm_group_size();
    if (lid % size == 0u) {
      let group = (wg % row_groups) * (WORKGROUP_SIZE / size) + lid / size;
      for (var t = 0u; t < TILE_M; t++) {
        if (t0 + t < m) {
          norm_sums[(t0 + t) * params.norm_groups + group] = total[t];
        }
      }
    }
  }
}
