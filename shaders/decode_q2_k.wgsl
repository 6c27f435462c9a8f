// decode_q2_k: the Q2_K block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Reads the kernel's `w: array<u32>`.
//
// Block format: Q2_K super-blocks, row-major [rows, k/256 blocks], the 84 GGUF bytes (21 u32) each: scales[16]
// (words 0..3), qs[64] (words 4..19), word 20 = f16 d | f16 dmin << 16. Sub-block s = e / 16 of weight e: byte s
// of scales holds its scale (low nibble) and min (high nibble); weight e = 128n + 32j + 16h + l is the 2 bits at
// 2j of qs[32n + 16h + l]; value = d*scale*q - dmin*min.

const BLOCK_WORDS: u32 = 21u;
const BLOCK_ELEMENTS: u32 = 256u;
const SUB_ELEMENTS: u32 = 16u;
const HAS_OFFSET: bool = true;

// What the tuned body shaders/matmul_q2_q3_k.wgsl reads: the qs words from K2_QS, no high bits, and per row
// k2_d once a block and k2_scales / k2_offsets for sub-blocks 4m .. 4m + 3 (components): weight = scale·code + offset.
const K2_QS: u32 = 4u;
const K2_HIGH_BITS: bool = false;
const K2_HMASK: u32 = 0u;

fn k2_d(o: u32) -> vec2<f32> {
  return unpack2x16float(w[o + 20u]);
}

// d·scale: the low nibbles of scales word m, in place (shaders/decode_units.wgsl).
fn k2_scales(o: u32, m: u32, dm: vec2<f32>) -> vec4<f32> {
  return dm.x * (placed_low_nibbles(w[o + m]) * PLACES);
}

// -dmin·min: the high nibbles (the top one comes less 8).
fn k2_offsets(o: u32, m: u32, dm: vec2<f32>, scales: vec4<f32>) -> vec4<f32> {
  return -dm.y * (placed_high_nibbles(w[o + m]) * (PLACES / 16.0) + vec4<f32>(0.0, 0.0, 0.0, 8.0));
}

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  let sc = (w[o + (s >> 2u)] >> (8u * (s & 3u))) & 255u;
  let dm = unpack2x16float(w[o + 20u]);
  return vec2<f32>(dm.x * f32(sc & 15u), -dm.y * f32(sc >> 4u));
}

// Group g of sub-block s = g / 4 = 8n + 2j + h: bits 2j of the bytes of qs word 4 + 8n + 4h + g % 4.
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  let s = g >> 2u;
  let n = s >> 3u;
  let j = (s >> 1u) & 3u;
  let h = s & 1u;
  let word = w[o + 4u + 8u * n + 4u * h + (g & 3u)];
  return vec4<f32>((vec4<u32>(word) >> (vec4<u32>(0u, 8u, 16u, 24u) + 2u * j)) & vec4<u32>(3u));
}
