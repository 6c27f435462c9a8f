// decode_q4_1: the Q4_1 block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Reads the kernel's `w: array<u32>`.
//
// Block format: Q4_1 blocks, row-major [rows, k/32 blocks], the 20 GGUF bytes (5 u32) each: word 0 = f16 d |
// f16 m << 16, words 1..4 = 16 bytes qs; value j < 16 = d*(qs[j] & 15) + m, value j + 16 = d*(qs[j] >> 4) + m.

const BLOCK_WORDS: u32 = 5u;
const BLOCK_ELEMENTS: u32 = 32u;
const SUB_ELEMENTS: u32 = 32u;
const HAS_OFFSET: bool = true;

// (d, m) with weight = d·code + m, code the nibble (the tuned body, shaders/matmul_q4.wgsl).
fn code_affine(o: u32) -> vec2<f32> {
  return unpack2x16float(w[o]);
}

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  return unpack2x16float(w[o]);
}

// Groups 0..3: low nibbles of words 1..4; groups 4..7: their high nibbles.
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  let shift = (g >> 2u) * 4u;
  return vec4<f32>((vec4<u32>(w[o + 1u + (g & 3u)]) >> (vec4<u32>(0u, 8u, 16u, 24u) + shift)) & vec4<u32>(15u));
}
