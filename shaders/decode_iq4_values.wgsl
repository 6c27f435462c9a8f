// decode_iq4_values: the non-linear 4-bit codebook that IQ4_NL and IQ4_XS share (a helper composed before their
// decoders, shaders/decode_iq4_nl.wgsl and decode_iq4_xs.wgsl; src/common/weight-formats.ts names it in their rows
// and holds the same values as IQ4_VALUES).

// The 16 values as int8, four per word (code c is byte c % 4 of word c / 4).
const IQ4_WORD0: u32 = 0xbfad9881u; // -127, -104, -83, -65
const IQ4_WORD1: u32 = 0xf6eaddcfu; // -49, -35, -22, -10
const IQ4_WORD2: u32 = 0x26190d01u; // 1, 13, 25, 38
const IQ4_WORD3: u32 = 0x71594535u; // 53, 69, 89, 113

// The codebook values of four 4-bit codes (no indexed arrays: selects on the code's top two bits).
fn iq4_values(c: vec4<u32>) -> vec4<f32> {
  let top = c >> vec4<u32>(2u);
  let low_words = select(vec4<u32>(IQ4_WORD0), vec4<u32>(IQ4_WORD1), top == vec4<u32>(1u));
  let high_words = select(vec4<u32>(IQ4_WORD2), vec4<u32>(IQ4_WORD3), top == vec4<u32>(3u));
  let word = select(low_words, high_words, top >= vec4<u32>(2u));
  let byte = (word >> ((c & vec4<u32>(3u)) * vec4<u32>(8u))) & vec4<u32>(255u);
  return vec4<f32>(bitcast<vec4<i32>>(byte << vec4<u32>(24u)) >> vec4<u32>(24u));
}

// The low (shift 0) or high (shift 4) nibbles of the four bytes of a word, low byte first.
fn nibble_codes(word: u32, shift: u32) -> vec4<u32> {
  return (vec4<u32>(word) >> (vec4<u32>(0u, 8u, 16u, 24u) + shift)) & vec4<u32>(15u);
}
