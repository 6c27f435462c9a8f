// decode_q4_0: the Q4_0 block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Reads the kernel's `w: array<u32>`.
//
// Block format: Q4_0 blocks, row-major [rows, k/32 blocks], 5 u32 per block: word 0 = d as f32 (the file's
// f16 widened at upload), words 1..4 = 16 bytes qs; value j < 16 = d*((qs[j] & 15) - 8), value j + 16 =
// d*((qs[j] >> 4) - 8).

const BLOCK_WORDS: u32 = 5u;
const BLOCK_ELEMENTS: u32 = 32u;
const SUB_ELEMENTS: u32 = 32u;
const HAS_OFFSET: bool = false;

// The low (shift 0) or high (shift 4) nibbles of the four bytes of a word, low byte first, minus 8.
fn nibbles(word: u32, shift: u32) -> vec4<f32> {
  let q = (vec4<u32>(word) >> (vec4<u32>(0u, 8u, 16u, 24u) + shift)) & vec4<u32>(15u);
  return vec4<f32>(q) - vec4<f32>(8.0);
}

// (d, offset) with weight = d·code + offset, code the nibble (the tuned body, shaders/matmul_q4.wgsl).
fn code_affine(o: u32) -> vec2<f32> {
  let d = bitcast<f32>(w[o]);
  return vec2<f32>(d, -8.0 * d);
}

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  return vec2<f32>(bitcast<f32>(w[o]), 0.0);
}

// Groups 0..3: low nibbles of words 1..4; groups 4..7: their high nibbles.
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  return nibbles(w[o + 1u + (g & 3u)], (g >> 2u) * 4u);
}
