// matmul_q6_k: the Q6_K product's tuned block body (each ql word read once for two groups, each qh word for
// four). The kernel is the block decoder shaders/decode_q6_k.wgsl (layout, BLOCK_WORDS, unit_q6), this
// file, the K_SPLIT reduction and the shared skeleton shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read
// that header for the bindings, overrides and dispatch. The 6-bit codes are assembled in the bytes of a word and
// widened by one unpack4x8unorm ((q + 32) / 255, unit_q6); each group's sum is then 255·Σ - 32·Σx (from_units): on
// CPU adapters each shader op costs several SIMD instructions, and this took the product ~2.3x faster than vector
// shifts (bench/README.md, "Codes through unpack4x8unorm").

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  // Running sums in locals (the same additions, in the same order, as into *acc_t), written back once per block.
  var sum0 = *acc0;
  var sum1 = *acc1;
  var sum2 = *acc2;
  var sum3 = *acc3;
  let d = vec4<f32>(unpack2x16float(w[o0 + 52u]).x, unpack2x16float(w[o1 + 52u]).x, unpack2x16float(w[o2 + 52u]).x, unpack2x16float(w[o3 + 52u]).x);
  for (var h = 0u; h < 2u; h++) {
    // The scales of this half: bytes 8h .. 8h + 7, words 48 + 2h (a) and 49 + 2h (b), read once per row.
    let sa0 = w[o0 + 48u + 2u * h];
    let sa1 = w[o1 + 48u + 2u * h];
    let sa2 = w[o2 + 48u + 2u * h];
    let sa3 = w[o3 + 48u + 2u * h];
    let sb0 = w[o0 + 49u + 2u * h];
    let sb1 = w[o1 + 49u + 2u * h];
    let sb2 = w[o2 + 49u + 2u * h];
    let sb3 = w[o3 + 49u + 2u * h];
    for (var half16 = 0u; half16 < 2u; half16++) {
      // Elements 128h + 32g + 16*half16 + (0..15), g = 0..3, use scale 8h + 2g + half16 (per row): byte half16
      // (g = 0) or half16 + 2 (g = 1) of word a, the same of word b (g = 2, 3).
      let s0 = d * vec4<f32>(signed_byte(sa0, half16), signed_byte(sa1, half16), signed_byte(sa2, half16), signed_byte(sa3, half16));
      let s1 = d * vec4<f32>(signed_byte(sa0, half16 + 2u), signed_byte(sa1, half16 + 2u), signed_byte(sa2, half16 + 2u), signed_byte(sa3, half16 + 2u));
      let s2 = d * vec4<f32>(signed_byte(sb0, half16), signed_byte(sb1, half16), signed_byte(sb2, half16), signed_byte(sb3, half16));
      let s3 = d * vec4<f32>(signed_byte(sb0, half16 + 2u), signed_byte(sb1, half16 + 2u), signed_byte(sb2, half16 + 2u), signed_byte(sb3, half16 + 2u));
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
        let g0_0 = unit_q6(a0, h0, 0u, 0u);
        let g0_1 = unit_q6(a1, h1, 0u, 0u);
        let g0_2 = unit_q6(a2, h2, 0u, 0u);
        let g0_3 = unit_q6(a3, h3, 0u, 0u);
        {
          let v = x[x0 + xi];
          sum0 += s0 * from_units(dot4(g0_0, g0_1, g0_2, g0_3, v), v, 32.0);
        }
        if (TILE_M > 1u) {
          {
          let v = x[x1 + xi];
          sum1 += s0 * from_units(dot4(g0_0, g0_1, g0_2, g0_3, v), v, 32.0);
        }
        }
        if (TILE_M > 2u) {
          {
          let v = x[x2 + xi];
          sum2 += s0 * from_units(dot4(g0_0, g0_1, g0_2, g0_3, v), v, 32.0);
        }
        }
        if (TILE_M > 3u) {
          {
          let v = x[x3 + xi];
          sum3 += s0 * from_units(dot4(g0_0, g0_1, g0_2, g0_3, v), v, 32.0);
        }
        }
        let g1_0 = unit_q6(b0, h0, 0u, 2u);
        let g1_1 = unit_q6(b1, h1, 0u, 2u);
        let g1_2 = unit_q6(b2, h2, 0u, 2u);
        let g1_3 = unit_q6(b3, h3, 0u, 2u);
        {
          let v = x[x0 + xi + 8u];
          sum0 += s1 * from_units(dot4(g1_0, g1_1, g1_2, g1_3, v), v, 32.0);
        }
        if (TILE_M > 1u) {
          {
          let v = x[x1 + xi + 8u];
          sum1 += s1 * from_units(dot4(g1_0, g1_1, g1_2, g1_3, v), v, 32.0);
        }
        }
        if (TILE_M > 2u) {
          {
          let v = x[x2 + xi + 8u];
          sum2 += s1 * from_units(dot4(g1_0, g1_1, g1_2, g1_3, v), v, 32.0);
        }
        }
        if (TILE_M > 3u) {
          {
          let v = x[x3 + xi + 8u];
          sum3 += s1 * from_units(dot4(g1_0, g1_1, g1_2, g1_3, v), v, 32.0);
        }
        }
        let g2_0 = unit_q6(a0, h0, 4u, 4u);
        let g2_1 = unit_q6(a1, h1, 4u, 4u);
        let g2_2 = unit_q6(a2, h2, 4u, 4u);
        let g2_3 = unit_q6(a3, h3, 4u, 4u);
        {
          let v = x[x0 + xi + 16u];
          sum0 += s2 * from_units(dot4(g2_0, g2_1, g2_2, g2_3, v), v, 32.0);
        }
        if (TILE_M > 1u) {
          {
          let v = x[x1 + xi + 16u];
          sum1 += s2 * from_units(dot4(g2_0, g2_1, g2_2, g2_3, v), v, 32.0);
        }
        }
        if (TILE_M > 2u) {
          {
          let v = x[x2 + xi + 16u];
          sum2 += s2 * from_units(dot4(g2_0, g2_1, g2_2, g2_3, v), v, 32.0);
        }
        }
        if (TILE_M > 3u) {
          {
          let v = x[x3 + xi + 16u];
          sum3 += s2 * from_units(dot4(g2_0, g2_1, g2_2, g2_3, v), v, 32.0);
        }
        }
        let g3_0 = unit_q6(b0, h0, 4u, 6u);
        let g3_1 = unit_q6(b1, h1, 4u, 6u);
        let g3_2 = unit_q6(b2, h2, 4u, 6u);
        let g3_3 = unit_q6(b3, h3, 4u, 6u);
        {
          let v = x[x0 + xi + 24u];
          sum0 += s3 * from_units(dot4(g3_0, g3_1, g3_2, g3_3, v), v, 32.0);
        }
        if (TILE_M > 1u) {
          {
          let v = x[x1 + xi + 24u];
          sum1 += s3 * from_units(dot4(g3_0, g3_1, g3_2, g3_3, v), v, 32.0);
        }
        }
        if (TILE_M > 2u) {
          {
          let v = x[x2 + xi + 24u];
          sum2 += s3 * from_units(dot4(g3_0, g3_1, g3_2, g3_3, v), v, 32.0);
        }
        }
        if (TILE_M > 3u) {
          {
          let v = x[x3 + xi + 24u];
          sum3 += s3 * from_units(dot4(g3_0, g3_1, g3_2, g3_3, v), v, 32.0);
        }
        }
      }
    }
  }
  *acc0 = sum0;
  *acc1 = sum1;
  *acc2 = sum2;
  *acc3 = sum3;
}

// Byte i of a word as a signed integer.
fn signed_byte(word: u32, i: u32) -> f32 {
  return f32(bitcast<i32>(word << (24u - 8u * i)) >> 24u);
}
