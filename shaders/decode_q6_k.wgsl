// decode_q6_k: the Q6_K block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Reads the kernel's `w: array<u32>`.
//
// Block format: Q6_K super-blocks, row-major [rows, k/256 blocks], the 210 GGUF bytes + 2 zero bytes (53 u32)
// each: ql[128] (words 0..31), qh[64] (words 32..47), int8 scales[16] (words 48..51), f16 d (word 52, low half).
// For half h (0, 1), l < 32, g (0..3): element 128h + 32g + l = d * scales[8h + 2g + l/16] * (q - 32), q = 4 bits
// of ql[64h + 32(g&1) + l] (low nibble for g < 2, high for g >= 2) | 2 bits (qh[32h + l] >> 2g) << 4; so the
// scale of element e is scales[e / 16].

const BLOCK_WORDS: u32 = 53u;
const BLOCK_ELEMENTS: u32 = 256u;
const SUB_ELEMENTS: u32 = 16u;
const HAS_OFFSET: bool = false;

// Signed int8 scale i (0..15) of the block at word o.
fn scale_i8(o: u32, i: u32) -> f32 {
  let byte = (w[o + 48u + (i >> 2u)] >> ((i & 3u) * 8u)) & 255u;
  return f32(bitcast<i32>(byte << 24u) >> 24u);
}

// The values q - 32 of four consecutive elements of one group: 4 bits of each byte of ql_word (low nibbles for
// ql_shift 0, high for 4) joined with 2 bits of each byte of qh_word (at qh_shift) as bits 4-5.
fn q6(ql_word: u32, qh_word: u32, ql_shift: u32, qh_shift: u32) -> vec4<f32> {
  let shifts = vec4<u32>(0u, 8u, 16u, 24u);
  let low = (vec4<u32>(ql_word) >> (shifts + ql_shift)) & vec4<u32>(15u);
  let high = (vec4<u32>(qh_word) >> (shifts + qh_shift)) & vec4<u32>(3u);
  return vec4<f32>(low | (high << vec4<u32>(4u))) - vec4<f32>(32.0);
}

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  return vec2<f32>(unpack2x16float(w[o + 52u]).x * scale_i8(o, s), 0.0);
}

// Group q = elements 4q .. 4q + 3: half h = q / 32, g = (q / 8) % 4, l = 4 (q % 8).
fn group_codes(o: u32, q: u32) -> vec4<f32> {
  let h = q >> 5u;
  let g = (q >> 3u) & 3u;
  let i = q & 7u;
  return q6(w[o + 16u * h + 8u * (g & 1u) + i], w[o + 32u + 8u * h + i], 4u * (g >> 1u), 2u * g);
}
