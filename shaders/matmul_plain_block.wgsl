// matmul_plain_block: the product block body of the unquantized formats (F32, F16): a block is 4 consecutive
// weights of a row, read by the format's decoder (shaders/decode_f32.wgsl, decode_f16.wgsl: group_codes, scale 1).
// Composed (src/gpu/shaders.ts) with the decoder, the K_SPLIT reduction and the skeleton shaders/matmul.wgsl.

// GATED: the gate's and up's x loads shared in one pass (a second pass over x cost this load-bound body 5-45%).
const UP_OWN_PASS: bool = false;

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  let w0 = group_codes(o0, 0u);
  let w1 = group_codes(o1, 0u);
  let w2 = group_codes(o2, 0u);
  let w3 = group_codes(o3, 0u);
  *acc0 += dot4(w0, w1, w2, w3, x[x0 + xb]);
  if (TILE_M > 1u) {
    *acc1 += dot4(w0, w1, w2, w3, x[x1 + xb]);
  }
  if (TILE_M > 2u) {
    *acc2 += dot4(w0, w1, w2, w3, x[x2 + xb]);
  }
  if (TILE_M > 3u) {
    *acc3 += dot4(w0, w1, w2, w3, x[x3 + xb]);
  }
}
