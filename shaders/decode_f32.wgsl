// decode_f32: the F32 block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Composed with a kernel that binds the weights as
// `w: array<u32>`: the products (shaders/matmul_plain_block.wgsl + shaders/matmul.wgsl) and the embedding lookup.
//
// Block format: f32 weights, row-major [rows, k], as their bit patterns; a block is 4 consecutive weights of a
// row (k a multiple of 4), 4 words.

const BLOCK_WORDS: u32 = 4u;
const BLOCK_ELEMENTS: u32 = 4u;
const SUB_ELEMENTS: u32 = 4u;
const HAS_OFFSET: bool = false;

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  return vec2<f32>(1.0, 0.0);
}

// The 4 weights of the block at word o (g is 0: a block is one group).
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  return bitcast<vec4<f32>>(vec4<u32>(w[o], w[o + 1u], w[o + 2u], w[o + 3u]));
}
