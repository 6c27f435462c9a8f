// decode_q3_k: the Q3_K block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Reads the kernel's `w: array<u32>`.
//
// Block format: Q3_K super-blocks, row-major [rows, k/256 blocks], the 110 GGUF bytes + 2 zero bytes (28 u32)
// each: hmask[32] (words 0..7), qs[64] (words 8..23), scales[12] (words 24..26), f16 d (word 27, low half).
// Weight e = 128n + 32j + 16h + l (sub-block s = e / 16): the 2 bits at 2j of qs[32n + 16h + l], minus 4 unless bit
// 4n + j of hmask[16h + l] is set; scale s: low 4 bits from scales[s % 8] (nibble s / 8), top 2 bits from
// scales[8 + s % 4] at bit 2 (s / 4), minus 32; value = d*scale*q.

const BLOCK_WORDS: u32 = 28u;
const BLOCK_ELEMENTS: u32 = 256u;
const SUB_ELEMENTS: u32 = 16u;
const HAS_OFFSET: bool = false;

// Byte i of the scales field of the block at word o.
fn q3k_scale_byte(o: u32, i: u32) -> u32 {
  return (w[o + 24u + (i >> 2u)] >> (8u * (i & 3u))) & 255u;
}

// The codes of group_codes plus 4, over 255 (the affine body's units: code = UNIT_SCALE·unit - UNIT_BIAS): the 2
// low bits and the high bit joined in the bytes of one word and widened by one unpack4x8unorm (on CPU adapters one
// widening op a word is the fast form).
const UNIT_SCALE: f32 = 255.0;
const UNIT_BIAS: f32 = 4.0;

fn group_units(o: u32, g: u32) -> vec4<f32> {
  let s = g >> 2u;
  let n = s >> 3u;
  let j = (s >> 1u) & 3u;
  let h = s & 1u;
  let low = (w[o + 8u + 8u * n + 4u * h + (g & 3u)] >> (2u * j)) & 0x03030303u;
  let high = ((w[o + 4u * h + (g & 3u)] >> (4u * n + j)) & 0x01010101u) << 2u;
  return unpack4x8unorm(low | high);
}

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  let low = (q3k_scale_byte(o, s & 7u) >> (4u * (s >> 3u))) & 15u;
  let high = (q3k_scale_byte(o, 8u + (s & 3u)) >> (2u * (s >> 2u))) & 3u;
  return vec2<f32>(unpack2x16float(w[o + 27u]).x * (f32(low | (high << 4u)) - 32.0), 0.0);
}

// Group g of sub-block s = g / 4 = 8n + 2j + h: qs word 8 + 8n + 4h + g % 4 (bits 2j), hmask word 4h + g % 4 (bit 4n + j).
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  let s = g >> 2u;
  let n = s >> 3u;
  let j = (s >> 1u) & 3u;
  let h = s & 1u;
  let shifts = vec4<u32>(0u, 8u, 16u, 24u);
  let low = (vec4<u32>(w[o + 8u + 8u * n + 4u * h + (g & 3u)]) >> (shifts + 2u * j)) & vec4<u32>(3u);
  let high = (vec4<u32>(w[o + 4u * h + (g & 3u)]) >> (shifts + 4u * n + j)) & vec4<u32>(1u);
  return vec4<f32>(low + 4u * high) - vec4<f32>(4.0);
}
