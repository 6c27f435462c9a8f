// matmul_q5: the tuned block body of the two 5-bit formats, Q5_0 and Q5_1 (the qh word read once a block and row,
// each qs word once for its low and high nibbles, the block's scale and offset applied once per block). The kernel is
// the block decoder shaders/decode_q5_0.wgsl or decode_q5_1.wgsl (layout, BLOCK_WORDS, code_affine; after
// shaders/decode_units.wgsl: row_joined, PLACES), this file, the K_SPLIT reduction and the shared skeleton
// shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read that header for the bindings, overrides and dispatch.
// llama.cpp falls back to Q5_0 (Q4_K_M) and Q5_1 (Q5_K_M) where a row is not whole 256-weight blocks (Qwen2.5-0.5B's
// 896 columns), so most of such a file.
// The codes stay in their places: each nibble and its fifth bit are joined in one word (row_joined: the fifth bits,
// which the upload moved into the byte of their nibble's word (word 1, 'qh by byte'), moved up by a multiply to just
// above the nibble), so a mask and an i32 -> f32 conversion give each byte's whole 5-bit code times its place, and
// the activations are scaled by the places once for the 4 rows. A high nibble's fifth bit goes to bit 8 of its
// byte (the next byte's low nibble, masked away), which byte 3 does not have: its fifth bit is taken alone (e, row_field). The
// top nibble (bit 31) comes less 8 and word 5's byte-3 fifth bit (bit 31) less 1 (their bits flipped); the 8, the 16
// and the block's offset come through Σx. No pack built-ins and no shifts but of uniform values: on CPU adapters
// (SwiftShader's Subzero JIT) a WGSL shift runs lane by lane, a mask, a multiply or a conversion is one SIMD op
// (bench/README.md, "Shifts").

// Σ placed·x' of one word's codes for one token (4 rows in the components): the low codes against v (its 4
// activations) by their places, the high ones against u, byte 3's high fifth bits e against u.w·e_place, and e_top·u.w.
fn q5_sum(lo: RowBits, hi: RowBits, e: vec4<f32>, e_place: f32, e_top: f32, v: vec4<f32>, u: vec4<f32>) -> vec4<f32> {
  return dot4(lo.b0, lo.b1, lo.b2, lo.b3, v * PLACES) + dot4(hi.b0, hi.b1, hi.b2, hi.b3, u * HIGH_PLACES)
    + e * (e_place * u.w) + e_top * u.w;
}

// Word i = 2 + j of four rows' blocks (bytes 4j .. 4j + 3): low nibbles are weights 4j.., fifth bits at bit j of each
// byte of qh (lo_bits, moved up to bit 4 by mul = 2^(4 - j)); high nibbles 16 + 4j.., fifth bits at bit 4 + j
// (hi_bits, to bit 8). Byte 3's high fifth bit, bit 28 + j (e_bit), comes alone against u.w·16·2^-(28 + j)
// (e_place); word 5's is bit 31: flipped (e_flip), less 1, the 16 back through u.w (e_top). Adds Σ placed·x' to
// *s_t, Σ x but the top nibble's to *t_t and the top nibble's x to *top_t.
fn q5_word(i: u32, lo_bits: u32, hi_bits: u32, mul: u32, e_bit: u32, e_flip: u32, e_place: f32, e_top: f32,
    o0: u32, o1: u32, o2: u32, o3: u32, q0: u32, q1: u32, q2: u32, q3: u32, xb: u32,
    x0: u32, x1: u32, x2: u32, x3: u32, s0: ptr<function, vec4<f32>>, s1: ptr<function, vec4<f32>>,
    s2: ptr<function, vec4<f32>>, s3: ptr<function, vec4<f32>>, t0: ptr<function, vec4<f32>>,
    t1: ptr<function, vec4<f32>>, t2: ptr<function, vec4<f32>>, t3: ptr<function, vec4<f32>>,
    top0: ptr<function, f32>, top1: ptr<function, f32>, top2: ptr<function, f32>, top3: ptr<function, f32>) {
  let a0 = w[o0 + i];
  let a1 = w[o1 + i];
  let a2 = w[o2 + i];
  let a3 = w[o3 + i];
  let lo = row_joined(a0, a1, a2, a3, 0x0F0F0F0Fu, 1u, q0, q1, q2, q3, lo_bits, mul, 0u, FIVE_BITS);
  let hi = row_joined(a0, a1, a2, a3, 0xF0F0F0F0u, 1u, q0, q1, q2, q3, hi_bits, mul, TOP, FIVE_BITS_HIGH);
  let e = row_field(q0, q1, q2, q3, e_bit, e_flip);
  let xi = xb + i - 2u;
  let v0 = x[x0 + xi];
  let u0 = x[x0 + xi + 4u];
  *s0 += q5_sum(lo, hi, e, e_place, e_top, v0, u0);
  *t0 += v0 + vec4<f32>(u0.xyz, 0.0);
  *top0 += u0.w;
  if (TILE_M > 1u) {
    let v1 = x[x1 + xi];
    let u1 = x[x1 + xi + 4u];
    *s1 += q5_sum(lo, hi, e, e_place, e_top, v1, u1);
    *t1 += v1 + vec4<f32>(u1.xyz, 0.0);
    *top1 += u1.w;
  }
  if (TILE_M > 2u) {
    let v2 = x[x2 + xi];
    let u2 = x[x2 + xi + 4u];
    *s2 += q5_sum(lo, hi, e, e_place, e_top, v2, u2);
    *t2 += v2 + vec4<f32>(u2.xyz, 0.0);
    *top2 += u2.w;
  }
  if (TILE_M > 3u) {
    let v3 = x[x3 + xi];
    let u3 = x[x3 + xi + 4u];
    *s3 += q5_sum(lo, hi, e, e_place, e_top, v3, u3);
    *t3 += v3 + vec4<f32>(u3.xyz, 0.0);
    *top3 += u3.w;
  }
}

// GATED: the up rows in a pass of their own (shaders/matmul.wgsl).
const UP_OWN_PASS: bool = true;

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  // weight = d·code + offset, code = nibble + 16·bit (the decoder's code_affine).
  let a0 = code_affine(o0);
  let a1 = code_affine(o1);
  let a2 = code_affine(o2);
  let a3 = code_affine(o3);
  let d = vec4<f32>(a0.x, a1.x, a2.x, a3.x);
  let offset = vec4<f32>(a0.y, a1.y, a2.y, a3.y);
  // The fifth bits of each row: weight 4g + i's at bit 8i + g.
  let q0 = w[o0 + 1u];
  let q1 = w[o1 + 1u];
  let q2 = w[o2 + 1u];
  let q3 = w[o3 + 1u];
  // s_t: Σ placed·x' over this block for token t (rows in the components), t_t + top_t: Σ x, top_t the top nibbles'
  // x (they come less 8).
  var s0 = vec4<f32>(0.0);
  var s1 = vec4<f32>(0.0);
  var s2 = vec4<f32>(0.0);
  var s3 = vec4<f32>(0.0);
  var t0 = vec4<f32>(0.0);
  var t1 = vec4<f32>(0.0);
  var t2 = vec4<f32>(0.0);
  var t3 = vec4<f32>(0.0);
  var top0 = 0.0;
  var top1 = 0.0;
  var top2 = 0.0;
  var top3 = 0.0;
  // Words 2 .. 5, each with its masks and places (q5_word), stepped by multiplies and selects: a shift or ldexp of
  // the loop index, though uniform, costs CPU adapters ~20% of this body. (Four calls with constant arguments measured
  // faster in the kernel bench, 3.75 against 4.34 ms, but slower in the page's gated and normed products.)
  var lo_bits = 0x01010101u;
  var hi_bits = 0x10101010u;
  var e_bit = 0x10000000u;
  var e_place = 1.0 / 16777216.0;
  var mul = 16u;
  for (var i = 2u; i < 6u; i++) {
    let last = i == 5u;
    q5_word(i, lo_bits, hi_bits, mul, e_bit, select(0u, TOP, last), e_place, select(0.0, 16.0, last), o0, o1, o2, o3, q0, q1, q2, q3, xb, x0, x1, x2, x3, &s0, &s1, &s2, &s3, &t0, &t1, &t2, &t3, &top0, &top1, &top2, &top3);
    lo_bits *= 2u;
    hi_bits *= 2u;
    e_bit *= 2u;
    e_place *= 0.5;
    mul = select(select(8u, 4u, i == 3u), 2u, i == 4u);
  }
  // Σ (d·code + offset)·x = d·(Σ placed·x' + 8·Σ top x) + offset·Σ x.
  *acc0 += d * (s0 + 8.0 * top0) + offset * ((t0.x + t0.y) + (t0.z + t0.w) + top0);
  if (TILE_M > 1u) {
    *acc1 += d * (s1 + 8.0 * top1) + offset * ((t1.x + t1.y) + (t1.z + t1.w) + top1);
    *acc2 += d * (s2 + 8.0 * top2) + offset * ((t2.x + t2.y) + (t2.z + t2.w) + top2);
    *acc3 += d * (s3 + 8.0 * top3) + offset * ((t3.x + t3.y) + (t3.z + t3.w) + top3);
  }
}
