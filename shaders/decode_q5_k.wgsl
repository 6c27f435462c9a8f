// decode_q5_k: the Q5_K block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Reads the kernel's `w: array<u32>`.
// After shaders/decode_kquant_scales.wgsl.
//
// Block format: Q5_K super-blocks, row-major [rows, k/256 blocks], the 176 GGUF bytes (44 u32) each: f16 d,
// f16 dmin (word 0), scales[12] (words 1..3, as Q4_K), qh[32] (words 4..11), qs[128] (words 12..43). Weight
// e = 64c + 32h + l (sub-block 2c + h): nibble h of qs[32c + l] | bit 2c + h of qh[l] << 4; value =
// d*scale(sub)*q - dmin*min(sub).

const BLOCK_WORDS: u32 = 44u;
const BLOCK_ELEMENTS: u32 = 256u;
const SUB_ELEMENTS: u32 = 32u;
const HAS_OFFSET: bool = true;

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  return kquant_sub_affine(o, s);
}

// Group g of sub-block s = g / 8 = 2c + h, i = g % 8: nibble h of qs word 12 + 8c + i, bit s of qh word 4 + i.
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  let s = g >> 3u;
  let i = g & 7u;
  let shifts = vec4<u32>(0u, 8u, 16u, 24u);
  let low = (vec4<u32>(w[o + 12u + 8u * (s >> 1u) + i]) >> (shifts + 4u * (s & 1u))) & vec4<u32>(15u);
  let high = (vec4<u32>(w[o + 4u + i]) >> (shifts + s)) & vec4<u32>(1u);
  return vec4<f32>(low | (high << vec4<u32>(4u)));
}
