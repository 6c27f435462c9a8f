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

// GATED: the up rows in a pass of their own (shaders/matmul.wgsl).
const UP_OWN_PASS: bool = true;

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
  // Words 1..8 hold elements 4(i-1)..4(i-1)+3.
  if (SHARED_X) {
    // Decode with the quad's x shared: the words in two fours, each against a quad of x.
    q8_quad(o0 + 1u, o1 + 1u, o2 + 1u, o3 + 1u, x_quad(x0 + xb), &s0, &s1, &s2, &s3, &t0, &t1, &t2, &t3);
    q8_quad(o0 + 5u, o1 + 5u, o2 + 5u, o3 + 5u, x_quad(x0 + xb + 4u), &s0, &s1, &s2, &s3, &t0, &t1, &t2, &t3);
  } else {
    for (var i = 1u; i < 9u; i++) {
      let xi = xb + i - 1u;
      q8_word(o0 + i, o1 + i, o2 + i, o3 + i, x[x0 + xi], x[x1 + xi], x[x2 + xi], x[x3 + xi], &s0, &s1, &s2, &s3, &t0, &t1, &t2, &t3);
    }
  }
  *acc0 += d * (s0 - 128.0 * ((t0.x + t0.y) + t0.z));
  if (TILE_M > 1u) {
    *acc1 += d * (s1 - 128.0 * ((t1.x + t1.y) + t1.z));
    *acc2 += d * (s2 - 128.0 * ((t2.x + t2.y) + t2.z));
    *acc3 += d * (s3 - 128.0 * ((t3.x + t3.y) + t3.z));
  }
}

// One qs word of the 4 rows (at p0..p3) against token t's 4 x values v_t.
fn q8_word(p0: u32, p1: u32, p2: u32, p3: u32, v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>,
    s0: ptr<function, vec4<f32>>, s1: ptr<function, vec4<f32>>, s2: ptr<function, vec4<f32>>, s3: ptr<function, vec4<f32>>,
    t0: ptr<function, vec4<f32>>, t1: ptr<function, vec4<f32>>, t2: ptr<function, vec4<f32>>, t3: ptr<function, vec4<f32>>) {
  let q0 = placed_codes(w[p0]);
  let q1 = placed_codes(w[p1]);
  let q2 = placed_codes(w[p2]);
  let q3 = placed_codes(w[p3]);
  *s0 += dot4(q0, q1, q2, q3, v0 * PLACES);
  *t0 += v0;
  if (TILE_M > 1u) {
    *s1 += dot4(q0, q1, q2, q3, v1 * PLACES);
    *t1 += v1;
  }
  if (TILE_M > 2u) {
    *s2 += dot4(q0, q1, q2, q3, v2 * PLACES);
    *t2 += v2;
  }
  if (TILE_M > 3u) {
    *s3 += dot4(q0, q1, q2, q3, v3 * PLACES);
    *t3 += v3;
  }
}

// SHARED_X (one token): words p_r .. p_r + 3 of the 4 rows against the quad q.
fn q8_quad(p0: u32, p1: u32, p2: u32, p3: u32, q: XQuad, s0: ptr<function, vec4<f32>>, s1: ptr<function, vec4<f32>>,
    s2: ptr<function, vec4<f32>>, s3: ptr<function, vec4<f32>>, t0: ptr<function, vec4<f32>>, t1: ptr<function, vec4<f32>>,
    t2: ptr<function, vec4<f32>>, t3: ptr<function, vec4<f32>>) {
  q8_word(p0, p1, p2, p3, x_q0(q), vec4<f32>(), vec4<f32>(), vec4<f32>(), s0, s1, s2, s3, t0, t1, t2, t3);
  q8_word(p0 + 1u, p1 + 1u, p2 + 1u, p3 + 1u, x_q1(q), vec4<f32>(), vec4<f32>(), vec4<f32>(), s0, s1, s2, s3, t0, t1, t2, t3);
  q8_word(p0 + 2u, p1 + 2u, p2 + 2u, p3 + 2u, x_q2(q), vec4<f32>(), vec4<f32>(), vec4<f32>(), s0, s1, s2, s3, t0, t1, t2, t3);
  q8_word(p0 + 3u, p1 + 3u, p2 + 3u, p3 + 3u, x_q3(q), vec4<f32>(), vec4<f32>(), vec4<f32>(), s0, s1, s2, s3, t0, t1, t2, t3);
}
