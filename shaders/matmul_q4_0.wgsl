// matmul_q4_0: the Q4_0 product's tuned block body (each qs word read once for its low and high nibbles, d
// applied once per block). The kernel is the block decoder shaders/decode_q4_0.wgsl (layout, BLOCK_WORDS,
// nibbles), this file, the K_SPLIT reduction and the shared skeleton shaders/matmul.wgsl (composed in
// src/gpu/shaders.ts): read that header for the bindings, overrides and dispatch.

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, xb: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let d = vec4<f32>(unpack2x16float(w[o0]).x, unpack2x16float(w[o1]).x, unpack2x16float(w[o2]).x, unpack2x16float(w[o3]).x);
  var s0 = vec4<f32>(0.0);
  var s1 = vec4<f32>(0.0);
  var s2 = vec4<f32>(0.0);
  var s3 = vec4<f32>(0.0);
  for (var i = 1u; i < 5u; i++) {
    // Word i holds bytes 4(i-1) .. 4(i-1)+3: low nibbles are elements 4(i-1).., high nibbles 16 + 4(i-1)..
    let a0 = w[o0 + i];
    let a1 = w[o1 + i];
    let a2 = w[o2 + i];
    let a3 = w[o3 + i];
    let l0 = nibbles(a0, 0u);
    let l1 = nibbles(a1, 0u);
    let l2 = nibbles(a2, 0u);
    let l3 = nibbles(a3, 0u);
    let h0 = nibbles(a0, 4u);
    let h1 = nibbles(a1, 4u);
    let h2 = nibbles(a2, 4u);
    let h3 = nibbles(a3, 4u);
    let xi = xb + i - 1u;
    s0 += dot4(l0, l1, l2, l3, x[x0 + xi]) + dot4(h0, h1, h2, h3, x[x0 + xi + 4u]);
    if (TILE_M > 1u) {
      s1 += dot4(l0, l1, l2, l3, x[x1 + xi]) + dot4(h0, h1, h2, h3, x[x1 + xi + 4u]);
    }
    if (TILE_M > 2u) {
      s2 += dot4(l0, l1, l2, l3, x[x2 + xi]) + dot4(h0, h1, h2, h3, x[x2 + xi + 4u]);
    }
    if (TILE_M > 3u) {
      s3 += dot4(l0, l1, l2, l3, x[x3 + xi]) + dot4(h0, h1, h2, h3, x[x3 + xi + 4u]);
    }
  }
  *acc0 += d * s0;
  if (TILE_M > 1u) {
    *acc1 += d * s1;
    *acc2 += d * s2;
    *acc3 += d * s3;
  }
}
