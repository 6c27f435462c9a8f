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

// What the tuned body shaders/matmul_q2_q3_k.wgsl reads: the qs words from K2_QS, the high bits from K2_HMASK (code
// = low + 4·high - 4), and per row k2_d once a block and k2_scales / k2_offsets for sub-blocks 4m .. 4m + 3
// (components): weight = scale·code + offset.
const K2_QS: u32 = 8u;
const K2_HIGH_BITS: bool = true;
const K2_HMASK: u32 = 0u;

fn k2_d(o: u32) -> vec2<f32> {
  return vec2<f32>(unpack2x16float(w[o + 27u]).x, 0.0);
}

// d·(scale - 32) of sub-blocks 4m .. 4m + 3, each field in its place (shaders/decode_units.wgsl): the low 4 bits
// are nibble m / 2 of word 24 + m % 2's bytes, the top 2 bits bits 2m of word 26's; fields holding bit 31 (the high
// nibble of byte 3, m >= 2; bits 6-7 of byte 3, m = 3) come less their top value and get it back as a constant.
fn k2_scales(o: u32, m: u32, dm: vec2<f32>) -> vec4<f32> {
  let word = w[o + 24u + (m & 1u)];
  let upper = m >= 2u;
  let low = select(placed_low_nibbles(word) * PLACES,
    placed_high_nibbles(word) * (PLACES / 16.0) + vec4<f32>(0.0, 0.0, 0.0, 8.0), upper);
  let last = m == 3u;
  // 4^m and 16 / 4^m by selects (a shift by m, though uniform, runs lane by lane on CPU adapters).
  let odd = (m & 1u) == 1u;
  let place = select(select(1u, 4u, odd), select(16u, 64u, odd), upper);
  let scale = select(select(16.0, 4.0, odd), select(1.0, 0.25, odd), upper);
  let top = placed_fields(w[o + 26u] ^ select(0u, TOP, last), BITS_01 * place) * (scale * PLACES)
    + select(vec4<f32>(0.0), vec4<f32>(0.0, 0.0, 0.0, 32.0), last);
  return dm.x * (low + top - 32.0);
}

// The code's -4.
fn k2_offsets(o: u32, m: u32, dm: vec2<f32>, scales: vec4<f32>) -> vec4<f32> {
  return -4.0 * scales;
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
