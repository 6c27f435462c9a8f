// matmul_q8_0_int8: the Q8_0 product's int8-activation body (llama.cpp's vec_dot_q8_0_q8_0): a block's codes are
// its 32 int8 weights as stored (words 1..8 after the f16 d, shaders/decode_q8_0.wgsl's layout); its 32 products
// per row are 8 dot4I8Packed of the weight codes with the activation words, summed exactly in i32, then scaled once
// by d_w·d_x. Needs WGSL's packed_4x8_integer_dot_product language feature (dot4I8Packed): composed only into the
// kernels of adapters that have it (src/gpu/shaders.ts), with shaders/decode_q8_0.wgsl, the K_SPLIT reduction and
// the skeleton shaders/matmul.wgsl (read that header for the bindings, overrides and dispatch). x is not f32 but
// shaders/quantize_activations.wgsl's q8_0 blocks in its quads layout (bound as the skeleton's `x`, bitcast).

// Four consecutive weight words w[o] .. w[o + 3].
fn words4(o: u32) -> vec4<u32> {
  return vec4<u32>(w[o], w[o + 1u], w[o + 2u], w[o + 3u]);
}

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

fn block_dots(c0: WeightBlock, c1: WeightBlock, c2: WeightBlock, c3: WeightBlock, a: ActivationBlock) -> vec4<f32> {
  return vec4<f32>(vec4<i32>(block_dot(c0, a), block_dot(c1, a), block_dot(c2, a), block_dot(c3, a)));
}

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3 (xb = 8 b:
// token t's activation block b is at vec4 x_t + 3b).
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, xb: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let d = vec4<f32>(unpack2x16float(w[o0]).x, unpack2x16float(w[o1]).x, unpack2x16float(w[o2]).x, unpack2x16float(w[o3]).x);
  let c0 = weight_words(o0 + 1u);
  let c1 = weight_words(o1 + 1u);
  let c2 = weight_words(o2 + 1u);
  let c3 = weight_words(o3 + 1u);
  let q = (xb / 8u) * 3u;
  let a0 = activation_block(x0 + q);
  *acc0 += (d * a0.d) * block_dots(c0, c1, c2, c3, a0);
  if (TILE_M > 1u) {
    let a1 = activation_block(x1 + q);
    *acc1 += (d * a1.d) * block_dots(c0, c1, c2, c3, a1);
  }
  if (TILE_M > 2u) {
    let a2 = activation_block(x2 + q);
    *acc2 += (d * a2.d) * block_dots(c0, c1, c2, c3, a2);
  }
  if (TILE_M > 3u) {
    let a3 = activation_block(x3 + q);
    *acc3 += (d * a3.d) * block_dots(c0, c1, c2, c3, a3);
  }
}
