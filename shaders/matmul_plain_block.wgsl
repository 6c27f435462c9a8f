// matmul_plain_block: the block decoding shared by the unquantized product kernels (matmul_f32, matmul_f16): a
// block is 4 consecutive weights of a row, widened to f32 by the type's fn weights4(o: u32) -> vec4<f32> (its
// words start at w[o]). Composed (src/gpu/shaders.ts) with the type's file and the skeleton shaders/matmul.wgsl.

const BLOCK_ELEMENTS: u32 = 4u;

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, xb: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let w0 = weights4(o0);
  let w1 = weights4(o1);
  let w2 = weights4(o2);
  let w3 = weights4(o3);
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
