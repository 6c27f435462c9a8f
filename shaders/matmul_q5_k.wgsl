// matmul_q5_k: the Q5_K product's tuned block body, shaders/matmul_q4_k.wgsl's with the fifth bits: scales decoded
// once per block for the 4 rows (kquant_scales), each qs word read once for both nibbles and each qh word once for
// both sub-blocks' bits, mins applied through Σx. The kernel is the block decoder shaders/decode_q5_k.wgsl (after
// decode_units.wgsl and decode_kquant_scales.wgsl: layout, BLOCK_WORDS, kquant_rows, kquant_chunk, row_joined), this file, the
// K_SPLIT reduction and the shared skeleton shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read that header
// for the bindings, overrides and dispatch.
// Everything stays in its place (bench/README.md, "Shifts": on CPU adapters a WGSL shift runs lane by lane, a mask, a
// multiply or a conversion is one SIMD op): each nibble and its fifth bit (chunk c's: bit 2c of each qh byte for the
// low sub-block, 2c + 1 for the high one) are joined in one word by multiplies (each masked first; row_joined), the
// bit just above the nibble, so a mask and a conversion give each byte's whole 5-bit code times its place. The low
// codes sit at bits 0-4 of each byte (chunk 3's bit 6 cannot move down, so its nibbles move up instead: bits 2-6,
// their place taken out by the scale); the high codes at bits 4-8 (the next byte's low nibble, masked away), which
// byte 3 does not have: its fifth bit is taken alone (e, row_field). The top nibble (bit 31) comes less 8, chunk 3's byte-3
// fifth bit (bit 31) less 1 (their bits flipped); the 8 and the 16 come back through Σ x.w, the mins through Σx.

// Chunk 3's low codes: bits 2-6 of each byte (decode_units.wgsl has the other 5-bit fields).
const FIVE_BITS_UP: vec4<u32> = vec4<u32>(0x7Cu, 0x7C00u, 0x7C0000u, 0x7C000000u);

// GATED: the up rows in a pass of their own (shaders/matmul.wgsl).
const UP_OWN_PASS: bool = true;

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  // Each row's d, dmin and eight (scale, min), decoded once per block (placed, no shifts).
  let rows = kquant_rows(o0, o1, o2, o3);
  for (var c = 0u; c < 4u; c++) {
    // Chunk c's joins: the low codes' fifth bit (bit 2c) moves to bit 4 (c < 3), or the nibble to bits 2-5 under
    // it (c = 3: place 4, taken out of the scale by `low_place`); the high codes' (bit 2c + 1) to bit 8. Byte 3's
    // high fifth bit (bit 25 + 2c) comes alone against u.w·16·2^-(25 + 2c); chunk 3's is bit 31 (flipped: less 1,
    // 16 more through Σ u.w: high_top).
    let last = c == 3u;
    let low_bit = 0x01010101u << (2u * c);
    let high_bit = low_bit * 2u;
    let nib_mul = select(1u, 4u, last);
    let low_mul = select(16u >> (2u * c), 1u, last);
    let high_mul = 128u >> (2u * c);
    let low_fields = select(FIVE_BITS, FIVE_BITS_UP, last);
    let low_place = select(1.0, 0.25, last);
    let e_mask = 0x02000000u << (2u * c);
    let e_flip = select(0u, TOP, last);
    let e_place = ldexp(1.0, -21 - 2 * i32(c));
    let high_top = select(8.0, 24.0, last);
    // Chunk c's sub-blocks 2c (low nibbles) and 2c + 1 (high nibbles): d·scale and dmin·min per row.
    let a = kquant_chunk(rows, c);
    // Per token: code·x over the low and the high sub-block (rows in the components; the high one's top nibbles
    // less 8), Σx over each, and Σ x.w over the top nibbles' x (sx.z: high_top of it is what the high sums lack).
    var lo0 = vec4<f32>(0.0);
    var lo1 = vec4<f32>(0.0);
    var lo2 = vec4<f32>(0.0);
    var lo3 = vec4<f32>(0.0);
    var hi0 = vec4<f32>(0.0);
    var hi1 = vec4<f32>(0.0);
    var hi2 = vec4<f32>(0.0);
    var hi3 = vec4<f32>(0.0);
    var sx0 = vec3<f32>(0.0);
    var sx1 = vec3<f32>(0.0);
    var sx2 = vec3<f32>(0.0);
    var sx3 = vec3<f32>(0.0);
    for (var l = 0u; l < 8u; l++) {
      let qi = 12u + 8u * c + l;
      let a0 = w[o0 + qi];
      let a1 = w[o1 + qi];
      let a2 = w[o2 + qi];
      let a3 = w[o3 + qi];
      let hq0 = w[o0 + 4u + l];
      let hq1 = w[o1 + 4u + l];
      let hq2 = w[o2 + 4u + l];
      let hq3 = w[o3 + 4u + l];
      let cl = row_joined(a0, a1, a2, a3, 0x0F0F0F0Fu, nib_mul, hq0, hq1, hq2, hq3, low_bit, low_mul, 0u, low_fields);
      let ch = row_joined(a0, a1, a2, a3, 0xF0F0F0F0u, 1u, hq0, hq1, hq2, hq3, high_bit, high_mul, TOP, FIVE_BITS_HIGH);
      let e = row_field(hq0, hq1, hq2, hq3, e_mask, e_flip);
      let xi = xb + 16u * c + l;
      let v0 = x[x0 + xi];
      let u0 = x[x0 + xi + 8u];
      lo0 += dot4(cl.b0, cl.b1, cl.b2, cl.b3, v0 * PLACES);
      hi0 += dot4(ch.b0, ch.b1, ch.b2, ch.b3, u0 * HIGH_PLACES) + e * (e_place * u0.w);
      sx0 += vec3<f32>(dot(v0, vec4<f32>(1.0)), dot(u0, vec4<f32>(1.0)), u0.w);
      if (TILE_M > 1u) {
        let v1 = x[x1 + xi];
        let u1 = x[x1 + xi + 8u];
        lo1 += dot4(cl.b0, cl.b1, cl.b2, cl.b3, v1 * PLACES);
        hi1 += dot4(ch.b0, ch.b1, ch.b2, ch.b3, u1 * HIGH_PLACES) + e * (e_place * u1.w);
        sx1 += vec3<f32>(dot(v1, vec4<f32>(1.0)), dot(u1, vec4<f32>(1.0)), u1.w);
      }
      if (TILE_M > 2u) {
        let v2 = x[x2 + xi];
        let u2 = x[x2 + xi + 8u];
        lo2 += dot4(cl.b0, cl.b1, cl.b2, cl.b3, v2 * PLACES);
        hi2 += dot4(ch.b0, ch.b1, ch.b2, ch.b3, u2 * HIGH_PLACES) + e * (e_place * u2.w);
        sx2 += vec3<f32>(dot(v2, vec4<f32>(1.0)), dot(u2, vec4<f32>(1.0)), u2.w);
      }
      if (TILE_M > 3u) {
        let v3 = x[x3 + xi];
        let u3 = x[x3 + xi + 8u];
        lo3 += dot4(cl.b0, cl.b1, cl.b2, cl.b3, v3 * PLACES);
        hi3 += dot4(ch.b0, ch.b1, ch.b2, ch.b3, u3 * HIGH_PLACES) + e * (e_place * u3.w);
        sx3 += vec3<f32>(dot(v3, vec4<f32>(1.0)), dot(u3, vec4<f32>(1.0)), u3.w);
      }
    }
    let low_scale = low_place * a.low_scale;
    *acc0 += low_scale * lo0 + a.high_scale * (hi0 + high_top * sx0.z) - a.low_min * sx0.x - a.high_min * sx0.y;
    if (TILE_M > 1u) {
      *acc1 += low_scale * lo1 + a.high_scale * (hi1 + high_top * sx1.z) - a.low_min * sx1.x - a.high_min * sx1.y;
      *acc2 += low_scale * lo2 + a.high_scale * (hi2 + high_top * sx2.z) - a.low_min * sx2.x - a.high_min * sx2.y;
      *acc3 += low_scale * lo3 + a.high_scale * (hi3 + high_top * sx3.z) - a.low_min * sx3.x - a.high_min * sx3.y;
    }
  }
}
