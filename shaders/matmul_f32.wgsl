// matmul_f32: the F32 product kernel's block decoding. The kernel is this file followed by the shared skeleton
// shaders/matmul.wgsl (bindings, tiling, reduction, output; composed in src/gpu/shaders.ts): read that header
// for the bindings, overrides and dispatch.
//
// Block format (binding 0, w):
//   0 w      array<u32>  f32 weights, row-major [n rows, k], as their bit patterns; a block is 4 consecutive
//                        weights of a row (k a multiple of 4). Rows [0, n) of this row range.

const BLOCK_WORDS: u32 = 4u;
const BLOCK_ELEMENTS: u32 = 4u;

fn f32x4_at(o: u32) -> vec4<f32> {
  return bitcast<vec4<f32>>(vec4<u32>(w[o], w[o + 1u], w[o + 2u], w[o + 3u]));
}

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, xb: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let w0 = f32x4_at(o0);
  let w1 = f32x4_at(o1);
  let w2 = f32x4_at(o2);
  let w3 = f32x4_at(o3);
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
