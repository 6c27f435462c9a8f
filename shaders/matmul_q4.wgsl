// matmul_q4: the tuned block body of the two 4-bit affine formats, Q4_0 and Q4_1 (each qs word read once for its low
// and high nibbles, the block's scale and offset applied once per block). The kernel is the block decoder
// shaders/decode_q4_0.wgsl or decode_q4_1.wgsl (layout, BLOCK_WORDS, code_affine; after shaders/decode_units.wgsl:
// row_nibbles, PLACES), this file, the K_SPLIT reduction and the shared skeleton shaders/matmul.wgsl (composed in
// src/gpu/shaders.ts): read that header for the bindings, overrides and dispatch.
// The nibbles stay in their places (row_nibbles: a mask and a conversion each, the top one less 8), the activations
// are scaled by the places once for the 4 rows, and the top nibbles' 8 and the block's offset come through Σx: the
// fast form on CPU adapters (bench/README.md, "Shifts"), where this f32 body runs prefill too.

// GATED: the up rows in a pass of their own (shaders/matmul.wgsl).
const UP_OWN_PASS: bool = true;

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  // weight = d·code + offset (the decoder's code_affine).
  let a0 = code_affine(o0);
  let a1 = code_affine(o1);
  let a2 = code_affine(o2);
  let a3 = code_affine(o3);
  let d = vec4<f32>(a0.x, a1.x, a2.x, a3.x);
  let offset = vec4<f32>(a0.y, a1.y, a2.y, a3.y);
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
  // Word i holds bytes 4(i-1) .. 4(i-1)+3: low nibbles are elements 4(i-1).., high nibbles 16 + 4(i-1)..
  if (SHARED_X) {
    // Decode with the quad's x shared: a quad for the low nibbles' x (elements 0..15), one for the high (16..31).
    let v = x_quad(x0 + xb);
    let u = x_quad(x0 + xb + 4u);
    q4_word(row_nibbles(o0 + 1u, o1 + 1u, o2 + 1u, o3 + 1u), x_q0(v), x_q0(u), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), &s0, &s1, &s2, &s3, &t0, &t1, &t2, &t3, &top0, &top1, &top2, &top3);
    q4_word(row_nibbles(o0 + 2u, o1 + 2u, o2 + 2u, o3 + 2u), x_q1(v), x_q1(u), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), &s0, &s1, &s2, &s3, &t0, &t1, &t2, &t3, &top0, &top1, &top2, &top3);
    q4_word(row_nibbles(o0 + 3u, o1 + 3u, o2 + 3u, o3 + 3u), x_q2(v), x_q2(u), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), &s0, &s1, &s2, &s3, &t0, &t1, &t2, &t3, &top0, &top1, &top2, &top3);
    q4_word(row_nibbles(o0 + 4u, o1 + 4u, o2 + 4u, o3 + 4u), x_q3(v), x_q3(u), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), vec4<f32>(), &s0, &s1, &s2, &s3, &t0, &t1, &t2, &t3, &top0, &top1, &top2, &top3);
  } else {
    for (var i = 1u; i < 5u; i++) {
      let xi = xb + i - 1u;
      q4_word(row_nibbles(o0 + i, o1 + i, o2 + i, o3 + i), x[x0 + xi], x[x0 + xi + 4u], x[x1 + xi], x[x1 + xi + 4u], x[x2 + xi], x[x2 + xi + 4u], x[x3 + xi], x[x3 + xi + 4u], &s0, &s1, &s2, &s3, &t0, &t1, &t2, &t3, &top0, &top1, &top2, &top3);
    }
  }
  // Σ (d·code + offset)·x = d·(Σ placed·x' + 8·Σ top x) + offset·Σ x.
  *acc0 += d * (s0 + 8.0 * top0) + offset * ((t0.x + t0.y) + (t0.z + t0.w) + top0);
  if (TILE_M > 1u) {
    *acc1 += d * (s1 + 8.0 * top1) + offset * ((t1.x + t1.y) + (t1.z + t1.w) + top1);
    *acc2 += d * (s2 + 8.0 * top2) + offset * ((t2.x + t2.y) + (t2.z + t2.w) + top2);
    *acc3 += d * (s3 + 8.0 * top3) + offset * ((t3.x + t3.y) + (t3.z + t3.w) + top3);
  }
}

// One qs word of the 4 rows (n) against token t's low (v_t) and high (u_t) nibbles' x.
fn q4_word(n: RowCodes, v0: vec4<f32>, u0: vec4<f32>, v1: vec4<f32>, u1: vec4<f32>, v2: vec4<f32>, u2: vec4<f32>,
    v3: vec4<f32>, u3: vec4<f32>, s0: ptr<function, vec4<f32>>, s1: ptr<function, vec4<f32>>,
    s2: ptr<function, vec4<f32>>, s3: ptr<function, vec4<f32>>, t0: ptr<function, vec4<f32>>, t1: ptr<function, vec4<f32>>,
    t2: ptr<function, vec4<f32>>, t3: ptr<function, vec4<f32>>, top0: ptr<function, f32>, top1: ptr<function, f32>,
    top2: ptr<function, f32>, top3: ptr<function, f32>) {
  *s0 += dot4(n.l0, n.l1, n.l2, n.l3, v0 * PLACES) + dot4(n.h0, n.h1, n.h2, n.h3, u0 * HIGH_PLACES);
  *t0 += v0 + vec4<f32>(u0.xyz, 0.0);
  *top0 += u0.w;
  if (TILE_M > 1u) {
    *s1 += dot4(n.l0, n.l1, n.l2, n.l3, v1 * PLACES) + dot4(n.h0, n.h1, n.h2, n.h3, u1 * HIGH_PLACES);
    *t1 += v1 + vec4<f32>(u1.xyz, 0.0);
    *top1 += u1.w;
  }
  if (TILE_M > 2u) {
    *s2 += dot4(n.l0, n.l1, n.l2, n.l3, v2 * PLACES) + dot4(n.h0, n.h1, n.h2, n.h3, u2 * HIGH_PLACES);
    *t2 += v2 + vec4<f32>(u2.xyz, 0.0);
    *top2 += u2.w;
  }
  if (TILE_M > 3u) {
    *s3 += dot4(n.l0, n.l1, n.l2, n.l3, v3 * PLACES) + dot4(n.h0, n.h1, n.h2, n.h3, u3 * HIGH_PLACES);
    *t3 += v3 + vec4<f32>(u3.xyz, 0.0);
    *top3 += u3.w;
  }
}
