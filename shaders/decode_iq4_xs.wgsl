// decode_iq4_xs: the IQ4_XS block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Reads the kernel's `w: array<u32>`.
// After shaders/decode_iq4_values.wgsl.
//
// Block format: IQ4_XS super-blocks, row-major [rows, k/256 blocks], the 136 GGUF bytes (34 u32) each: word 0 =
// f16 d | scales_h << 16, word 1 = scales_l[4], words 2..33 = qs[128]. Sub-block s (32 weights): 6-bit scale
// ls = nibble s of word 1 | (2 bits of scales_h at 2s) << 4, value = d*(ls - 32)*IQ4[code]; its qs[16s .. 16s + 15]
// (words 2 + 4s ..) hold weights 32s + j in the low nibbles, 32s + 16 + j in the high ones.

const BLOCK_WORDS: u32 = 34u;
const BLOCK_ELEMENTS: u32 = 256u;
const SUB_ELEMENTS: u32 = 32u;
const HAS_OFFSET: bool = false;

// The first qs word of a block (the tuned body, shaders/matmul_iq4.wgsl).
const IQ4_QS_WORD: u32 = 2u;

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  let head = w[o];
  let low = (w[o + 1u] >> (4u * s)) & 15u;
  let high = (head >> (16u + 2u * s)) & 3u;
  return vec2<f32>(unpack2x16float(head).x * (f32(low | (high << 4u)) - 32.0), 0.0);
}

// Group g of sub-block s = g / 8: i = g % 8, low nibbles of word 2 + 4s + i for i < 4, high nibbles of word 2 + 4s + i - 4.
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  let i = g & 7u;
  return iq4_values(nibble_codes(w[o + 2u + 4u * (g >> 3u) + (i & 3u)], (i >> 2u) * 4u));
}
