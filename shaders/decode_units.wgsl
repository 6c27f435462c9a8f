// decode_units: what the block decoders and product bodies share for units, codes as one pack built-in widens them
// (src/gpu/shaders.ts composes this before every decoder). On CPU adapters each shader op costs several SIMD
// instructions, so a word's codes come from one unpack4x8unorm: over 255 and, for signed or offset codes, biased
// (bench/README.md, "Codes through unpack4x8unorm").

// The low (shift 0) or high (shift 4) nibbles of the four bytes of a word, low byte first, over 255.
fn unit_nibbles(word: u32, shift: u32) -> vec4<f32> {
  return unpack4x8unorm((word >> shift) & 0x0F0F0F0Fu);
}

// Four 5-bit codes over 255: the nibbles of qs_word at shift with bits 4g .. 4g + 3 of qh as each byte's bit 4
// (the 4 consecutive bits spread one a byte by a multiply).
fn unit_q5(qs_word: u32, shift: u32, qh: u32, g: u32) -> vec4<f32> {
  let high = ((((qh >> (4u * g)) & 15u) * 0x00204081u) & 0x01010101u) << 4u;
  return unpack4x8unorm(((qs_word >> shift) & 0x0F0F0F0Fu) | high);
}

// Σ code·x of 4 rows (the components) from s = Σ unit·x, unit = (code + bias) / 255, and t = the x summed by
// component.
fn from_units(s: vec4<f32>, t: vec4<f32>, bias: f32) -> vec4<f32> {
  return 255.0 * s - bias * ((t.x + t.y) + (t.z + t.w));
}

// The low (l_r) and high (h_r) nibbles over 255 of one word of each of four rows: w[o0] .. w[o3] (the 4-row tile's
// step of the nibble bodies, shaders/matmul_q4_0.wgsl and matmul_q4_k.wgsl).
struct RowNibbles {
  l0: vec4<f32>,
  l1: vec4<f32>,
  l2: vec4<f32>,
  l3: vec4<f32>,
  h0: vec4<f32>,
  h1: vec4<f32>,
  h2: vec4<f32>,
  h3: vec4<f32>,
}

fn row_nibbles(o0: u32, o1: u32, o2: u32, o3: u32) -> RowNibbles {
  let a0 = w[o0];
  let a1 = w[o1];
  let a2 = w[o2];
  let a3 = w[o3];
  return RowNibbles(unit_nibbles(a0, 0u), unit_nibbles(a1, 0u), unit_nibbles(a2, 0u), unit_nibbles(a3, 0u),
    unit_nibbles(a0, 4u), unit_nibbles(a1, 4u), unit_nibbles(a2, 4u), unit_nibbles(a3, 4u));
}
