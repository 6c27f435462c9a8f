// matmul_q4_k: the Q4_K product's tuned block body (scales decoded once per block for the 4 rows, each qs word
// read once for both nibbles, mins applied through Σx). The kernel is the block decoder shaders/decode_q4_k.wgsl
// (after decode_units.wgsl and decode_kquant_scales.wgsl: layout, BLOCK_WORDS, kquant_scales, row_nibbles), this
// file, the K_SPLIT reduction and the shared skeleton shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read that
// header for the bindings, overrides and dispatch. The nibbles stay in their places (row_nibbles: a mask and a
// conversion each; the top one comes less 8 and its 8·x is added back per sub-block) and the activations are scaled
// by the places once for the 4 rows: on CPU adapters a shift or a pack built-in costs more than a mask and a
// conversion (bench/README.md, "Shifts").

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  let dm0 = unpack2x16float(w[o0]);
  let dm1 = unpack2x16float(w[o1]);
  let dm2 = unpack2x16float(w[o2]);
  let dm3 = unpack2x16float(w[o3]);
  let d = vec4<f32>(dm0.x, dm1.x, dm2.x, dm3.x);
  let dmin = vec4<f32>(dm0.y, dm1.y, dm2.y, dm3.y);
  // Each row's eight (scale, min), decoded once per block (kquant_scales: placed, no shifts).
  let k0 = kquant_scales(w[o0 + 1u], w[o0 + 2u], w[o0 + 3u]);
  let k1 = kquant_scales(w[o1 + 1u], w[o1 + 2u], w[o1 + 3u]);
  let k2 = kquant_scales(w[o2 + 1u], w[o2 + 2u], w[o2 + 3u]);
  let k3 = kquant_scales(w[o3 + 1u], w[o3 + 2u], w[o3 + 3u]);
  for (var c = 0u; c < 4u; c++) {
    // Chunk c's sub-blocks 2c (low nibbles) and 2c + 1 (high nibbles), (scale, min) per row.
    let sl = 2u * c;
    let sh = sl + 1u;
    let sl0 = vec2<f32>(kquant_pick(k0.scale_lo, k0.scale_hi, sl), kquant_pick(k0.min_lo, k0.min_hi, sl));
    let sl1 = vec2<f32>(kquant_pick(k1.scale_lo, k1.scale_hi, sl), kquant_pick(k1.min_lo, k1.min_hi, sl));
    let sl2 = vec2<f32>(kquant_pick(k2.scale_lo, k2.scale_hi, sl), kquant_pick(k2.min_lo, k2.min_hi, sl));
    let sl3 = vec2<f32>(kquant_pick(k3.scale_lo, k3.scale_hi, sl), kquant_pick(k3.min_lo, k3.min_hi, sl));
    let sh0 = vec2<f32>(kquant_pick(k0.scale_lo, k0.scale_hi, sh), kquant_pick(k0.min_lo, k0.min_hi, sh));
    let sh1 = vec2<f32>(kquant_pick(k1.scale_lo, k1.scale_hi, sh), kquant_pick(k1.min_lo, k1.min_hi, sh));
    let sh2 = vec2<f32>(kquant_pick(k2.scale_lo, k2.scale_hi, sh), kquant_pick(k2.min_lo, k2.min_hi, sh));
    let sh3 = vec2<f32>(kquant_pick(k3.scale_lo, k3.scale_hi, sh), kquant_pick(k3.min_lo, k3.min_hi, sh));
    let low_scale = d * vec4<f32>(sl0.x, sl1.x, sl2.x, sl3.x);
    let high_scale = d * vec4<f32>(sh0.x, sh1.x, sh2.x, sh3.x);
    let low_min = dmin * vec4<f32>(sl0.y, sl1.y, sl2.y, sl3.y);
    let high_min = dmin * vec4<f32>(sh0.y, sh1.y, sh2.y, sh3.y);
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
    *acc0 += low_scale * lo0 + high_scale * (hi0 + 8.0 * sx0.z) - low_min * sx0.x - high_min * sx0.y;
    if (TILE_M > 1u) {
      *acc1 += low_scale * lo1 + high_scale * (hi1 + 8.0 * sx1.z) - low_min * sx1.x - high_min * sx1.y;
      *acc2 += low_scale * lo2 + high_scale * (hi2 + 8.0 * sx2.z) - low_min * sx2.x - high_min * sx2.y;
      *acc3 += low_scale * lo3 + high_scale * (hi3 + 8.0 * sx3.z) - low_min * sx3.x - high_min * sx3.y;
    }
  }
}
