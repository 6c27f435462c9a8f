// matmul_q5_k: the Q5_K product's tuned block body, shaders/matmul_q4_k.wgsl's with the fifth bits: scales decoded
// once per block for the 4 rows (kquant_scales), each qs word read once for both nibbles and each qh word once for
// both sub-blocks' bits, mins applied through Σx. The kernel is the block decoder shaders/decode_q5_k.wgsl (after
// decode_units.wgsl and decode_kquant_scales.wgsl: layout, BLOCK_WORDS, kquant_rows, kquant_chunk, row_nibbles), this file, the
// K_SPLIT reduction and the shared skeleton shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read that header
// for the bindings, overrides and dispatch.
// Everything stays in its place (bench/README.md, "Shifts": on CPU adapters a WGSL shift runs lane by lane): the
// nibbles as row_nibbles gives them (the top one less 8, its 8·x added back per sub-block), and chunk c's fifth bits,
// bit 2c (low sub-block) and 2c + 1 (high sub-block) of each qh byte, each masked where it lies; the bits take the
// nibbles' scaled activations (PLACES, HIGH_PLACES), so a chunk's bit sums come in a power of two per chunk that the
// sub-block's scale takes out with the 16 of code = nibble + 16·bit. The high bits are converted from u32: chunk 3's
// sit at bit 31 of their word.

// The high bits `mask` of a word of each of four rows, in place, converted from u32 (chunk 3's sit at bit 31).
fn row_high_bits(h0: u32, h1: u32, h2: u32, h3: u32, mask: vec4<u32>) -> RowBits {
  return RowBits(vec4<f32>(vec4<u32>(h0) & mask), vec4<f32>(vec4<u32>(h1) & mask), vec4<f32>(vec4<u32>(h2) & mask),
    vec4<f32>(vec4<u32>(h3) & mask));
}

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  // Each row's d, dmin and eight (scale, min), decoded once per block (placed, no shifts).
  let rows = kquant_rows(o0, o1, o2, o3);
  // Chunk c's fifth bits: bit 2c of each qh byte (low sub-block), 2c + 1 (high); times PLACES (HIGH_PLACES) their
  // place is 2^2c (2^(2c - 3)), so 16·bit is (16·2^-2c)·that (low_bits), (2^(7 - 2c))·that (high_bits).
  var low_mask = vec4<u32>(0x1u, 0x100u, 0x10000u, 0x1000000u);
  var low_bits = 16.0;
  for (var c = 0u; c < 4u; c++) {
    let high_mask = low_mask * 2u;
    let high_bits = 8.0 * low_bits;
    // Chunk c's sub-blocks 2c (low nibbles) and 2c + 1 (high nibbles): d·scale and dmin·min per row.
    let a = kquant_chunk(rows, c);
    // Per token: nibble·x over the low and the high sub-block (rows in the components; the high one's top nibbles
    // less 8), their fifth bits' sums (bl, bh), Σx over each, and 8·Σx over the top nibbles' x (sx.z).
    var lo0 = vec4<f32>(0.0);
    var lo1 = vec4<f32>(0.0);
    var lo2 = vec4<f32>(0.0);
    var lo3 = vec4<f32>(0.0);
    var hi0 = vec4<f32>(0.0);
    var hi1 = vec4<f32>(0.0);
    var hi2 = vec4<f32>(0.0);
    var hi3 = vec4<f32>(0.0);
    var bl0 = vec4<f32>(0.0);
    var bl1 = vec4<f32>(0.0);
    var bl2 = vec4<f32>(0.0);
    var bl3 = vec4<f32>(0.0);
    var bh0 = vec4<f32>(0.0);
    var bh1 = vec4<f32>(0.0);
    var bh2 = vec4<f32>(0.0);
    var bh3 = vec4<f32>(0.0);
    var sx0 = vec3<f32>(0.0);
    var sx1 = vec3<f32>(0.0);
    var sx2 = vec3<f32>(0.0);
    var sx3 = vec3<f32>(0.0);
    for (var l = 0u; l < 8u; l++) {
      let qi = 12u + 8u * c + l;
      let n = row_nibbles(o0 + qi, o1 + qi, o2 + qi, o3 + qi);
      let hq0 = w[o0 + 4u + l];
      let hq1 = w[o1 + 4u + l];
      let hq2 = w[o2 + 4u + l];
      let hq3 = w[o3 + 4u + l];
      let bl = row_bits(hq0, hq1, hq2, hq3, low_mask);
      let bh = row_high_bits(hq0, hq1, hq2, hq3, high_mask);
      let xi = xb + 16u * c + l;
      let v0 = x[x0 + xi];
      let u0 = x[x0 + xi + 8u];
      let xl0 = v0 * PLACES;
      let xh0 = u0 * HIGH_PLACES;
      lo0 += dot4(n.l0, n.l1, n.l2, n.l3, xl0);
      hi0 += dot4(n.h0, n.h1, n.h2, n.h3, xh0);
      bl0 += dot4(bl.b0, bl.b1, bl.b2, bl.b3, xl0);
      bh0 += dot4(bh.b0, bh.b1, bh.b2, bh.b3, xh0);
      sx0 += vec3<f32>(dot(v0, vec4<f32>(1.0)), dot(u0, vec4<f32>(1.0)), u0.w);
      if (TILE_M > 1u) {
        let v1 = x[x1 + xi];
        let u1 = x[x1 + xi + 8u];
        let xl1 = v1 * PLACES;
        let xh1 = u1 * HIGH_PLACES;
        lo1 += dot4(n.l0, n.l1, n.l2, n.l3, xl1);
        hi1 += dot4(n.h0, n.h1, n.h2, n.h3, xh1);
        bl1 += dot4(bl.b0, bl.b1, bl.b2, bl.b3, xl1);
        bh1 += dot4(bh.b0, bh.b1, bh.b2, bh.b3, xh1);
        sx1 += vec3<f32>(dot(v1, vec4<f32>(1.0)), dot(u1, vec4<f32>(1.0)), u1.w);
      }
      if (TILE_M > 2u) {
        let v2 = x[x2 + xi];
        let u2 = x[x2 + xi + 8u];
        let xl2 = v2 * PLACES;
        let xh2 = u2 * HIGH_PLACES;
        lo2 += dot4(n.l0, n.l1, n.l2, n.l3, xl2);
        hi2 += dot4(n.h0, n.h1, n.h2, n.h3, xh2);
        bl2 += dot4(bl.b0, bl.b1, bl.b2, bl.b3, xl2);
        bh2 += dot4(bh.b0, bh.b1, bh.b2, bh.b3, xh2);
        sx2 += vec3<f32>(dot(v2, vec4<f32>(1.0)), dot(u2, vec4<f32>(1.0)), u2.w);
      }
      if (TILE_M > 3u) {
        let v3 = x[x3 + xi];
        let u3 = x[x3 + xi + 8u];
        let xl3 = v3 * PLACES;
        let xh3 = u3 * HIGH_PLACES;
        lo3 += dot4(n.l0, n.l1, n.l2, n.l3, xl3);
        hi3 += dot4(n.h0, n.h1, n.h2, n.h3, xh3);
        bl3 += dot4(bl.b0, bl.b1, bl.b2, bl.b3, xl3);
        bh3 += dot4(bh.b0, bh.b1, bh.b2, bh.b3, xh3);
        sx3 += vec3<f32>(dot(v3, vec4<f32>(1.0)), dot(u3, vec4<f32>(1.0)), u3.w);
      }
    }
    *acc0 += a.low_scale * (lo0 + low_bits * bl0) + a.high_scale * (hi0 + 8.0 * sx0.z + high_bits * bh0) - a.low_min * sx0.x - a.high_min * sx0.y;
    if (TILE_M > 1u) {
      *acc1 += a.low_scale * (lo1 + low_bits * bl1) + a.high_scale * (hi1 + 8.0 * sx1.z + high_bits * bh1) - a.low_min * sx1.x - a.high_min * sx1.y;
      *acc2 += a.low_scale * (lo2 + low_bits * bl2) + a.high_scale * (hi2 + 8.0 * sx2.z + high_bits * bh2) - a.low_min * sx2.x - a.high_min * sx2.y;
      *acc3 += a.low_scale * (lo3 + low_bits * bl3) + a.high_scale * (hi3 + 8.0 * sx3.z + high_bits * bh3) - a.low_min * sx3.x - a.high_min * sx3.y;
    }
    low_mask = low_mask * 4u;
    low_bits = 0.25 * low_bits;
  }
}
