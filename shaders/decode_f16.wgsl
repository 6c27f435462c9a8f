// decode_f16: the F16 block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). As written here the halves are widened with unpack2x16float, so
// no `shader-f16` feature is needed (the packed path). On a device with `shader-f16` the product kernels use the
// native variant (src/gpu/shaders.ts (nativeF16Kernel)): the same decoder with `enable f16;` and `halves` below swapped
// for shaders/decode_f16_native.wgsl's, which reads each word as a vec2<f16>. That function is the only difference.
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
  return vec4<f32>(halves(w[o]), halves(w[o + 1u]));
}

// The two weights of a word, the low half first (packed path).
fn halves(word: u32) -> vec2<f32> {
  return unpack2x16float(word);
}
