// decode_q8_0: the Q8_0 block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Reads the kernel's `w: array<u32>`.
//
// Block format: Q8_0 blocks, row-major [rows, k/32 blocks], 9 u32 per block: word 0 = d as f32 (the file's
// f16 widened at upload), words 1..8 = 32 int8 qs; value j = d*qs[j].

const BLOCK_WORDS: u32 = 9u;
const BLOCK_ELEMENTS: u32 = 32u;
const SUB_ELEMENTS: u32 = 32u;
const HAS_OFFSET: bool = false;

// The four codes of a word plus 128, over 255, low byte first: each byte's sign bit flipped makes it q + 128, and
// one unpack4x8unorm widens all four (the product body shaders/matmul_q8_0.wgsl takes 255·Σ - 128·Σx).
fn biased_codes(word: u32) -> vec4<f32> {
  return unpack4x8unorm(word ^ 0x80808080u);
}

// The four int8 of a word, low byte first.
fn unpack_i8x4(word: u32) -> vec4<f32> {
  let v = vec4<i32>(bitcast<i32>(word << 24u), bitcast<i32>(word << 16u), bitcast<i32>(word << 8u), bitcast<i32>(word));
  return vec4<f32>(v >> vec4<u32>(24u));
}

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  return vec2<f32>(bitcast<f32>(w[o]), 0.0);
}

fn group_codes(o: u32, g: u32) -> vec4<f32> {
  return unpack_i8x4(w[o + 1u + g]);
}
