// decode_kquant_scales: the 12-byte scale field that Q4_K and Q5_K share (a helper composed before their decoders,
// shaders/decode_q4_k.wgsl and decode_q5_k.wgsl; src/common/weight-formats.ts names it in their rows).

// Sub-block s's (0..7) 6-bit scale and min as (scale, min), from the three scale words a, b, c (words 1..3 of
// the block: llama.cpp's get_scale_min_k4): bytes s & 3, the low 6 bits of a / b for s < 4, else c's nibbles
// with a's / b's top 2 bits above them. Scalar, from words read once: a table indexed by a runtime s costs CPU
// adapters a round trip through memory per entry.
fn kquant_scale_min(a: u32, b: u32, c: u32, s: u32) -> vec2<f32> {
  let k = 8u * (s & 3u);
  let ab = (a >> k) & 255u;
  let bb = (b >> k) & 255u;
  let cb = (c >> k) & 255u;
  let high = s >= 4u;
  return vec2<f32>(f32(select(ab & 63u, (cb & 15u) | ((ab >> 6u) << 4u), high)),
    f32(select(bb & 63u, (cb >> 4u) | ((bb >> 6u) << 4u), high)));
}

// (d * scale, -dmin * min) of sub-block s (0..7) of the block at word o: word 0 = f16 d | f16 dmin << 16, the
// scale bytes in words 1..3.
fn kquant_sub_affine(o: u32, s: u32) -> vec2<f32> {
  let dm = unpack2x16float(w[o]);
  let sm = kquant_scale_min(w[o + 1u], w[o + 2u], w[o + 3u], s);
  return vec2<f32>(dm.x * sm.x, -dm.y * sm.y);
}

// All eight sub-blocks' (scale, min) of a block, from its scale words a, b, c, each byte field masked where it lies
// and converted (placed_fields, PLACES: shaders/decode_units.wgsl): the same values as kquant_scale_min for s =
// 0..7, without its shifts (a WGSL shift runs lane by lane on CPU adapters: bench/README.md, "Shifts"). Fields
// holding a word's bit 31 come less their top value (the bit flipped first) and get it back as a constant.
// Components: sub-blocks 0..3 (scale_lo, min_lo) and 4..7 (scale_hi, min_hi); kquant_pick takes one out.
struct KquantScales {
  scale_lo: vec4<f32>,
  scale_hi: vec4<f32>,
  min_lo: vec4<f32>,
  min_hi: vec4<f32>,
}

fn kquant_scales(a: u32, b: u32, c: u32) -> KquantScales {
  let low6 = vec4<u32>(0x3Fu, 0x3F00u, 0x3F0000u, 0x3F000000u);
  let top2 = vec4<u32>(0xC0u, 0xC000u, 0xC00000u, 0xC0000000u);
  let low4 = vec4<u32>(0xFu, 0xF00u, 0xF0000u, 0xF000000u);
  let high4 = vec4<u32>(0xF0u, 0xF000u, 0xF00000u, 0xF0000000u);
  // (byte >> 6) << 4 is (byte & 0xC0) / 4; byte 3's field comes less 128 (less 32 after the / 4).
  let top = vec4<f32>(0.0, 0.0, 0.0, 32.0);
  let scale_hi = placed_fields(c, low4) * PLACES + placed_fields(a ^ 0x80000000u, top2) * (0.25 * PLACES) + top;
  let min_hi = placed_fields(c ^ 0x80000000u, high4) * (PLACES / 16.0) + vec4<f32>(0.0, 0.0, 0.0, 8.0)
    + placed_fields(b ^ 0x80000000u, top2) * (0.25 * PLACES) + top;
  return KquantScales(placed_fields(a, low6) * PLACES, scale_hi, placed_fields(b, low6) * PLACES, min_hi);
}

// Component s (0..7) of the sub-block values lo (0..3) and hi (4..7), by selects on s's bits.
fn kquant_pick(lo: vec4<f32>, hi: vec4<f32>, s: u32) -> f32 {
  let v = select(lo, hi, s >= 4u);
  let p = select(v.xy, v.zw, (s & 2u) != 0u);
  return select(p.x, p.y, (s & 1u) != 0u);
}
