// matmul_q8_0: the Q8_0 product's tuned block body (d applied once per block). The kernel is the block decoder
// shaders/decode_q8_0.wgsl (layout, BLOCK_WORDS, unpack_i8x4), this file, the K_SPLIT reduction and the shared
// skeleton shaders/matmul.wgsl (bindings, tiling, output; composed in src/gpu/shaders.ts): read that header for
// the bindings, overrides and dispatch.

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, xb: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let d = vec4<f32>(unpack2x16float(w[o0]).x, unpack2x16float(w[o1]).x, unpack2x16float(w[o2]).x, unpack2x16float(w[o3]).x);
  // s_t: Σ q·x over this block for token t (rows in the components); d applied once per block.
  var s0 = vec4<f32>(0.0);
  var s1 = vec4<f32>(0.0);
  var s2 = vec4<f32>(0.0);
  var s3 = vec4<f32>(0.0);
  for (var i = 1u; i < 9u; i++) {
    let q0 = unpack_i8x4(w[o0 + i]);
    let q1 = unpack_i8x4(w[o1 + i]);
    let q2 = unpack_i8x4(w[o2 + i]);
    let q3 = unpack_i8x4(w[o3 + i]);
    let xi = xb + i - 1u;
    s0 += dot4(q0, q1, q2, q3, x[x0 + xi]);
    if (TILE_M > 1u) {
      s1 += dot4(q0, q1, q2, q3, x[x1 + xi]);
    }
    if (TILE_M > 2u) {
      s2 += dot4(q0, q1, q2, q3, x[x2 + xi]);
    }
    if (TILE_M > 3u) {
      s3 += dot4(q0, q1, q2, q3, x[x3 + xi]);
    }
  }
  *acc0 += d * s0;
  if (TILE_M > 1u) {
    *acc1 += d * s1;
    *acc2 += d * s2;
    *acc3 += d * s3;
  }
}
