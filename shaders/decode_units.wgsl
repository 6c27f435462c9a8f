// decode_units: what the block decoders and product bodies share (src/gpu/shaders.ts composes this before every
// decoder): dot4, and the tuned bodies' codes left in their places (below).

// (W_r0 · v, W_r1 · v, W_r2 · v, W_r3 · v) for one vec4 of four rows' weights: the product bodies' step.
fn dot4(w0: vec4<f32>, w1: vec4<f32>, w2: vec4<f32>, w3: vec4<f32>, v: vec4<f32>) -> vec4<f32> {
  return vec4<f32>(dot(w0, v), dot(w1, v), dot(w2, v), dot(w3, v));
}

// Codes left in their places. On CPU adapters (SwiftShader's Subzero JIT) a WGSL shift runs lane by lane and
// unpack4x8unorm's shifts, u32 conversions and multiplies cost more than a mask and an i32 -> f32 conversion a code,
// each one SIMD op: so the hottest bodies mask each code where it lies, convert it (exact: at most 8 significant
// bits) and scale the activations, which serve 4 rows, by the places instead (bench/README.md, "Shifts").
// PLACES undoes bytes 0..3's places (2^0, 2^8, 2^16, 2^24); HIGH_PLACES the high nibbles' (2^4, 2^12, 2^20, 2^28).
const PLACES: vec4<f32> = vec4<f32>(1.0, 1.0 / 256.0, 1.0 / 65536.0, 1.0 / 16777216.0);
const HIGH_PLACES: vec4<f32> = vec4<f32>(1.0 / 16.0, 1.0 / 4096.0, 1.0 / 1048576.0, 1.0 / 268435456.0);

// The four signed bytes of a word, each left in its place: (q0 + 128, (q1 + 128)·2^8, (q2 + 128)·2^16, q3·2^24),
// exact in f32: the low three bytes' sign bits flipped make them unsigned, the top byte is the i32's own sign. Times
// PLACES and less (128, 128, 128, 0) it is the bytes (Q8_0's codes: shaders/matmul_q8_0.wgsl scales the activations
// instead and takes Σ - 128·(x0 + x1 + x2); Q6_K's scales).
fn placed_codes(word: u32) -> vec4<f32> {
  return placed_fields(word ^ 0x00808080u, vec4<u32>(0xFFu, 0xFF00u, 0xFF0000u, 0xFF000000u));
}

// The fields `mask` of a word (one a component), each in its place, converted: exact where a field has at most 8
// bits; a field holding bit 31 comes out less its top value (the i32's sign), unless the caller flipped that bit.
fn placed_fields(word: u32, mask: vec4<u32>) -> vec4<f32> {
  return vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(word) & mask));
}

// The low (l_r) and high (h_r) nibbles of one word of each of four rows, w[o0] .. w[o3], in their places: l = (L0,
// L1·2^8, L2·2^16, L3·2^24), h = (H0·2^4, H1·2^12, H2·2^20, (H3 - 8)·2^28), L_i and H_i the low and high nibble of
// byte i (RowCodes: any two sets of 4 fields of four rows' words). The top nibble comes less 8 (its bit flipped
// first), as the i32's sign bit is its top bit: a body adds 8·x back for it or takes it as part of an offset of 8
// (the 4-row tile's step of the nibble bodies, shaders/matmul_q4.wgsl, matmul_q5.wgsl, matmul_q4_k.wgsl and matmul_q5_k.wgsl).
struct RowCodes {
  l0: vec4<f32>,
  l1: vec4<f32>,
  l2: vec4<f32>,
  l3: vec4<f32>,
  h0: vec4<f32>,
  h1: vec4<f32>,
  h2: vec4<f32>,
  h3: vec4<f32>,
}

// The low and the high nibble of each byte of a word.
const LOW_NIBBLES: vec4<u32> = vec4<u32>(0xFu, 0xF00u, 0xF0000u, 0xF000000u);
const HIGH_NIBBLES: vec4<u32> = vec4<u32>(0xF0u, 0xF000u, 0xF00000u, 0xF0000000u);

fn placed_low_nibbles(word: u32) -> vec4<f32> {
  return placed_fields(word, LOW_NIBBLES);
}

fn placed_high_nibbles(word: u32) -> vec4<f32> {
  return placed_fields(word ^ 0x80000000u, HIGH_NIBBLES);
}

fn row_nibbles(o0: u32, o1: u32, o2: u32, o3: u32) -> RowCodes {
  let a0 = w[o0];
  let a1 = w[o1];
  let a2 = w[o2];
  let a3 = w[o3];
  return RowCodes(placed_low_nibbles(a0), placed_low_nibbles(a1), placed_low_nibbles(a2), placed_low_nibbles(a3),
    placed_high_nibbles(a0), placed_high_nibbles(a1), placed_high_nibbles(a2), placed_high_nibbles(a3));
}

// Two sets of fields of four rows' words, each in its place: l_r the fields `lmask` of l_r's word, h_r the fields
// `hmask` of h_r's word, each word xor its flip first (a field holding bit 31 comes less its top value unless that
// bit is flipped: the caller adds the top value back through the activations): shaders/matmul_q2_q3_k.wgsl's plane 3
// (the 2-bit codes and Q3_K's high bits).
fn row_fields(l0: u32, l1: u32, l2: u32, l3: u32, h0: u32, h1: u32, h2: u32, h3: u32, lmask: vec4<u32>,
    hmask: vec4<u32>, lflip: u32, hflip: u32) -> RowCodes {
  return RowCodes(placed_fields(l0 ^ lflip, lmask), placed_fields(l1 ^ lflip, lmask), placed_fields(l2 ^ lflip, lmask),
    placed_fields(l3 ^ lflip, lmask), placed_fields(h0 ^ hflip, hmask), placed_fields(h1 ^ hflip, hmask),
    placed_fields(h2 ^ hflip, hmask), placed_fields(h3 ^ hflip, hmask));
}

// Bits 2j, 2j + 1 of each byte of a word (BITS_01 .. BITS_67: j = 0 .. 3): the 2-bit fields of Q2_K's and Q3_K's
// codes, the K-quant scales' top bits. A word's top bit: TOP (flipped where a field holding it must not come negative).
const BITS_01: vec4<u32> = vec4<u32>(0x3u, 0x300u, 0x30000u, 0x3000000u);
const BITS_23: vec4<u32> = vec4<u32>(0xCu, 0xC00u, 0xC0000u, 0xC000000u);
const BITS_45: vec4<u32> = vec4<u32>(0x30u, 0x3000u, 0x300000u, 0x30000000u);
const BITS_67: vec4<u32> = vec4<u32>(0xC0u, 0xC000u, 0xC00000u, 0xC0000000u);
const TOP: u32 = 0x80000000u;

// The bits `mask` (one a component, below bit 31) of a word of each of four rows, each in its place: the fifth bits
// of the 5-bit bodies (shaders/matmul_q5.wgsl, matmul_q5_k.wgsl).
struct RowBits {
  b0: vec4<f32>,
  b1: vec4<f32>,
  b2: vec4<f32>,
  b3: vec4<f32>,
}

fn row_bits(h0: u32, h1: u32, h2: u32, h3: u32, mask: vec4<u32>) -> RowBits {
  return RowBits(placed_fields(h0, mask), placed_fields(h1, mask), placed_fields(h2, mask), placed_fields(h3, mask));
}

// Codes whose bits lie in two words (a 5th or 6th bit apart from its nibble, Q3_K's high bit apart from its 2 bits),
// joined: the fields `amask` of word a times `amul` or'ed with the fields `bmask` of word b times `bmul` (a multiply
// by a power of two moves a field up; each masked first, so nothing else moves), xor `flip`. A body chooses the
// multipliers that put each code's parts next to each other, so one mask and one conversion give the whole code in
// its place (row_joined): the 5-bit bodies (shaders/matmul_q5.wgsl, matmul_q5_k.wgsl), Q6_K's and Q3_K's.
fn join_fields(a: u32, amask: u32, amul: u32, b: u32, bmask: u32, bmul: u32, flip: u32) -> u32 {
  return (((a & amask) * amul) | ((b & bmask) * bmul)) ^ flip;
}

// Four rows' joined words (a_r with b_r), their fields `fields` each in its place.
fn row_joined(a0: u32, a1: u32, a2: u32, a3: u32, amask: u32, amul: u32, b0: u32, b1: u32, b2: u32, b3: u32, bmask: u32,
    bmul: u32, flip: u32, fields: vec4<u32>) -> RowBits {
  return row_bits(join_fields(a0, amask, amul, b0, bmask, bmul, flip), join_fields(a1, amask, amul, b1, bmask, bmul, flip),
    join_fields(a2, amask, amul, b2, bmask, bmul, flip), join_fields(a3, amask, amul, b3, bmask, bmul, flip), fields);
}

// One field `mask` of each of four rows' words (each xor `flip`), in place: the extra bits of a high nibble's byte 3,
// which a join cannot place (they would go past bit 31), taken alone (shaders/matmul_q5.wgsl, matmul_q5_k.wgsl,
// matmul_q6_k.wgsl).
fn row_field(h0: u32, h1: u32, h2: u32, h3: u32, mask: u32, flip: u32) -> vec4<f32> {
  return vec4<f32>(bitcast<vec4<i32>>((vec4<u32>(h0, h1, h2, h3) ^ vec4<u32>(flip)) & vec4<u32>(mask)));
}

// The 5-bit codes of each byte, a nibble with its fifth bit above it: bits 0-4 (low nibbles), bits 4-8 of bytes 0-2
// and byte 3's nibble alone (high nibbles: byte 3's fifth bit would be bit 32, so the bodies take it apart).
const FIVE_BITS: vec4<u32> = vec4<u32>(0x1Fu, 0x1F00u, 0x1F0000u, 0x1F000000u);
const FIVE_BITS_HIGH: vec4<u32> = vec4<u32>(0x1F0u, 0x1F000u, 0x1F00000u, 0xF0000000u);
