// decode_mxfp4: the MXFP4 block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Reads the kernel's `w: array<u32>`. gpt-oss's expert weights.
//
// Block format: MXFP4 blocks, row-major [rows, k/32 blocks], 5 u32 per block: word 0 = u8 e in the low byte
// (the rest zero), words 1..4 = 16 bytes qs; value j < 16 = d*MXFP4[qs[j] & 15], value j + 16 = d*MXFP4[qs[j] >> 4],
// d = 2^(e - 128) (E8M0 scale 2^(e - 127), halved because the codebook holds the E2M1 values doubled, as ggml).

const BLOCK_WORDS: u32 = 5u;
const BLOCK_ELEMENTS: u32 = 32u;
const SUB_ELEMENTS: u32 = 32u;
const HAS_OFFSET: bool = false;

// The doubled E2M1 values as int8, four per word (code c is byte c % 4 of word c / 4): MXFP4_VALUES.
const MXFP4_WORD0: u32 = 0x03020100u; // 0, 1, 2, 3
const MXFP4_WORD1: u32 = 0x0c080604u; // 4, 6, 8, 12
const MXFP4_WORD2: u32 = 0xfdfeff00u; // 0, -1, -2, -3
const MXFP4_WORD3: u32 = 0xf4f8fafcu; // -4, -6, -8, -12

// The codebook values of four 4-bit codes (no indexed arrays: selects on the code's top two bits).
fn mxfp4_values(c: vec4<u32>) -> vec4<f32> {
  let top = c >> vec4<u32>(2u);
  let low_words = select(vec4<u32>(MXFP4_WORD0), vec4<u32>(MXFP4_WORD1), top == vec4<u32>(1u));
  let high_words = select(vec4<u32>(MXFP4_WORD2), vec4<u32>(MXFP4_WORD3), top == vec4<u32>(3u));
  let word = select(low_words, high_words, top >= vec4<u32>(2u));
  let byte = (word >> ((c & vec4<u32>(3u)) * vec4<u32>(8u))) & vec4<u32>(255u);
  return vec4<f32>(bitcast<vec4<i32>>(byte << vec4<u32>(24u)) >> vec4<u32>(24u));
}

// 2^(e - 128) as f32: exponent field e - 1 for e >= 2; the two subnormals for e = 0, 1 (flushed to zero where the
// adapter flushes subnormals).
fn mxfp4_scale(e: u32) -> f32 {
  return bitcast<f32>(select(0x00200000u << (e & 1u), (e - 1u) << 23u, e >= 2u));
}

// The affine body's units: the codes themselves (code = UNIT_SCALE·unit - UNIT_BIAS).
const UNIT_SCALE: f32 = 1.0;
const UNIT_BIAS: f32 = 0.0;

fn group_units(o: u32, g: u32) -> vec4<f32> {
  return group_codes(o, g);
}

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  return vec2<f32>(mxfp4_scale(w[o] & 255u), 0.0);
}

// Groups 0..3: low nibbles of words 1..4; groups 4..7: their high nibbles.
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  let word = w[o + 1u + (g & 3u)];
  let codes = (vec4<u32>(word) >> (vec4<u32>(0u, 8u, 16u, 24u) + (g >> 2u) * 4u)) & vec4<u32>(15u);
  return mxfp4_values(codes);
}
