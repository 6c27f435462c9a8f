// matmul_q5: the tuned block body of the two 5-bit formats, Q5_0 and Q5_1 (the qh word read once a block and row,
// each qs word once for its low and high nibbles, the block's scale and offset applied once per block). The kernel is
// the block decoder shaders/decode_q5_0.wgsl or decode_q5_1.wgsl (layout, BLOCK_WORDS, code_affine; after
// shaders/decode_units.wgsl: row_nibbles, PLACES), this file, the K_SPLIT reduction and the shared skeleton
// shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read that header for the bindings, overrides and dispatch.
// llama.cpp falls back to Q5_0 (Q4_K_M) and Q5_1 (Q5_K_M) where a row is not whole 256-weight blocks (Qwen2.5-0.5B's
// 896 columns), so most of such a file.
// The codes stay in their places: the nibbles as row_nibbles gives them (the top one less 8), and the fifth bits
// each masked where it lies in qh (bit 4j + i for weight 4j + i of the low half, 16 + 4j + i for the high half, read
// from qh >> 16: one shift a block and row, so no field sits at the sign bit); the activations are scaled by the
// places once for the 4 rows, the fifth bits' with the 16 of code = nibble + 16·bit in them; the top nibble's 8 and
// the block's offset come through Σx. No pack built-ins and no shifts in the loop: on CPU adapters (SwiftShader's
// Subzero JIT) a WGSL shift runs lane by lane (bench/README.md, "Shifts").

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
  // The fifth bits of each row: the low half's (weights 0..15) in qh's bits 0..15, the high half's moved there.
  let qa0 = w[o0 + 1u];
  let qa1 = w[o1 + 1u];
  let qa2 = w[o2 + 1u];
  let qa3 = w[o3 + 1u];
  let qb0 = qa0 >> 16u;
  let qb1 = qa1 >> 16u;
  let qb2 = qa2 >> 16u;
  let qb3 = qa3 >> 16u;
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
  // Word j's fifth bits: mask (1, 2, 4, 8)·16^j, activation places 16·2^-(4j + i).
  var bits = vec4<u32>(1u, 2u, 4u, 8u);
  var bit_places = vec4<f32>(16.0, 8.0, 4.0, 2.0);
  for (var i = 2u; i < 6u; i++) {
    // Word i holds bytes 4(i-2) .. 4(i-2)+3: low nibbles are weights 4(i-2).., high nibbles 16 + 4(i-2)..
    let n = row_nibbles(o0 + i, o1 + i, o2 + i, o3 + i);
    let lo = row_bits(qa0, qa1, qa2, qa3, bits);
    let hi = row_bits(qb0, qb1, qb2, qb3, bits);
    let xi = xb + i - 2u;
    let v0 = x[x0 + xi];
    let u0 = x[x0 + xi + 4u];
    s0 += dot4(n.l0, n.l1, n.l2, n.l3, v0 * PLACES) + dot4(lo.b0, lo.b1, lo.b2, lo.b3, v0 * bit_places)
      + dot4(n.h0, n.h1, n.h2, n.h3, u0 * HIGH_PLACES) + dot4(hi.b0, hi.b1, hi.b2, hi.b3, u0 * bit_places);
    t0 += v0 + vec4<f32>(u0.xyz, 0.0);
    top0 += u0.w;
    if (TILE_M > 1u) {
      let v1 = x[x1 + xi];
      let u1 = x[x1 + xi + 4u];
      s1 += dot4(n.l0, n.l1, n.l2, n.l3, v1 * PLACES) + dot4(lo.b0, lo.b1, lo.b2, lo.b3, v1 * bit_places)
        + dot4(n.h0, n.h1, n.h2, n.h3, u1 * HIGH_PLACES) + dot4(hi.b0, hi.b1, hi.b2, hi.b3, u1 * bit_places);
      t1 += v1 + vec4<f32>(u1.xyz, 0.0);
      top1 += u1.w;
    }
    if (TILE_M > 2u) {
      let v2 = x[x2 + xi];
      let u2 = x[x2 + xi + 4u];
      s2 += dot4(n.l0, n.l1, n.l2, n.l3, v2 * PLACES) + dot4(lo.b0, lo.b1, lo.b2, lo.b3, v2 * bit_places)
        + dot4(n.h0, n.h1, n.h2, n.h3, u2 * HIGH_PLACES) + dot4(hi.b0, hi.b1, hi.b2, hi.b3, u2 * bit_places);
      t2 += v2 + vec4<f32>(u2.xyz, 0.0);
      top2 += u2.w;
    }
    if (TILE_M > 3u) {
      let v3 = x[x3 + xi];
      let u3 = x[x3 + xi + 4u];
      s3 += dot4(n.l0, n.l1, n.l2, n.l3, v3 * PLACES) + dot4(lo.b0, lo.b1, lo.b2, lo.b3, v3 * bit_places)
        + dot4(n.h0, n.h1, n.h2, n.h3, u3 * HIGH_PLACES) + dot4(hi.b0, hi.b1, hi.b2, hi.b3, u3 * bit_places);
      t3 += v3 + vec4<f32>(u3.xyz, 0.0);
      top3 += u3.w;
    }
    bits *= 16u;
    bit_places *= 1.0 / 16.0;
  }
  // Σ (d·code + offset)·x = d·(Σ placed·x' + 8·Σ top x) + offset·Σ x.
  *acc0 += d * (s0 + 8.0 * top0) + offset * ((t0.x + t0.y) + (t0.z + t0.w) + top0);
  if (TILE_M > 1u) {
    *acc1 += d * (s1 + 8.0 * top1) + offset * ((t1.x + t1.y) + (t1.z + t1.w) + top1);
    *acc2 += d * (s2 + 8.0 * top2) + offset * ((t2.x + t2.y) + (t2.z + t2.w) + top2);
    *acc3 += d * (s3 + 8.0 * top3) + offset * ((t3.x + t3.y) + (t3.z + t3.w) + top3);
  }
}
