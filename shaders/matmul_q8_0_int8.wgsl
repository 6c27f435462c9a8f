// matmul_q8_0_int8: the Q8_0 product's int8-activation body. x is shaders/quantize_activations.wgsl's int8 blocks
// in its quads layout (block b at vec4 3b: words 0..7 the 32 codes, value 4j + i in byte i of word j, then (d_lo,
// d_hi, Σq_lo, Σq_hi) of the halves 0..15 and 16..31). Composed in src/gpu/shaders.ts with the Q8_0 decoder
// (shaders/decode_q8_0.wgsl after decode_units.wgsl: layout, BLOCK_WORDS, biased_codes), the K_SPLIT reduction and
// the skeleton shaders/matmul.wgsl: read that header for the bindings, overrides and dispatch.
//
// Each activation word is widened by one unpack4x8snorm (q / 127) and each weight word by one unpack4x8unorm of its
// biased codes ((w + 128) / 255, as the f32 body, shaders/matmul_q8_0.wgsl), so per half block
// Σ w·q = 255·127·Σ (units·snorms) - 128·Σq, scaled by d_w·d_x. On CPU adapters (SwiftShader) a storage load with a
// run-time index is a lane-by-lane gather and each shader op several SIMD instructions: a step reads one activation
// word for 4 codes (the f32 body: four) and needs no Σx (bench/README.md, "Int8 activations written by their
// producer"). Not dot4I8Packed: emulated byte by byte there (~1.6x slower than the f32 body). f32 sums: the codes
// and codes over 127 are exact, the sums within a few ulps.

// Activation word l (0..7) of the block at vec4 q, as four values q / 127.
fn activation_units(q: u32, l: u32) -> vec4<f32> {
  return unpack4x8snorm(bitcast<u32>(x[q + (l >> 2u)][l & 3u]));
}

// The block at vec4 q's (d_lo, d_hi, Σq_lo, Σq_hi).
fn activation_tail(q: u32) -> vec4<f32> {
  let tail = bitcast<vec4<u32>>(x[q + 2u]);
  return vec4<f32>(bitcast<vec2<f32>>(tail.xy), vec2<f32>(bitcast<vec2<i32>>(tail.zw)));
}

// Rows' d_w times Σ w·d_x·q over a block, from the halves' unit sums lo, hi and the tail a.
fn block_total(d: vec4<f32>, lo: vec4<f32>, hi: vec4<f32>, a: vec4<f32>) -> vec4<f32> {
  return d * (a.x * ((255.0 * 127.0) * lo - 128.0 * a.z) + a.y * ((255.0 * 127.0) * hi - 128.0 * a.w));
}

// Adds to *s_t the unit sums of one half block (words first .. first + 3) of rows o0..o3 with token t's activation
// words (its block at vec4 q_t), rows in the components.
fn half_block(o0: u32, o1: u32, o2: u32, o3: u32, first: u32, q0: u32, q1: u32, q2: u32, q3: u32,
    s0: ptr<function, vec4<f32>>, s1: ptr<function, vec4<f32>>, s2: ptr<function, vec4<f32>>, s3: ptr<function, vec4<f32>>) {
  for (var i = first; i < first + 4u; i++) {
    let c0 = biased_codes(w[o0 + 1u + i]);
    let c1 = biased_codes(w[o1 + 1u + i]);
    let c2 = biased_codes(w[o2 + 1u + i]);
    let c3 = biased_codes(w[o3 + 1u + i]);
    *s0 += dot4(c0, c1, c2, c3, activation_units(q0, i));
    if (TILE_M > 1u) {
      *s1 += dot4(c0, c1, c2, c3, activation_units(q1, i));
    }
    if (TILE_M > 2u) {
      *s2 += dot4(c0, c1, c2, c3, activation_units(q2, i));
    }
    if (TILE_M > 3u) {
      *s3 += dot4(c0, c1, c2, c3, activation_units(q3, i));
    }
  }
}

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3 (token t's
// block b at vec4 x_t + 3b).
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let d = bitcast<vec4<f32>>(vec4<u32>(w[o0], w[o1], w[o2], w[o3]));
  let q = b * 3u;
  // Per token the unit sums of the low (words 0..3) and the high half (words 4..7), rows in the components.
  var lo0 = vec4<f32>(0.0);
  var lo1 = vec4<f32>(0.0);
  var lo2 = vec4<f32>(0.0);
  var lo3 = vec4<f32>(0.0);
  var hi0 = vec4<f32>(0.0);
  var hi1 = vec4<f32>(0.0);
  var hi2 = vec4<f32>(0.0);
  var hi3 = vec4<f32>(0.0);
  half_block(o0, o1, o2, o3, 0u, x0 + q, x1 + q, x2 + q, x3 + q, &lo0, &lo1, &lo2, &lo3);
  half_block(o0, o1, o2, o3, 4u, x0 + q, x1 + q, x2 + q, x3 + q, &hi0, &hi1, &hi2, &hi3);
  *acc0 += block_total(d, lo0, hi0, activation_tail(x0 + q));
  if (TILE_M > 1u) {
    *acc1 += block_total(d, lo1, hi1, activation_tail(x1 + q));
    *acc2 += block_total(d, lo2, hi2, activation_tail(x2 + q));
    *acc3 += block_total(d, lo3, hi3, activation_tail(x3 + q));
  }
}
