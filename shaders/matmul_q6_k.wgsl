// matmul_q6_k: the Q6_K product's tuned block body (each ql word read once for two groups, each qh word for
// four). The kernel is the block decoder shaders/decode_q6_k.wgsl (layout, BLOCK_WORDS), this file, the K_SPLIT
// reduction and the shared skeleton shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read that header for the
// bindings, overrides and dispatch. The codes stay in their places: a group's 4-bit ql fields and 2-bit qh fields
// are each masked where they lie in their words and converted (row_fields; a field holding a word's top bit comes
// less its top value, its word's sign bit flipped first), and the activations are scaled by the fields' places once
// for the 4 rows, the qh fields' with the 16 of code = ql + 16·qh in it; the -32 and the top fields' corrections are
// a dot of the activations alone (group_sum). The scale bytes are decoded the same way, once per half block. No
// shifts or pack built-ins: on CPU adapters (SwiftShader's Subzero JIT) a WGSL shift runs lane by lane and a mask and
// an i32 -> f32 conversion are one SIMD op each (bench/README.md, "Shifts").

// Σ (q - 32)·v of the 4 rows (components) for one token's 4 activations v: the ql fields against v·pl, the qh
// fields against v·ph, and what the codes' offset and the flipped top fields take off: -32·Σv + top·v.w.
fn group_sum(c: RowCodes, v: vec4<f32>, pl: vec4<f32>, ph: vec4<f32>, top: f32) -> vec4<f32> {
  let offset = top * v.w - 32.0 * ((v.x + v.y) + (v.z + v.w));
  return dot4(c.l0, c.l1, c.l2, c.l3, v * pl) + dot4(c.h0, c.h1, c.h2, c.h3, v * ph) + offset;
}

// The four int8 of a scale word, low byte first (shaders/decode_units.wgsl placed_codes).
fn scale_bytes(word: u32) -> vec4<f32> {
  return placed_codes(word) * PLACES - vec4<f32>(128.0, 128.0, 128.0, 0.0);
}

// The body takes each group's fields by row_fields (shaders/decode_units.wgsl). Group g's ql and qh fields (g = 0: ql word a's low nibbles, qh bits 0-1; 1: word b's low nibbles, bits 2-3;
// 2: a's high nibbles, bits 4-5; 3: b's high nibbles, bits 6-7), the activation places and the top correction:
// a high nibble at bits 28-31 comes less 8 (+8·x3), qh bits 30-31 less 2 (+32·x3).

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
    // The scales of this half: bytes 8h .. 8h + 7, words 48 + 2h (a) and 49 + 2h (b), decoded once per row.
    let sa0 = scale_bytes(w[o0 + 48u + 2u * h]);
    let sa1 = scale_bytes(w[o1 + 48u + 2u * h]);
    let sa2 = scale_bytes(w[o2 + 48u + 2u * h]);
    let sa3 = scale_bytes(w[o3 + 48u + 2u * h]);
    let sb0 = scale_bytes(w[o0 + 49u + 2u * h]);
    let sb1 = scale_bytes(w[o1 + 49u + 2u * h]);
    let sb2 = scale_bytes(w[o2 + 49u + 2u * h]);
    let sb3 = scale_bytes(w[o3 + 49u + 2u * h]);
    for (var half16 = 0u; half16 < 2u; half16++) {
      // Elements 128h + 32g + 16*half16 + (0..15), g = 0..3, use scale 8h + 2g + half16 (per row): byte half16
      // (g = 0) or half16 + 2 (g = 1) of word a, the same of word b (g = 2, 3).
      let second = half16 == 1u;
      let s0 = d * select(vec4<f32>(sa0.x, sa1.x, sa2.x, sa3.x), vec4<f32>(sa0.y, sa1.y, sa2.y, sa3.y), second);
      let s1 = d * select(vec4<f32>(sa0.z, sa1.z, sa2.z, sa3.z), vec4<f32>(sa0.w, sa1.w, sa2.w, sa3.w), second);
      let s2 = d * select(vec4<f32>(sb0.x, sb1.x, sb2.x, sb3.x), vec4<f32>(sb0.y, sb1.y, sb2.y, sb3.y), second);
      let s3 = d * select(vec4<f32>(sb0.z, sb1.z, sb2.z, sb3.z), vec4<f32>(sb0.w, sb1.w, sb2.w, sb3.w), second);
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
        let g0 = row_fields(a0, a1, a2, a3, h0, h1, h2, h3, LOW_NIBBLES, BITS_01, 0u, 0u);
        sum0 += s0 * group_sum(g0, x[x0 + xi], PLACES, 16.0 * PLACES, 0.0);
        if (TILE_M > 1u) {
          sum1 += s0 * group_sum(g0, x[x1 + xi], PLACES, 16.0 * PLACES, 0.0);
        }
        if (TILE_M > 2u) {
          sum2 += s0 * group_sum(g0, x[x2 + xi], PLACES, 16.0 * PLACES, 0.0);
        }
        if (TILE_M > 3u) {
          sum3 += s0 * group_sum(g0, x[x3 + xi], PLACES, 16.0 * PLACES, 0.0);
        }
        let g1 = row_fields(b0, b1, b2, b3, h0, h1, h2, h3, LOW_NIBBLES, BITS_23, 0u, 0u);
        sum0 += s1 * group_sum(g1, x[x0 + xi + 8u], PLACES, 4.0 * PLACES, 0.0);
        if (TILE_M > 1u) {
          sum1 += s1 * group_sum(g1, x[x1 + xi + 8u], PLACES, 4.0 * PLACES, 0.0);
        }
        if (TILE_M > 2u) {
          sum2 += s1 * group_sum(g1, x[x2 + xi + 8u], PLACES, 4.0 * PLACES, 0.0);
        }
        if (TILE_M > 3u) {
          sum3 += s1 * group_sum(g1, x[x3 + xi + 8u], PLACES, 4.0 * PLACES, 0.0);
        }
        let g2 = row_fields(a0, a1, a2, a3, h0, h1, h2, h3, HIGH_NIBBLES, BITS_45, TOP, 0u);
        sum0 += s2 * group_sum(g2, x[x0 + xi + 16u], HIGH_PLACES, PLACES, 8.0);
        if (TILE_M > 1u) {
          sum1 += s2 * group_sum(g2, x[x1 + xi + 16u], HIGH_PLACES, PLACES, 8.0);
        }
        if (TILE_M > 2u) {
          sum2 += s2 * group_sum(g2, x[x2 + xi + 16u], HIGH_PLACES, PLACES, 8.0);
        }
        if (TILE_M > 3u) {
          sum3 += s2 * group_sum(g2, x[x3 + xi + 16u], HIGH_PLACES, PLACES, 8.0);
        }
        let g3 = row_fields(b0, b1, b2, b3, h0, h1, h2, h3, HIGH_NIBBLES, BITS_67, TOP, TOP);
        sum0 += s3 * group_sum(g3, x[x0 + xi + 24u], HIGH_PLACES, 0.25 * PLACES, 40.0);
        if (TILE_M > 1u) {
          sum1 += s3 * group_sum(g3, x[x1 + xi + 24u], HIGH_PLACES, 0.25 * PLACES, 40.0);
        }
        if (TILE_M > 2u) {
          sum2 += s3 * group_sum(g3, x[x2 + xi + 24u], HIGH_PLACES, 0.25 * PLACES, 40.0);
        }
        if (TILE_M > 3u) {
          sum3 += s3 * group_sum(g3, x[x3 + xi + 24u], HIGH_PLACES, 0.25 * PLACES, 40.0);
        }
      }
    }
  }
  *acc0 = sum0;
  *acc1 = sum1;
  *acc2 = sum2;
  *acc3 = sum3;
}
