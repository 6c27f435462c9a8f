// matmul_q2_q3_k: the tuned block body of the two 2-bit K-quants, Q2_K and Q3_K (each qs word read once for its four
// 2-bit planes, Q3_K's hmask word once for their high bits; the sub-blocks' scales and offsets decoded once per
// half block for the 4 rows). The kernel is the block decoder shaders/decode_q2_k.wgsl or decode_q3_k.wgsl (layout,
// BLOCK_WORDS, and what this body reads: K2_QS, K2_HIGH_BITS, K2_HMASK, k2_d, k2_scales, k2_offsets; after
// shaders/decode_units.wgsl: row_fields, BITS_01 .. BITS_67, PLACES), this file, the K_SPLIT reduction and the shared
// skeleton shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read that header for the bindings, overrides and
// dispatch.
// Both formats put weight e = 128n + 32j + 16h + l (sub-block 8n + 2j + h) at bits 2j of qs byte 32n + 16h + l, Q3_K
// its high bit at bit 4n + j of hmask byte 16h + l: so one qs word (and one hmask word) of a row holds four weights
// of each of the four planes j, whose activations are 8 vec4s apart. Every field stays in its place (bench/README.md,
// "Shifts": on CPU adapters a WGSL shift runs lane by lane): plane j's codes come times 4^j·PLACES' inverse, which
// the sub-block's scale takes out (4^-j); Q3_K's high bits are joined to the codes of planes 0-2 (k2_plane), and
// plane 3's places are taken out by their activations' factor 2^(5 - 4n) (the 4 of code = low + 4·high); the fields holding bit 31 (plane 3's byte 3, and Q3_K's high bit 7)
// come less their top value (their bit flipped first) and get it back through x.w (k2_top_sum's `top`).

// Planes 0 .. 2 of Q3_K: the low field and its high bit joined in one word by multiplies (each masked first), the
// high bit 2 above the low field's bits, so that one field a byte is the code low + 4·high in its place: in the
// lower half (n = 0) the high bit (bit j) moves up to bit 2j + 2, in the upper half (bit 4 + j) the low field moves up
// to bit j + 2 (row_joined). Q2_K's fields are taken alone (row_bits).
fn k2_plane(a0: u32, a1: u32, a2: u32, a3: u32, h0: u32, h1: u32, h2: u32, h3: u32, qmask: u32, qmul: u32, hmask: u32,
    hmul: u32, fields: vec4<u32>) -> RowBits {
  if (K2_HIGH_BITS) {
    return row_joined(a0, a1, a2, a3, qmask, qmul, h0, h1, h2, h3, hmask, hmul, 0u, fields);
  }
  return row_bits(a0, a1, a2, a3, fields);
}

// scale·Σ code·v + offset·Σ v of one plane's group for the 4 rows (components) and one token's 4 activations v, the
// codes in their places (against v·PLACES; the plane's place is in `scale`).
fn k2_sum(c: RowBits, v: vec4<f32>, scale: vec4<f32>, offset: vec4<f32>) -> vec4<f32> {
  return scale * dot4(c.b0, c.b1, c.b2, c.b3, v * PLACES) + offset * ((v.x + v.y) + (v.z + v.w));
}

// The same for plane 3, whose field (bits 6-7, the word's bit 31 in byte 3) leaves no room for Q3_K's high bit: the
// 2-bit fields c.l against v·PLACES, Q3_K's high bits c.h against v·ph, and `top`·v.w what the flipped top fields
// lack.
fn k2_top_sum(c: RowCodes, v: vec4<f32>, ph: vec4<f32>, top: f32, scale: vec4<f32>, offset: vec4<f32>) -> vec4<f32> {
  var s = dot4(c.l0, c.l1, c.l2, c.l3, v * PLACES) + top * v.w;
  if (K2_HIGH_BITS) {
    s += dot4(c.h0, c.h1, c.h2, c.h3, v * ph);
  }
  return scale * s + offset * ((v.x + v.y) + (v.z + v.w));
}

// Bit 0 of each byte of a word; the 3-bit fields at bits i .. i + 2 of each byte (FIELDS3_i, as vec4 masks).
const BIT0: vec4<u32> = vec4<u32>(0x1u, 0x100u, 0x10000u, 0x1000000u);
const FIELDS3_0: vec4<u32> = vec4<u32>(0x7u, 0x700u, 0x70000u, 0x7000000u);
const FIELDS3_2: vec4<u32> = vec4<u32>(0x1Cu, 0x1C00u, 0x1C0000u, 0x1C000000u);
const FIELDS3_3: vec4<u32> = vec4<u32>(0x38u, 0x3800u, 0x380000u, 0x38000000u);
const FIELDS3_4: vec4<u32> = vec4<u32>(0x70u, 0x7000u, 0x700000u, 0x70000000u);

// Sub-block s = 4m + i's value of four rows, rows in the components: component i of each row's vector.
fn k2_rows(a0: vec4<f32>, a1: vec4<f32>, a2: vec4<f32>, a3: vec4<f32>, odd: bool, upper: bool) -> vec4<f32> {
  let lo = select(vec4<f32>(a0.x, a1.x, a2.x, a3.x), vec4<f32>(a0.y, a1.y, a2.y, a3.y), odd);
  let hi = select(vec4<f32>(a0.z, a1.z, a2.z, a3.z), vec4<f32>(a0.w, a1.w, a2.w, a3.w), odd);
  return select(lo, hi, upper);
}

// GATED: the up rows in a pass of their own (shaders/matmul.wgsl).
const UP_OWN_PASS: bool = true;

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  // Running sums in locals, written back once per block.
  var sum0 = *acc0;
  var sum1 = *acc1;
  var sum2 = *acc2;
  var sum3 = *acc3;
  let dm0 = k2_d(o0);
  let dm1 = k2_d(o1);
  let dm2 = k2_d(o2);
  let dm3 = k2_d(o3);
  for (var n = 0u; n < 2u; n++) {
    // Sub-blocks 8n .. 8n + 3 (a) and 8n + 4 .. 8n + 7 (b): scale and offset per row.
    let sa0 = k2_scales(o0, 2u * n, dm0);
    let sa1 = k2_scales(o1, 2u * n, dm1);
    let sa2 = k2_scales(o2, 2u * n, dm2);
    let sa3 = k2_scales(o3, 2u * n, dm3);
    let sb0 = k2_scales(o0, 2u * n + 1u, dm0);
    let sb1 = k2_scales(o1, 2u * n + 1u, dm1);
    let sb2 = k2_scales(o2, 2u * n + 1u, dm2);
    let sb3 = k2_scales(o3, 2u * n + 1u, dm3);
    let fa0 = k2_offsets(o0, 2u * n, dm0, sa0);
    let fa1 = k2_offsets(o1, 2u * n, dm1, sa1);
    let fa2 = k2_offsets(o2, 2u * n, dm2, sa2);
    let fa3 = k2_offsets(o3, 2u * n, dm3, sa3);
    let fb0 = k2_offsets(o0, 2u * n + 1u, dm0, sb0);
    let fb1 = k2_offsets(o1, 2u * n + 1u, dm1, sb1);
    let fb2 = k2_offsets(o2, 2u * n + 1u, dm2, sb2);
    let fb3 = k2_offsets(o3, 2u * n + 1u, dm3, sb3);
    // Planes 0 .. 2: the fields (FIELDS3 where Q3_K's high bits are joined in) and their places (p_j: the scales
    // take out 2^-place), the joins' multipliers (k2_plane) and the high bits' masks (bit 4n + j of each hmask byte).
    let upper = n == 1u;
    let joined = K2_HIGH_BITS && upper;
    let field0 = select(select(BITS_01, FIELDS3_0, K2_HIGH_BITS), FIELDS3_2, joined);
    let field1 = select(select(BITS_23, FIELDS3_2, K2_HIGH_BITS), FIELDS3_3, joined);
    let field2 = select(BITS_45, FIELDS3_4, K2_HIGH_BITS);
    let p0 = select(1.0, 0.25, joined);
    let p1 = select(0.25, 0.125, joined);
    let qmul0 = select(1u, 4u, upper);
    let qmul1 = select(1u, 2u, upper);
    let hmul0 = select(4u, 1u, upper);
    let hmul1 = select(8u, 1u, upper);
    let hmul2 = select(16u, 1u, upper);
    let hm = select(0x01010101u, 0x10101010u, upper);
    // Plane 3's high bits (Q3_K) against v·2^(5 - 4n)·PLACES: bit 4n + 3 of each hmask byte; bit 7 of byte 3
    // (n = 1) is the word's top bit: flipped, it comes less 2^7 (256 after its factor 2). Plane 3's 2-bit field of
    // byte 3 comes less 2·4^3 (its bit 31 flipped).
    let hm3 = select(BIT0 * 8u, BIT0 * 128u, upper);
    let ph3 = select(32.0 * PLACES, 2.0 * PLACES, upper);
    let hflip = select(0u, TOP, upper);
    let top3 = select(128.0, 384.0, joined);
    for (var h = 0u; h < 2u; h++) {
      // Plane j's sub-block 8n + 2j + h: component h (j = 0) or 2 + h (j = 1) of a, the same of b (j = 2, 3);
      // the scales times 2^-place (plane 3: 4^-3).
      let odd = h == 1u;
      let s0 = p0 * k2_rows(sa0, sa1, sa2, sa3, odd, false);
      let s1 = p1 * k2_rows(sa0, sa1, sa2, sa3, odd, true);
      let s2 = 0.0625 * k2_rows(sb0, sb1, sb2, sb3, odd, false);
      let s3 = 0.015625 * k2_rows(sb0, sb1, sb2, sb3, odd, true);
      let f0 = k2_rows(fa0, fa1, fa2, fa3, odd, false);
      let f1 = k2_rows(fa0, fa1, fa2, fa3, odd, true);
      let f2 = k2_rows(fb0, fb1, fb2, fb3, odd, false);
      let f3 = k2_rows(fb0, fb1, fb2, fb3, odd, true);
      for (var q = 0u; q < 4u; q++) {
        // qs word 8n + 4h + q and hmask word 4h + q of each row: weights 4q .. 4q + 3 of the four planes.
        let iq = K2_QS + 8u * n + 4u * h + q;
        let a0 = w[o0 + iq];
        let a1 = w[o1 + iq];
        let a2 = w[o2 + iq];
        let a3 = w[o3 + iq];
        var h0 = 0u;
        var h1 = 0u;
        var h2 = 0u;
        var h3 = 0u;
        if (K2_HIGH_BITS) {
          let ih = K2_HMASK + 4u * h + q;
          h0 = w[o0 + ih];
          h1 = w[o1 + ih];
          h2 = w[o2 + ih];
          h3 = w[o3 + ih];
        }
        let xi = xb + 32u * n + 4u * h + q;
        // Token 0's x for the four planes (xi, + 8, + 16, + 24): one load in the quad where SHARED_X.
        let xq = x_group(x0 + xi, 8u, 16u);
        let g0 = k2_plane(a0, a1, a2, a3, h0, h1, h2, h3, 0x03030303u, qmul0, hm, hmul0, field0);
        sum0 += k2_sum(g0, x_q0(xq), s0, f0);
        if (TILE_M > 1u) {
          sum1 += k2_sum(g0, x[x1 + xi], s0, f0);
        }
        if (TILE_M > 2u) {
          sum2 += k2_sum(g0, x[x2 + xi], s0, f0);
        }
        if (TILE_M > 3u) {
          sum3 += k2_sum(g0, x[x3 + xi], s0, f0);
        }
        let g1 = k2_plane(a0, a1, a2, a3, h0, h1, h2, h3, 0x0C0C0C0Cu, qmul1, hm * 2u, hmul1, field1);
        sum0 += k2_sum(g1, x_q1(xq), s1, f1);
        if (TILE_M > 1u) {
          sum1 += k2_sum(g1, x[x1 + xi + 8u], s1, f1);
        }
        if (TILE_M > 2u) {
          sum2 += k2_sum(g1, x[x2 + xi + 8u], s1, f1);
        }
        if (TILE_M > 3u) {
          sum3 += k2_sum(g1, x[x3 + xi + 8u], s1, f1);
        }
        let g2 = k2_plane(a0, a1, a2, a3, h0, h1, h2, h3, 0x30303030u, 1u, hm * 4u, hmul2, field2);
        sum0 += k2_sum(g2, x_q2(xq), s2, f2);
        if (TILE_M > 1u) {
          sum1 += k2_sum(g2, x[x1 + xi + 16u], s2, f2);
        }
        if (TILE_M > 2u) {
          sum2 += k2_sum(g2, x[x2 + xi + 16u], s2, f2);
        }
        if (TILE_M > 3u) {
          sum3 += k2_sum(g2, x[x3 + xi + 16u], s2, f2);
        }
        let g3 = row_fields(a0, a1, a2, a3, h0, h1, h2, h3, BITS_67, hm3, TOP, hflip);
        sum0 += k2_top_sum(g3, x_q3(xq), ph3, top3, s3, f3);
        if (TILE_M > 1u) {
          sum1 += k2_top_sum(g3, x[x1 + xi + 24u], ph3, top3, s3, f3);
        }
        if (TILE_M > 2u) {
          sum2 += k2_top_sum(g3, x[x2 + xi + 24u], ph3, top3, s3, f3);
        }
        if (TILE_M > 3u) {
          sum3 += k2_top_sum(g3, x[x3 + xi + 24u], ph3, top3, s3, f3);
        }
      }
    }
  }
  *acc0 = sum0;
  *acc1 = sum1;
  *acc2 = sum2;
  *acc3 = sum3;
}
