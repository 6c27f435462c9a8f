// matmul_f16: the F16 product kernel's weights. The kernel is this file, shaders/matmul_plain_block.wgsl (the
// block loop body), the K_SPLIT reduction and the skeleton shaders/matmul.wgsl (bindings, tiling, output;
// composed in src/gpu/shaders.ts): read the skeleton's header for the bindings, overrides and dispatch. The
// halves are widened with unpack2x16float, so no `shader-f16` feature is needed (a product is bound by reading
// the weights; f16 arithmetic would not make it faster).
//
// Block format (binding 0, w):
//   0 w      array<u32>  f16 weights, row-major [n rows, k], two per word (the lower-indexed weight in the low
//                        half); a block is 4 consecutive weights of a row = 2 words (k a multiple of 4).
//                        Rows [0, n) of this row range.

const BLOCK_WORDS: u32 = 2u;

fn weights4(o: u32) -> vec4<f32> {
  return vec4<f32>(unpack2x16float(w[o]), unpack2x16float(w[o + 1u]));
}
