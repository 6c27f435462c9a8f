// matmul_q6_k: the Q6_K product's tuned block body (each ql word read once for two groups, each qh word for
// four). The kernel is the block decoder shaders/decode_q6_k.wgsl (layout, BLOCK_WORDS), this file, the K_SPLIT
// reduction and the shared skeleton shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read that header for the
// bindings, overrides and dispatch. The codes stay in their places: a group's 4-bit ql fields and its 2-bit qh
// fields are joined in one word by a multiply (each masked first; the qh field just above the nibble), so a mask and
// an i32 -> f32 conversion give each byte's whole 6-bit code times its place, and the activations are scaled by the
// places once for the 4 rows; a field holding a word's top bit comes less its top value (its word's sign bit
// flipped first), and the -32 and the top fields' corrections are a dot of the activations alone. The scale bytes
// are decoded the same way, once per half block. No shifts or pack built-ins: on CPU adapters (SwiftShader's Subzero
// JIT) a WGSL shift runs lane by lane and a mask, a multiply and an i32 -> f32 conversion are one SIMD op each
// (bench/README.md, "Shifts").

// Groups 0 and 1: a ql word's low nibbles and their qh fields joined in one word by a multiply (row_joined), the qh
// field at bits 4-5 of each byte: one 6-bit field a byte, the code in its place (SIX_BITS).
const SIX_BITS: vec4<u32> = vec4<u32>(0x3Fu, 0x3F00u, 0x3F0000u, 0x3F000000u);

// Σ (q - 32)·v of the 4 rows for one token's 4 activations v, the codes whole in their places (groups 0 and 1).
fn joined_sum(c: RowBits, v: vec4<f32>) -> vec4<f32> {
  return dot4(c.b0, c.b1, c.b2, c.b3, v * PLACES) - 32.0 * ((v.x + v.y) + (v.z + v.w));
}

// Groups 2 and 3: a ql word's high nibbles (bits 4-7) and their qh fields joined the same way, the qh field moved
// up to bits 8-9 (the next byte's low nibble, masked away), so bytes 0-2 hold one 6-bit field each at bits 4-9
// (SIX_BITS_HIGH); byte 3's qh field would land past bit 31, so it is left out of the join (the qh mask has no byte
// 3) and taken alone (row_field). Byte 3's nibble holds bit 31: flipped, it comes less 8.

const SIX_BITS_HIGH: vec4<u32> = vec4<u32>(0x3F0u, 0x3F000u, 0x3F00000u, 0xF0000000u);


// Σ (q - 32)·v of the 4 rows for one token's 4 activations v (groups 2 and 3): the joined fields against
// v·HIGH_PLACES, byte 3's qh fields e against v.w·`place` (the 16 of code = ql + 16·qh in it), and what the offset
// and the flipped top fields take off: -32·Σv + top·v.w.
fn joined_high_sum(c: RowBits, e: vec4<f32>, v: vec4<f32>, place: f32, top: f32) -> vec4<f32> {
  return dot4(c.b0, c.b1, c.b2, c.b3, v * HIGH_PLACES) + e * (place * v.w) + (top * v.w - 32.0 * ((v.x + v.y) + (v.z + v.w)));
}

// The four int8 of a scale word, low byte first (shaders/decode_units.wgsl placed_codes).
fn scale_bytes(word: u32) -> vec4<f32> {
  return placed_codes(word) * PLACES - vec4<f32>(128.0, 128.0, 128.0, 0.0);
}

// Group g's ql and qh fields (g = 0: ql word a's low nibbles, qh bits 0-1; 1: word b's low nibbles, bits 2-3;
// 2: a's high nibbles, bits 4-5; 3: b's high nibbles, bits 6-7), and the top corrections: a high nibble at bits
// 28-31 comes less 8 (+8·x3), qh bits 30-31 less 2 (+32·x3).

// GATED: the up rows in a pass of their own (shaders/matmul.wgsl).
const UP_OWN_PASS: bool = true;

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
        // Token 0's x for the four fields (xi, + 8, + 16, + 24): one load in the quad where SHARED_X.
        let q = x_group(x0 + xi, 8u, 16u);
        let g0 = row_joined(a0, a1, a2, a3, 0x0F0F0F0Fu, 1u, h0, h1, h2, h3, 0x03030303u, 16u, 0u, SIX_BITS);
        sum0 += s0 * joined_sum(g0, x_q0(q));
        if (TILE_M > 1u) {
          sum1 += s0 * joined_sum(g0, x[x1 + xi]);
        }
        if (TILE_M > 2u) {
          sum2 += s0 * joined_sum(g0, x[x2 + xi]);
        }
        if (TILE_M > 3u) {
          sum3 += s0 * joined_sum(g0, x[x3 + xi]);
        }
        let g1 = row_joined(b0, b1, b2, b3, 0x0F0F0F0Fu, 1u, h0, h1, h2, h3, 0x0C0C0C0Cu, 4u, 0u, SIX_BITS);
        sum0 += s1 * joined_sum(g1, x_q1(q));
        if (TILE_M > 1u) {
          sum1 += s1 * joined_sum(g1, x[x1 + xi + 8u]);
        }
        if (TILE_M > 2u) {
          sum2 += s1 * joined_sum(g1, x[x2 + xi + 8u]);
        }
        if (TILE_M > 3u) {
          sum3 += s1 * joined_sum(g1, x[x3 + xi + 8u]);
        }
        let g2 = row_joined(a0, a1, a2, a3, 0xF0F0F0F0u, 1u, h0, h1, h2, h3, 0x00303030u, 16u, TOP, SIX_BITS_HIGH);
        let e2 = row_field(h0, h1, h2, h3, 0x30000000u, 0u);
        sum0 += s2 * joined_high_sum(g2, e2, x_q2(q), 1.0 / 16777216.0, 8.0);
        if (TILE_M > 1u) {
          sum1 += s2 * joined_high_sum(g2, e2, x[x1 + xi + 16u], 1.0 / 16777216.0, 8.0);
        }
        if (TILE_M > 2u) {
          sum2 += s2 * joined_high_sum(g2, e2, x[x2 + xi + 16u], 1.0 / 16777216.0, 8.0);
        }
        if (TILE_M > 3u) {
          sum3 += s2 * joined_high_sum(g2, e2, x[x3 + xi + 16u], 1.0 / 16777216.0, 8.0);
        }
        let g3 = row_joined(b0, b1, b2, b3, 0xF0F0F0F0u, 1u, h0, h1, h2, h3, 0x00C0C0C0u, 4u, TOP, SIX_BITS_HIGH);
        let e3 = row_field(h0, h1, h2, h3, 0xC0000000u, TOP);
        sum0 += s3 * joined_high_sum(g3, e3, x_q3(q), 1.0 / 67108864.0, 40.0);
        if (TILE_M > 1u) {
          sum1 += s3 * joined_high_sum(g3, e3, x[x1 + xi + 24u], 1.0 / 67108864.0, 40.0);
        }
        if (TILE_M > 2u) {
          sum2 += s3 * joined_high_sum(g3, e3, x[x2 + xi + 24u], 1.0 / 67108864.0, 40.0);
        }
        if (TILE_M > 3u) {
          sum3 += s3 * joined_high_sum(g3, e3, x[x3 + xi + 24u], 1.0 / 67108864.0, 40.0);
        }
      }
    }
  }
  *acc0 = sum0;
  *acc1 = sum1;
  *acc2 = sum2;
  *acc3 = sum3;
}
