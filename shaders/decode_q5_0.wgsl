// decode_q5_0: the Q5_0 block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Reads the kernel's `w: array<u32>`.
//
// Block format: Q5_0 blocks, row-major [rows, k/32 blocks], 6 u32 each: word 0 = d as f32 (the file's f16 widened at
// upload), word 1 = qh by byte (bit 8i + g: the fifth bit of weight 4g + i; the file's bit 4g + i, moved at upload so
// that a weight's fifth bit lies in the byte its nibble does), words 2..5 = 16 bytes qs (weight j < 16: low nibble of
// qs[j], j + 16: its high nibble); q = nibble | qh bit << 4, value = d*(q - 16).

const BLOCK_WORDS: u32 = 6u;
const BLOCK_ELEMENTS: u32 = 32u;
const SUB_ELEMENTS: u32 = 32u;
const HAS_OFFSET: bool = false;

// (d, offset) with weight = d·code + offset, code = nibble + 16·bit (the tuned body, shaders/matmul_q5.wgsl).
fn code_affine(o: u32) -> vec2<f32> {
  let d = bitcast<f32>(w[o]);
  return vec2<f32>(d, -16.0 * d);
}

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  return vec2<f32>(bitcast<f32>(w[o]), 0.0);
}

// Weights 4g .. 4g + 3: nibbles of word 2 + g % 4 (low for g < 4), fifth bits g, 8 + g, 16 + g, 24 + g of word 1.
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  let shifts = vec4<u32>(0u, 8u, 16u, 24u);
  let low = (vec4<u32>(w[o + 2u + (g & 3u)]) >> (shifts + (g >> 2u) * 4u)) & vec4<u32>(15u);
  let high = (vec4<u32>(w[o + 1u]) >> (shifts + g)) & vec4<u32>(1u);
  return vec4<f32>(low | (high << vec4<u32>(4u))) - vec4<f32>(16.0);
}
