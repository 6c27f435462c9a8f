// matmul_q4_0_int8: the Q4_0 product's int8-activation body (llama.cpp's vec_dot_q4_0_q8_0, the same integers):
// Σ (code - 8)·q over a block, exact in i32, then scaled once by d_w·d_x. Composed in src/gpu/shaders.ts with
// shaders/decode_q4_0.wgsl (the layout: words 1..4 after the f16 d hold the 16 bytes qs; byte i's low nibble is
// element i, its high nibble element 16 + i), the block loop shaders/int8_block_loop.wgsl (the functions this file
// defines for it are listed there), the K_SPLIT reduction and the skeleton shaders/matmul.wgsl.
//
// Two products per 32-bit multiply (SIMD within a register), not dot4I8Packed: on CPU adapters (SwiftShader) the
// packed dot is emulated byte by byte and was ~60% of this kernel's time (bench/README.md, "Q4_0 pair products").
// A weight word masked with 0x000F000F after a shift of 0, 4, 8 or 12 holds two codes 16 bits apart, w_lo + w_hi·2^16
// (elements (4j, 4j+2), (16+4j, 18+4j), (4j+1, 4j+3), (17+4j, 19+4j) of word j). The activations come as matching
// pairs a_hi + a_lo·2^16 (shaders/quantize_activations.wgsl with PAIRS; the sum taken in i32, so negative codes
// wrap consistently): the product is w_lo·a_hi + (w_lo·a_lo + w_hi·a_hi)·2^16 + w_hi·a_lo·2^32, and mod 2^32 the
// last term vanishes. Eight such products summed: |Σ w_lo·a_hi| <= 8·15·127 = 15240 < 2^15 and |Σ middle| <= 8·2·15·127
// = 30480, so the sum read as i32 is exact (< 2^31) and (sum + 2^15) >> 16 (arithmetic) is the middle term exactly.
// No packed_4x8_integer_dot_product needed here.
//
// x: per token row (vec4 index x_t), block b at vec4 x_t + 5b: 4 vec4 of pair words (vec4 j for weight word j,
// components in shift order 0, 4, 8, 12), then (bitcast d, bitcast Σq, 0, 0) as quantize_activations writes them.

const PAIR_MASK: u32 = 0x000F000Fu;

// Σ (w_lo·a_lo + w_hi·a_hi) over the 8 code pairs of weight words c0, c1 with their activation pairs p0, p1.
fn pair_sum8(c0: u32, c1: u32, p0: vec4<u32>, p1: vec4<u32>) -> i32 {
  var s = (c0 & PAIR_MASK) * p0.x;
  s += ((c0 >> 4u) & PAIR_MASK) * p0.y;
  s += ((c0 >> 8u) & PAIR_MASK) * p0.z;
  s += ((c0 >> 12u) & PAIR_MASK) * p0.w;
  s += (c1 & PAIR_MASK) * p1.x;
  s += ((c1 >> 4u) & PAIR_MASK) * p1.y;
  s += ((c1 >> 8u) & PAIR_MASK) * p1.z;
  s += ((c1 >> 12u) & PAIR_MASK) * p1.w;
  return (bitcast<i32>(s) + 32768) >> 16u;
}

// One token's activation block: its 16 pair words, d and Σq.
struct ActivationBlock {
  p0: vec4<u32>,
  p1: vec4<u32>,
  p2: vec4<u32>,
  p3: vec4<u32>,
  d: f32,
  sum: i32,
}

const ACTIVATION_VEC4S: u32 = 5u;

fn activation_block(q: u32) -> ActivationBlock {
  let tail = bitcast<vec4<u32>>(x[q + 4u]);
  return ActivationBlock(bitcast<vec4<u32>>(x[q]), bitcast<vec4<u32>>(x[q + 1u]), bitcast<vec4<u32>>(x[q + 2u]),
    bitcast<vec4<u32>>(x[q + 3u]), bitcast<f32>(tail.x), bitcast<i32>(tail.y));
}

// One row's block: its 4 words of nibbles (words 1..4 after the f16 d).
alias WeightBlock = vec4<u32>;

fn weight_words(o: u32) -> WeightBlock {
  return words4(o);
}

// Σ (code - 8)·q of one row's block with one token's activation block, exact in i32.
fn block_dot(c: WeightBlock, a: ActivationBlock) -> i32 {
  return pair_sum8(c.x, c.y, a.p0, a.p1) + pair_sum8(c.z, c.w, a.p2, a.p3) - 8 * a.sum;
}
