// matmul_q4_0_int8: the Q4_0 product's int8-activation body (llama.cpp's vec_dot_q4_0_q8_0 with a d per 16
// activations): Σ (code - 8)·q over each half block, exact in i32, then scaled by d_w·d_x. Composed in src/gpu/shaders.ts with
// shaders/decode_q4_0.wgsl (the layout: words 1..4 after the f32 d hold the 16 bytes qs; byte i's low nibble is
// element i, its high nibble element 16 + i), the block loop shaders/int8_block_loop.wgsl (the functions this file
// defines for it are listed there), the K_SPLIT reduction and the skeleton shaders/matmul.wgsl.
//
// Two products per 32-bit multiply (SIMD within a register), not dot4I8Packed: on CPU adapters (SwiftShader) the
// packed dot is emulated byte by byte and was ~60% of this kernel's time (bench/README.md, "Q4_0 pair products").
// A weight word masked with 0x000F000F after a shift of 0, 4, 8 or 12 holds two codes 16 bits apart, w_lo + w_hi·2^16
// (elements (4j, 4j+2), (16+4j, 18+4j), (4j+1, 4j+3), (17+4j, 19+4j) of word j). The activations come as matching
// pairs a_hi + a_lo·2^16 (shaders/quantize_activations.wgsl with PAIRS; the sum taken in i32, so negative codes
// wrap consistently): the product is w_lo·a_hi + (w_lo·a_lo + w_hi·a_hi)·2^16 + w_hi·a_lo·2^32, and mod 2^32 the
// last term vanishes. Eight such products summed (a half block: shifts 0 and 8 hold the low half's elements, 4 and
// 12 the high half's): |Σ w_lo·a_hi| <= 8·15·127 = 15240 < 2^15 and |Σ middle| <= 8·2·15·127 = 30480, so the sum
// read as i32 is exact (< 2^31) and (sum + 2^15) & 0xFFFF0000 is the middle term times 2^16 exactly, an f32 with 15
// significant bits; the activation d carries the 2^-16 (ActivationBlock.d), so the scaled sum is the same f32 as the
// middle term times d. A mask, not `>> 16`: SwiftShader runs a WGSL shift lane by lane (its JIT has no per-lane
// shift amounts; the pack built-ins shift by constants inside), an `and` is one SIMD op (bench/README.md).
// No packed_4x8_integer_dot_product needed here.
//
// x: per token row (vec4 index x_t), block b at vec4 x_t + 5b: 4 vec4 of pair words (vec4 j for weight word j,
// components in shift order 0, 4, 8, 12), then (d_lo, d_hi, Σq_lo, Σq_hi) as quantize_activations writes them.

const PAIR_MASK: u32 = 0x000F000Fu;

// 2^16 · Σ (w_lo·a_lo + w_hi·a_hi) over 8 code pairs: those of words c0..c3 at shift 0 and 8 (elements 0..15, with their
// activation pairs p_j.x and p_j.z) or, with the words shifted right by 4 first, at shift 4 and 12 (elements 16..31,
// with p_j.y and p_j.w): one half block, one activation d.
fn pair_sum8(c0: u32, c1: u32, c2: u32, c3: u32, a0: u32, b0: u32, a1: u32, b1: u32, a2: u32, b2: u32, a3: u32, b3: u32) -> i32 {
  var s = (c0 & PAIR_MASK) * a0;
  s += ((c0 >> 8u) & PAIR_MASK) * b0;
  s += (c1 & PAIR_MASK) * a1;
  s += ((c1 >> 8u) & PAIR_MASK) * b1;
  s += (c2 & PAIR_MASK) * a2;
  s += ((c2 >> 8u) & PAIR_MASK) * b2;
  s += (c3 & PAIR_MASK) * a3;
  s += ((c3 >> 8u) & PAIR_MASK) * b3;
  return bitcast<i32>((s + 0x8000u) & 0xFFFF0000u);
}

// One token's activation block: its 16 pair words, per half (elements 0..15, 16..31) d·2^-16 (block_dot's sums
// carry 2^16), and the offset's share 8·(d_lo·Σq_lo + d_hi·Σq_hi) (Σ (code - 8)·q = Σ code·q - 8·Σq).
struct ActivationBlock {
  p0: vec4<u32>,
  p1: vec4<u32>,
  p2: vec4<u32>,
  p3: vec4<u32>,
  d: vec2<f32>,
  offset: f32,
}

const ACTIVATION_VEC4S: u32 = 5u;

fn activation_block(q: u32) -> ActivationBlock {
  let tail = bitcast<vec4<u32>>(x[q + 4u]);
  let d = bitcast<vec2<f32>>(tail.xy);
  let sum = vec2<f32>(bitcast<vec2<i32>>(tail.zw));
  return ActivationBlock(bitcast<vec4<u32>>(x[q]), bitcast<vec4<u32>>(x[q + 1u]), bitcast<vec4<u32>>(x[q + 2u]),
    bitcast<vec4<u32>>(x[q + 3u]), d * (1.0 / 65536.0), 8.0 * dot(d, sum));
}

// One row's block: its 4 words of nibbles (words 1..4 after the d).
alias WeightBlock = vec4<u32>;

fn weight_words(o: u32) -> WeightBlock {
  return words4(o);
}

// 2^16 · Σ code·q of one row's block with one token's activation block per half (low, high), exact in i32.
fn block_dot(c: WeightBlock, a: ActivationBlock) -> vec2<i32> {
  let lo = pair_sum8(c.x, c.y, c.z, c.w, a.p0.x, a.p0.z, a.p1.x, a.p1.z, a.p2.x, a.p2.z, a.p3.x, a.p3.z);
  let h = c >> vec4<u32>(4u);
  let hi = pair_sum8(h.x, h.y, h.z, h.w, a.p0.y, a.p0.w, a.p1.y, a.p1.w, a.p2.y, a.p2.w, a.p3.y, a.p3.w);
  return vec2<i32>(lo, hi);
}
