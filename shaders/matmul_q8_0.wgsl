// matmul_q8_0: the Q8_0 product's tuned block body (d applied once per block). The kernel is the block decoder
// shaders/decode_q8_0.wgsl (layout, BLOCK_WORDS, biased_codes), this file, the K_SPLIT reduction and the shared
// skeleton shaders/matmul.wgsl (bindings, tiling, output; composed in src/gpu/shaders.ts): read that header for
// the bindings, overrides and dispatch.
//
// The codes are read biased, (q + 128) / 255 (biased_codes: one unpack4x8unorm of the word with each byte's sign bit
// flipped), and Σ q·x = 255·Σ biased·x - 128·Σ x. One widening op a word, where the shifts and sign extensions of
// unpack_i8x4 are about eight: on CPU adapters, where each shader op costs several SIMD instructions (SwiftShader's
// Subzero JIT), this body is the fastest Q8_0 decode product measured (bench/README.md, "Q8_0 through
// unpack4x8unorm"), faster than the int8-activation forms measured (an emulated dot4I8Packed; one unpack4x8snorm an activation word). Exact for every byte; the biased
// sum costs a few f32 ulps of 128·Σ|x| against the direct one.

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  let d = vec4<f32>(unpack2x16float(w[o0]).x, unpack2x16float(w[o1]).x, unpack2x16float(w[o2]).x, unpack2x16float(w[o3]).x);
  // s_t: Σ biased·x over this block for token t (rows in the components), t_t: Σ x; d applied once per block.
  var s0 = vec4<f32>(0.0);
  var s1 = vec4<f32>(0.0);
  var s2 = vec4<f32>(0.0);
  var s3 = vec4<f32>(0.0);
  var t0 = vec4<f32>(0.0);
  var t1 = vec4<f32>(0.0);
  var t2 = vec4<f32>(0.0);
  var t3 = vec4<f32>(0.0);
  for (var i = 1u; i < 9u; i++) {
    let q0 = biased_codes(w[o0 + i]);
    let q1 = biased_codes(w[o1 + i]);
    let q2 = biased_codes(w[o2 + i]);
    let q3 = biased_codes(w[o3 + i]);
    let xi = xb + i - 1u;
    let v0 = x[x0 + xi];
    s0 += dot4(q0, q1, q2, q3, v0);
    t0 += v0;
    if (TILE_M > 1u) {
      let v1 = x[x1 + xi];
      s1 += dot4(q0, q1, q2, q3, v1);
      t1 += v1;
    }
    if (TILE_M > 2u) {
      let v2 = x[x2 + xi];
      s2 += dot4(q0, q1, q2, q3, v2);
      t2 += v2;
    }
    if (TILE_M > 3u) {
      let v3 = x[x3 + xi];
      s3 += dot4(q0, q1, q2, q3, v3);
      t3 += v3;
    }
  }
  *acc0 += d * from_units(s0, t0, 128.0);
  if (TILE_M > 1u) {
    *acc1 += d * from_units(s1, t1, 128.0);
    *acc2 += d * from_units(s2, t2, 128.0);
    *acc3 += d * from_units(s3, t3, 128.0);
  }
}
