// matmul_q4_k: the Q4_K product's tuned block body (scales decoded once per block for the 4 rows, each qs word
// read once for both nibbles, mins applied through Σx). The kernel is the block decoder shaders/decode_q4_k.wgsl
// (after decode_units.wgsl and decode_kquant_scales.wgsl: layout, BLOCK_WORDS, kquant_rows, kquant_chunk, row_nibbles), this
// file, the K_SPLIT reduction and the shared skeleton shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read that
// header for the bindings, overrides and dispatch. The nibbles stay in their places (row_nibbles: a mask and a
// conversion each; the top one comes less 8 and its 8·x is added back per sub-block) and the activations are scaled
// by the places once for the 4 rows: on CPU adapters a shift or a pack built-in costs more than a mask and a
// conversion (bench/README.md, "Shifts").

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
    // Chunk c's sub-blocks 2c (low nibbles) and 2c + 1 (high nibbles): d·scale and dmin·min per row.
    let a = kquant_chunk(rows, c);
    // Per token: q·x over the low and the high sub-block (rows in the components; the high one's top nibbles less
    // 8), Σx over each, and 8·Σx over the top nibbles' x (sx.z: what the high sums lack).
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
      let qi = 4u + 8u * c + l;
      let n = row_nibbles(o0 + qi, o1 + qi, o2 + qi, o3 + qi);
      let xi = xb + 16u * c + l;
      let xl0 = x[x0 + xi];
      let xh0 = x[x0 + xi + 8u];
      lo0 += dot4(n.l0, n.l1, n.l2, n.l3, xl0 * PLACES);
      hi0 += dot4(n.h0, n.h1, n.h2, n.h3, xh0 * HIGH_PLACES);
      sx0 += vec3<f32>(dot(xl0, vec4<f32>(1.0)), dot(xh0, vec4<f32>(1.0)), xh0.w);
      if (TILE_M > 1u) {
        let xl1 = x[x1 + xi];
        let xh1 = x[x1 + xi + 8u];
        lo1 += dot4(n.l0, n.l1, n.l2, n.l3, xl1 * PLACES);
        hi1 += dot4(n.h0, n.h1, n.h2, n.h3, xh1 * HIGH_PLACES);
        sx1 += vec3<f32>(dot(xl1, vec4<f32>(1.0)), dot(xh1, vec4<f32>(1.0)), xh1.w);
      }
      if (TILE_M > 2u) {
        let xl2 = x[x2 + xi];
        let xh2 = x[x2 + xi + 8u];
        lo2 += dot4(n.l0, n.l1, n.l2, n.l3, xl2 * PLACES);
        hi2 += dot4(n.h0, n.h1, n.h2, n.h3, xh2 * HIGH_PLACES);
        sx2 += vec3<f32>(dot(xl2, vec4<f32>(1.0)), dot(xh2, vec4<f32>(1.0)), xh2.w);
      }
      if (TILE_M > 3u) {
        let xl3 = x[x3 + xi];
        let xh3 = x[x3 + xi + 8u];
        lo3 += dot4(n.l0, n.l1, n.l2, n.l3, xl3 * PLACES);
        hi3 += dot4(n.h0, n.h1, n.h2, n.h3, xh3 * HIGH_PLACES);
        sx3 += vec3<f32>(dot(xl3, vec4<f32>(1.0)), dot(xh3, vec4<f32>(1.0)), xh3.w);
      }
    }
    *acc0 += a.low_scale * lo0 + a.high_scale * (hi0 + 8.0 * sx0.z) - a.low_min * sx0.x - a.high_min * sx0.y;
    if (TILE_M > 1u) {
      *acc1 += a.low_scale * lo1 + a.high_scale * (hi1 + 8.0 * sx1.z) - a.low_min * sx1.x - a.high_min * sx1.y;
      *acc2 += a.low_scale * lo2 + a.high_scale * (hi2 + 8.0 * sx2.z) - a.low_min * sx2.x - a.high_min * sx2.y;
      *acc3 += a.low_scale * lo3 + a.high_scale * (hi3 + 8.0 * sx3.z) - a.low_min * sx3.x - a.high_min * sx3.y;
    }
  }
}
