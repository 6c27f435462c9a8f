// matmul_q8_0_int8: the Q8_0 product's int8-activation body (llama.cpp's vec_dot_q8_0_q8_0): a block's codes are
// its 32 int8 weights as stored (words 1..8 after the f16 d, shaders/decode_q8_0.wgsl's layout), no offset. The
// block loop, the dot4I8Packed sums and the scaling are shaders/dot_i8_packed.wgsl's; composed in
// src/gpu/shaders.ts with shaders/decode_q8_0.wgsl, the K_SPLIT reduction and the skeleton shaders/matmul.wgsl.

const WEIGHT_OFFSET: i32 = 0;

fn weight_words(o: u32) -> WeightBlock {
  return WeightBlock(words4(o), words4(o + 4u));
}
