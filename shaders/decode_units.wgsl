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
