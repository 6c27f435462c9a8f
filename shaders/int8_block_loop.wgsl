// int8_block_loop: the block loop of the int8-activation Q4_0 product (shaders/matmul_q4_0_int8.wgsl; llama.cpp's
// vec_dot_q4_0_q8_0): per block, the 4 rows' scales, their codes, and per token its activation block, whose
// exact integer sums per row and half block are scaled by d_x, then by d_w once. x is not f32 but
// shaders/quantize_activations.wgsl's int8 blocks (bound as the skeleton's `x`, bitcast). The body gives how the
// integers are summed, as decode_f16.wgsl's `halves` gives how a word becomes two weights:
//   WeightBlock, fn weight_words(o: u32) -> WeightBlock            a row block's codes, from its word o on (the
//                                                                  word after its d);
//   ActivationBlock (with d: vec2<f32>, what block_dot's sums are
//   scaled by: the halves' d over any scale those sums carry, and
//   offset: f32, what the block's codes' offset takes off a row's sum),
//   fn activation_block(q: u32) -> ActivationBlock                 one token's block at vec4 q;
//   const ACTIVATION_VEC4S: u32                                    vec4 a block takes in x (its layout);
//   fn block_dot(c: WeightBlock, a: ActivationBlock) -> vec2<i32>  Σ code·q of one row's block per half (times
//                                                                  a power of two the body chooses), exact.
// The kernel is the block decoder (shaders/decode_q4_0.wgsl: layout, BLOCK_WORDS, d the f32 of the block's
// first word), the body, this file, the K_SPLIT reduction and the skeleton shaders/matmul.wgsl: read that header
// for the bindings, overrides and dispatch.

// Four consecutive weight words w[o] .. w[o + 3].
fn words4(o: u32) -> vec4<u32> {
  return vec4<u32>(w[o], w[o + 1u], w[o + 2u], w[o + 3u]);
}

// Rows of scales d and codes c0..c3 times one token's activation block: the halves' exact sums, rows in the
// components, scaled by their activation d, less the block's offset (a.offset), then by d_w.
fn block_products(d: vec4<f32>, c0: WeightBlock, c1: WeightBlock, c2: WeightBlock, c3: WeightBlock, a: ActivationBlock) -> vec4<f32> {
  let s0 = block_dot(c0, a);
  let s1 = block_dot(c1, a);
  let s2 = block_dot(c2, a);
  let s3 = block_dot(c3, a);
  let lo = vec4<f32>(vec4<i32>(s0.x, s1.x, s2.x, s3.x));
  let hi = vec4<f32>(vec4<i32>(s0.y, s1.y, s2.y, s3.y));
  return d * (a.d.x * lo + a.d.y * hi - a.offset);
}

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3 (token t's
// activation block b is at vec4 x_t + ACTIVATION_VEC4S·b).
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let d = bitcast<vec4<f32>>(vec4<u32>(w[o0], w[o1], w[o2], w[o3]));
  let c0 = weight_words(o0 + 1u);
  let c1 = weight_words(o1 + 1u);
  let c2 = weight_words(o2 + 1u);
  let c3 = weight_words(o3 + 1u);
  let q = b * ACTIVATION_VEC4S;
  *acc0 += block_products(d, c0, c1, c2, c3, activation_block(x0 + q));
  if (TILE_M > 1u) {
    *acc1 += block_products(d, c0, c1, c2, c3, activation_block(x1 + q));
  }
  if (TILE_M > 2u) {
    *acc2 += block_products(d, c0, c1, c2, c3, activation_block(x2 + q));
  }
  if (TILE_M > 3u) {
    *acc3 += block_products(d, c0, c1, c2, c3, activation_block(x3 + q));
  }
}
