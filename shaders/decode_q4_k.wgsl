// decode_q4_k: the Q4_K block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines), after shaders/decode_kquant_scales.wgsl. Reads `w: array<u32>`.
//
// Block format: Q4_K super-blocks, row-major [rows, k/256 blocks], the 144 GGUF bytes (36 u32) each: f16 d,
// f16 dmin (word 0), scales[12] (words 1..3: 8 pairs of 6-bit scale and min), qs[128] (words 4..35). Elements
// 64c + l (l < 32) are the low nibbles of qs[32c + l] with sub-block 2c, elements 64c + 32 + l the high nibbles
// with sub-block 2c + 1; value = d*scale(sub)*q - dmin*min(sub).

const BLOCK_WORDS: u32 = 36u;
const BLOCK_ELEMENTS: u32 = 256u;
const SUB_ELEMENTS: u32 = 32u;
const HAS_OFFSET: bool = true;

// The low (shift 0) or high (shift 4) nibbles of the four bytes of a word, low byte first.
fn nibbles(word: u32, shift: u32) -> vec4<f32> {
  return vec4<f32>((vec4<u32>(word) >> (vec4<u32>(0u, 8u, 16u, 24u) + shift)) & vec4<u32>(15u));
}

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  return kquant_sub_affine(o, s);
}

// Group g (sub-block g / 8 = 2c + h): nibble h of qs word 4 + 8c + g % 8.
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  return nibbles(w[o + 4u + 8u * (g >> 4u) + (g & 7u)], 4u * ((g >> 3u) & 1u));
}
