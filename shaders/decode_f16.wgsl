// decode_f16: the F16 block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). The halves are widened with unpack2x16float, so no
// `shader-f16` feature is needed (a product is bound by reading the weights; f16 arithmetic would not make it
// faster).
//
// Block format: f16 weights, row-major [rows, k], two per word (the lower-indexed weight in the low half); a
// block is 4 consecutive weights of a row = 2 words (k a multiple of 4).

const BLOCK_WORDS: u32 = 2u;
const BLOCK_ELEMENTS: u32 = 4u;
const SUB_ELEMENTS: u32 = 4u;
const HAS_OFFSET: bool = false;

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  return vec2<f32>(1.0, 0.0);
}

// The 4 weights of the block at word o (g is 0: a block is one group).
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  return vec4<f32>(unpack2x16float(w[o]), unpack2x16float(w[o + 1u]));
}
