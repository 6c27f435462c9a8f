// matmul_q4_0_int8: the Q4_0 product's block body for int8 activations (llama.cpp's vec_dot_q4_0_q8_0): x is
// shaders/quantize_activations.wgsl's q8_0 blocks (bound as the skeleton's `x`, bitcast). A weight word's low
// nibbles (elements 4i..) and high nibbles (16 + 4i..) are masked into two words of int8 codes 0..15, multiplied
// with the activation words by dot4I8Packed and summed exactly in i32; the codes' -8 comes off as -8·Σq (the
// activation block's sum), then d_w·d_x scales once. The kernel is the block decoder shaders/decode_q4_0.wgsl
// (layout, BLOCK_WORDS), shaders/dot_i8_packed.wgsl, this file, the K_SPLIT reduction and the skeleton
// shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read that header for the bindings and dispatch.

const NIBBLES = vec4<u32>(0x0f0f0f0fu);

// Σ (code - 8)·q of one row's block (codes: the four qs words) with one token's activation block.
fn q4_block_sum(codes: vec4<u32>, a: ActivationBlock) -> i32 {
  return dot_i8x16(codes & NIBBLES, a.lo) + dot_i8x16((codes >> vec4<u32>(4u)) & NIBBLES, a.hi) - 8 * a.sum;
}

fn q4_block_sums(c0: vec4<u32>, c1: vec4<u32>, c2: vec4<u32>, c3: vec4<u32>, a: ActivationBlock) -> vec4<f32> {
  return vec4<f32>(vec4<i32>(q4_block_sum(c0, a), q4_block_sum(c1, a), q4_block_sum(c2, a), q4_block_sum(c3, a)));
}

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3 (xb = 8 b:
// token t's activation block b is at vec4 x_t + 3b).
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, xb: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let d = vec4<f32>(unpack2x16float(w[o0]).x, unpack2x16float(w[o1]).x, unpack2x16float(w[o2]).x, unpack2x16float(w[o3]).x);
  let c0 = words4(o0 + 1u);
  let c1 = words4(o1 + 1u);
  let c2 = words4(o2 + 1u);
  let c3 = words4(o3 + 1u);
  let q = (xb / 8u) * 3u;
  let a0 = activation_block(x0 + q);
  *acc0 += (d * a0.d) * q4_block_sums(c0, c1, c2, c3, a0);
  if (TILE_M > 1u) {
    let a1 = activation_block(x1 + q);
    *acc1 += (d * a1.d) * q4_block_sums(c0, c1, c2, c3, a1);
  }
  if (TILE_M > 2u) {
    let a2 = activation_block(x2 + q);
    *acc2 += (d * a2.d) * q4_block_sums(c0, c1, c2, c3, a2);
  }
  if (TILE_M > 3u) {
    let a3 = activation_block(x3 + q);
    *acc3 += (d * a3.d) * q4_block_sums(c0, c1, c2, c3, a3);
  }
}
