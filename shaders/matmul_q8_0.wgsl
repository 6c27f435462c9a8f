// matmul_q8_0: the Q8_0 product's tuned block body (d applied once per block). The kernel is the block decoder
// shaders/decode_q8_0.wgsl (layout, BLOCK_WORDS; after decode_units.wgsl: placed_codes, PLACES), this file, the
// K_SPLIT reduction and the shared skeleton shaders/matmul.wgsl (bindings, tiling, output; composed in
// src/gpu/shaders.ts): read that header for the bindings, overrides and dispatch.
//
// The codes stay in their bytes' places (placed_codes: q + 128 for the low three bytes, whose sign bits are flipped,
// times 2^0, 2^8, 2^16; the top byte's q times 2^24, its sign the i32's), each by one mask and one i32 -> f32
// conversion, and each activation vec4 is scaled by PLACES once for the 4 rows: Σ q·x = Σ placed·x' -
// 128·Σ (x0 + x1 + x2) over the words. No shifts: on CPU adapters (SwiftShader's Subzero JIT) a WGSL shift runs lane
// by lane, and the pack built-in this body used before (unpack4x8unorm of the biased word, four shifts, masks, u32
// conversions and multiplies inside) cost more than the masks and conversions (bench/README.md, "Shifts").
// Products of exact integers and the activations, scaled by powers of two: exact up to the f32 rounding of the sums.

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  let d = bitcast<vec4<f32>>(vec4<u32>(w[o0], w[o1], w[o2], w[o3]));
  // s_t: Σ placed·x' over this block for token t (rows in the components), t_t: Σ x; d applied once per block.
  var s0 = vec4<f32>(0.0);
  var s1 = vec4<f32>(0.0);
  var s2 = vec4<f32>(0.0);
  var s3 = vec4<f32>(0.0);
  var t0 = vec4<f32>(0.0);
  var t1 = vec4<f32>(0.0);
  var t2 = vec4<f32>(0.0);
  var t3 = vec4<f32>(0.0);
  for (var i = 1u; i < 9u; i++) {
    let q0 = placed_codes(w[o0 + i]);
    let q1 = placed_codes(w[o1 + i]);
    let q2 = placed_codes(w[o2 + i]);
    let q3 = placed_codes(w[o3 + i]);
    let xi = xb + i - 1u;
    let v0 = x[x0 + xi];
    s0 += dot4(q0, q1, q2, q3, v0 * PLACES);
    t0 += v0;
    if (TILE_M > 1u) {
      let v1 = x[x1 + xi];
      s1 += dot4(q0, q1, q2, q3, v1 * PLACES);
      t1 += v1;
    }
    if (TILE_M > 2u) {
      let v2 = x[x2 + xi];
      s2 += dot4(q0, q1, q2, q3, v2 * PLACES);
      t2 += v2;
    }
    if (TILE_M > 3u) {
      let v3 = x[x3 + xi];
      s3 += dot4(q0, q1, q2, q3, v3 * PLACES);
      t3 += v3;
    }
  }
  *acc0 += d * (s0 - 128.0 * ((t0.x + t0.y) + t0.z));
  if (TILE_M > 1u) {
    *acc1 += d * (s1 - 128.0 * ((t1.x + t1.y) + t1.z));
    *acc2 += d * (s2 - 128.0 * ((t2.x + t2.y) + t2.z));
    *acc3 += d * (s3 - 128.0 * ((t3.x + t3.y) + t3.z));
  }
}
