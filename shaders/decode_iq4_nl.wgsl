// decode_iq4_nl: the IQ4_NL block decoder (src/common/weight-formats.ts lists every format and its decoder; read its
// header for the functions each decoder defines). Reads the kernel's `w: array<u32>`.
// After shaders/decode_iq4_values.wgsl.
//
// Block format: IQ4_NL blocks, row-major [rows, k/32 blocks], 5 u32 per block: word 0 = d as f32 (the file's
// f16 widened at upload), words 1..4 = 16 bytes qs; value j < 16 = d*IQ4[qs[j] & 15], value j + 16 = d*IQ4[qs[j] >> 4].

const BLOCK_WORDS: u32 = 5u;
const BLOCK_ELEMENTS: u32 = 32u;
const SUB_ELEMENTS: u32 = 32u;
const HAS_OFFSET: bool = false;

// The first qs word of a block (the tuned body, shaders/matmul_iq4.wgsl).
const IQ4_QS_WORD: u32 = 1u;

fn sub_affine(o: u32, s: u32) -> vec2<f32> {
  return vec2<f32>(bitcast<f32>(w[o]), 0.0);
}

// Groups 0..3: low nibbles of words 1..4; groups 4..7: their high nibbles.
fn group_codes(o: u32, g: u32) -> vec4<f32> {
  return iq4_values(nibble_codes(w[o + 1u + (g & 3u)], (g >> 2u) * 4u));
}
