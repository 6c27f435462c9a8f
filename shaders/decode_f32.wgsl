// matmul_f32: the F32 product kernel's weights. The kernel is this file, shaders/matmul_plain_block.wgsl (the
// block loop body), the K_SPLIT reduction and the skeleton shaders/matmul.wgsl (bindings, tiling, output;
// composed in src/gpu/shaders.ts): read the skeleton's header for the bindings, overrides and dispatch.
//
// Block format (binding 0, w):
//   0 w      array<u32>  f32 weights, row-major [n rows, k], as their bit patterns; a block is 4 consecutive
//                        weights of a row (k a multiple of 4). Rows [0, n) of this row range.

const BLOCK_WORDS: u32 = 4u;

fn weights4(o: u32) -> vec4<f32> {
  return bitcast<vec4<f32>>(vec4<u32>(w[o], w[o + 1u], w[o + 2u], w[o + 3u]));
}
