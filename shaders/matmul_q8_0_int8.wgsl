// matmul_q8_0_int8: the Q8_0 product's block body for int8 activations (llama.cpp's vec_dot_q8_0_q8_0): x is not
// f32 but shaders/quantize_activations.wgsl's q8_0 blocks (bound as the skeleton's `x`, bitcast), and a block's
// 32 products per row are 8 dot4I8Packed of the weight words with the activation words, summed exactly in i32,
// then scaled once by d_w·d_x. The kernel is the block decoder shaders/decode_q8_0.wgsl (layout, BLOCK_WORDS),
// shaders/dot_i8_packed.wgsl, this file, the K_SPLIT reduction and the skeleton shaders/matmul.wgsl (composed in
// src/gpu/shaders.ts): read that header for the bindings, overrides and dispatch.

// The block's Σ w·q for the rows whose blocks start at o0..o3 and one token's activation block.
fn q8_block_sums(wa0: vec4<u32>, wc0: vec4<u32>, wa1: vec4<u32>, wc1: vec4<u32>, wa2: vec4<u32>, wc2: vec4<u32>,
    wa3: vec4<u32>, wc3: vec4<u32>, a: ActivationBlock) -> vec4<f32> {
  return vec4<f32>(vec4<i32>(
    dot_i8x16(wa0, a.lo) + dot_i8x16(wc0, a.hi),
    dot_i8x16(wa1, a.lo) + dot_i8x16(wc1, a.hi),
    dot_i8x16(wa2, a.lo) + dot_i8x16(wc2, a.hi),
    dot_i8x16(wa3, a.lo) + dot_i8x16(wc3, a.hi),
  ));
}

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3 (xb = 8 b:
// token t's activation block b is at vec4 x_t + 3b).
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, xb: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let d = vec4<f32>(unpack2x16float(w[o0]).x, unpack2x16float(w[o1]).x, unpack2x16float(w[o2]).x, unpack2x16float(w[o3]).x);
  let wa0 = words4(o0 + 1u);
  let wc0 = words4(o0 + 5u);
  let wa1 = words4(o1 + 1u);
  let wc1 = words4(o1 + 5u);
  let wa2 = words4(o2 + 1u);
  let wc2 = words4(o2 + 5u);
  let wa3 = words4(o3 + 1u);
  let wc3 = words4(o3 + 5u);
  let q = (xb / 8u) * 3u;
  let a0 = activation_block(x0 + q);
  *acc0 += (d * a0.d) * q8_block_sums(wa0, wc0, wa1, wc1, wa2, wc2, wa3, wc3, a0);
  if (TILE_M > 1u) {
    let a1 = activation_block(x1 + q);
    *acc1 += (d * a1.d) * q8_block_sums(wa0, wc0, wa1, wc1, wa2, wc2, wa3, wc3, a1);
  }
  if (TILE_M > 2u) {
    let a2 = activation_block(x2 + q);
    *acc2 += (d * a2.d) * q8_block_sums(wa0, wc0, wa1, wc1, wa2, wc2, wa3, wc3, a2);
  }
  if (TILE_M > 3u) {
    let a3 = activation_block(x3 + q);
    *acc3 += (d * a3.d) * q8_block_sums(wa0, wc0, wa1, wc1, wa2, wc2, wa3, wc3, a3);
  }
}
