// matmul_q4_0_int8: the Q4_0 product's int8-activation body (llama.cpp's vec_dot_q4_0_q8_0, the same integers):
// Σ (code - 8)·q over a block, exact in i32, then scaled once by d_w·d_x. Composed in src/gpu/shaders.ts with
// shaders/decode_q4_0.wgsl (the layout: words 1..4 after the f16 d hold the 16 bytes qs; byte i's low nibble is
// element i, its high nibble element 16 + i), the K_SPLIT reduction and the skeleton shaders/matmul.wgsl.
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
struct PairBlock {
  p0: vec4<u32>,
  p1: vec4<u32>,
  p2: vec4<u32>,
  p3: vec4<u32>,
  d: f32,
  sum: i32,
}

fn pair_block(q: u32) -> PairBlock {
  let tail = bitcast<vec4<u32>>(x[q + 4u]);
  return PairBlock(bitcast<vec4<u32>>(x[q]), bitcast<vec4<u32>>(x[q + 1u]), bitcast<vec4<u32>>(x[q + 2u]),
    bitcast<vec4<u32>>(x[q + 3u]), bitcast<f32>(tail.x), bitcast<i32>(tail.y));
}

// Σ code·q of the row block whose codes are the words c (without the -8).
fn row_dot(c: vec4<u32>, a: PairBlock) -> i32 {
  return pair_sum8(c.x, c.y, a.p0, a.p1) + pair_sum8(c.z, c.w, a.p2, a.p3);
}

// Rows o0..o3's block times one token's activations: Σ (code - 8)·q scaled by d_w·d_x.
fn block_products(d: vec4<f32>, c0: vec4<u32>, c1: vec4<u32>, c2: vec4<u32>, c3: vec4<u32>, a: PairBlock) -> vec4<f32> {
  let dots = vec4<i32>(row_dot(c0, a), row_dot(c1, a), row_dot(c2, a), row_dot(c3, a)) - vec4<i32>(8 * a.sum);
  return (d * a.d) * vec4<f32>(dots);
}

fn codes(o: u32) -> vec4<u32> {
  return vec4<u32>(w[o], w[o + 1u], w[o + 2u], w[o + 3u]);
}

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3 (xb = 8 b).
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, xb: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let d = vec4<f32>(unpack2x16float(w[o0]).x, unpack2x16float(w[o1]).x, unpack2x16float(w[o2]).x, unpack2x16float(w[o3]).x);
  let c0 = codes(o0 + 1u);
  let c1 = codes(o1 + 1u);
  let c2 = codes(o2 + 1u);
  let c3 = codes(o3 + 1u);
  let q = (xb / 8u) * 5u;
  *acc0 += block_products(d, c0, c1, c2, c3, pair_block(x0 + q));
  if (TILE_M > 1u) {
    *acc1 += block_products(d, c0, c1, c2, c3, pair_block(x1 + q));
  }
  if (TILE_M > 2u) {
    *acc2 += block_products(d, c0, c1, c2, c3, pair_block(x2 + q));
  }
  if (TILE_M > 3u) {
    *acc3 += block_products(d, c0, c1, c2, c3, pair_block(x3 + q));
  }
}
