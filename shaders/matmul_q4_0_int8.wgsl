// matmul_q4_0_int8: the Q4_0 product's int8-activation body (llama.cpp's vec_dot_q4_0_q8_0): a weight word's low
// nibbles (elements 4i..) and high nibbles (16 + 4i..) masked into two words of int8 codes 0..15 (words 1..4
// after the f16 d, shaders/decode_q4_0.wgsl's layout); the codes' -8 comes off as -8·Σq (the activation block's
// sum). The block loop, the dot4I8Packed sums and the scaling are shaders/dot_i8_packed.wgsl's; composed in
// src/gpu/shaders.ts with shaders/decode_q4_0.wgsl, the K_SPLIT reduction and the skeleton shaders/matmul.wgsl.

const WEIGHT_OFFSET: i32 = -8;
const NIBBLES = vec4<u32>(0x0f0f0f0fu);

fn weight_words(o: u32) -> WeightBlock {
  let codes = words4(o);
  return WeightBlock(codes & NIBBLES, (codes >> vec4<u32>(4u)) & NIBBLES);
}
