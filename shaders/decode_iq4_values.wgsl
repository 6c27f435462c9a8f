// decode_iq4_values: the non-linear 4-bit codebook that IQ4_NL and IQ4_XS share (a helper composed before their
// decoders, shaders/decode_iq4_nl.wgsl and decode_iq4_xs.wgsl; src/common/weight-formats.ts names it in their rows
// and holds the values as IQ4_VALUES).

// The codebook values of four 4-bit codes: round(p(code)), p the degree-4 polynomial closest to the 16 values in the
// max norm (at most 0.433 off each, so rounding gives each exactly; f32 evaluation adds ~1e-4). Five multiply-adds
// and a round a code, no table: on CPU adapters an indexed constant array goes through memory entry by entry, and
// the selects and per-lane shifts that read the values out of packed words cost IQ4 ten times Q4_0's product time
// (bench/README.md). test/gpu/weight-formats-kernels.test.ts checks every code at every place of a block.
const IQ4_P4: f32 = 0.0015860428102314472;
const IQ4_P3: f32 = 0.03108643926680088;
const IQ4_P2: f32 = -1.37192702293396;
const IQ4_P1: f32 = 24.173830032348633;
const IQ4_P0: f32 = -126.56700897216797;

fn iq4_values(c: vec4<u32>) -> vec4<f32> {
  return iq4_of(vec4<f32>(c));
}

// The same of codes given as floats (0 .. 15, exact).
fn iq4_of(n: vec4<f32>) -> vec4<f32> {
  return round((((IQ4_P4 * n + IQ4_P3) * n + IQ4_P2) * n + IQ4_P1) * n + IQ4_P0);
}

// The low (shift 0) or high (shift 4) nibbles of the four bytes of a word, low byte first.
fn nibble_codes(word: u32, shift: u32) -> vec4<u32> {
  return (vec4<u32>(word) >> (vec4<u32>(0u, 8u, 16u, 24u) + shift)) & vec4<u32>(15u);
}
