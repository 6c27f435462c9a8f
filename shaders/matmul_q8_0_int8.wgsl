// matmul_q8_0_int8: the Q8_0 product's int8-activation body (llama.cpp's vec_dot_q8_0_q8_0): a block's codes are
// its 32 int8 weights as stored (words 1..8 after the f16 d, shaders/decode_q8_0.wgsl's layout); its 32 products
// per row are 8 dot4I8Packed of the weight codes with the activation words, summed exactly in i32, then scaled once
// by d_w·d_x. Needs WGSL's packed_4x8_integer_dot_product language feature (dot4I8Packed): composed only into the
// kernels of adapters that have it (src/gpu/shaders.ts), with shaders/decode_q8_0.wgsl, the block loop
// shaders/int8_block_loop.wgsl (the functions this file defines for it are listed there), the K_SPLIT reduction and
// the skeleton shaders/matmul.wgsl. x: shaders/quantize_activations.wgsl's q8_0 blocks in its quads layout.

// Σ over 16 int8 pairs: a and b each hold 4 words of 4 packed int8.
fn dot_i8x16(a: vec4<u32>, b: vec4<u32>) -> i32 {
  return (dot4I8Packed(a.x, b.x) + dot4I8Packed(a.y, b.y)) + (dot4I8Packed(a.z, b.z) + dot4I8Packed(a.w, b.w));
}

// The int8 block of 32 activations whose vec4 index is q (shaders/quantize_activations.wgsl's layout): its two
// vec4 of packed codes and (d, Σq) as f32 and i32 bits.
struct ActivationBlock {
  lo: vec4<u32>,
  hi: vec4<u32>,
  d: f32,
  sum: i32,
}

const ACTIVATION_VEC4S: u32 = 3u;

fn activation_block(q: u32) -> ActivationBlock {
  let tail = bitcast<vec4<u32>>(x[q + 2u]);
  return ActivationBlock(bitcast<vec4<u32>>(x[q]), bitcast<vec4<u32>>(x[q + 1u]), bitcast<f32>(tail.x), bitcast<i32>(tail.y));
}

// One row's block of 32 weights as int8 codes, 4 to a word (the first in the low byte): elements 0..15 in lo,
// 16..31 in hi, from its word o on (the word after its f16 d).
struct WeightBlock {
  lo: vec4<u32>,
  hi: vec4<u32>,
}

fn weight_words(o: u32) -> WeightBlock {
  return WeightBlock(words4(o), words4(o + 4u));
}

// Σ code·q of one row's block with one token's activation block, exact in i32.
fn block_dot(c: WeightBlock, a: ActivationBlock) -> i32 {
  return dot_i8x16(c.lo, a.lo) + dot_i8x16(c.hi, a.hi);
}
