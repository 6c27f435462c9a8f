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
  // (byte >> 6) << 4 is (byte & 0xC0) / 4; byte 3's field comes less 128 (less 32 after the / 4).
  let top = vec4<f32>(0.0, 0.0, 0.0, 32.0);
  let scale_hi = placed_fields(c, LOW_NIBBLES) * PLACES + placed_fields(a ^ 0x80000000u, BITS_67) * (0.25 * PLACES) + top;
  let min_hi = placed_fields(c ^ 0x80000000u, HIGH_NIBBLES) * (PLACES / 16.0) + vec4<f32>(0.0, 0.0, 0.0, 8.0)
    + placed_fields(b ^ 0x80000000u, BITS_67) * (0.25 * PLACES) + top;
  return KquantScales(placed_fields(a, low6) * PLACES, scale_hi, placed_fields(b, low6) * PLACES, min_hi);
}

// Component s (0..7) of the sub-block values lo (0..3) and hi (4..7), by selects on s's bits.
fn kquant_pick(lo: vec4<f32>, hi: vec4<f32>, s: u32) -> f32 {
  let v = select(lo, hi, s >= 4u);
  let p = select(v.xy, v.zw, (s & 2u) != 0u);
  return select(p.x, p.y, (s & 1u) != 0u);
}

// Four rows' blocks as the tuned bodies (shaders/matmul_q4_k.wgsl, matmul_q5_k.wgsl) read them, each decoded once:
// d and dmin (rows in the components) and each row's eight (scale, min).
struct KquantRows {
  d: vec4<f32>,
  dmin: vec4<f32>,
  k0: KquantScales,
  k1: KquantScales,
  k2: KquantScales,
  k3: KquantScales,
}

fn kquant_rows(o0: u32, o1: u32, o2: u32, o3: u32) -> KquantRows {
  let dm0 = unpack2x16float(w[o0]);
  let dm1 = unpack2x16float(w[o1]);
  let dm2 = unpack2x16float(w[o2]);
  let dm3 = unpack2x16float(w[o3]);
  return KquantRows(vec4<f32>(dm0.x, dm1.x, dm2.x, dm3.x), vec4<f32>(dm0.y, dm1.y, dm2.y, dm3.y),
    kquant_scales(w[o0 + 1u], w[o0 + 2u], w[o0 + 3u]), kquant_scales(w[o1 + 1u], w[o1 + 2u], w[o1 + 3u]),
    kquant_scales(w[o2 + 1u], w[o2 + 2u], w[o2 + 3u]), kquant_scales(w[o3 + 1u], w[o3 + 2u], w[o3 + 3u]));
}

// Chunk c of 64 weights: sub-blocks 2c (low) and 2c + 1 (high), d·scale and dmin·min of the four rows.
struct KquantChunk {
  low_scale: vec4<f32>,
  high_scale: vec4<f32>,
  low_min: vec4<f32>,
  high_min: vec4<f32>,
}

fn kquant_chunk(r: KquantRows, c: u32) -> KquantChunk {
  let sl = 2u * c;
  let sh = sl + 1u;
  let scale_l = vec4<f32>(kquant_pick(r.k0.scale_lo, r.k0.scale_hi, sl), kquant_pick(r.k1.scale_lo, r.k1.scale_hi, sl),
    kquant_pick(r.k2.scale_lo, r.k2.scale_hi, sl), kquant_pick(r.k3.scale_lo, r.k3.scale_hi, sl));
  let scale_h = vec4<f32>(kquant_pick(r.k0.scale_lo, r.k0.scale_hi, sh), kquant_pick(r.k1.scale_lo, r.k1.scale_hi, sh),
    kquant_pick(r.k2.scale_lo, r.k2.scale_hi, sh), kquant_pick(r.k3.scale_lo, r.k3.scale_hi, sh));
  let min_l = vec4<f32>(kquant_pick(r.k0.min_lo, r.k0.min_hi, sl), kquant_pick(r.k1.min_lo, r.k1.min_hi, sl),
    kquant_pick(r.k2.min_lo, r.k2.min_hi, sl), kquant_pick(r.k3.min_lo, r.k3.min_hi, sl));
  let min_h = vec4<f32>(kquant_pick(r.k0.min_lo, r.k0.min_hi, sh), kquant_pick(r.k1.min_lo, r.k1.min_hi, sh),
    kquant_pick(r.k2.min_lo, r.k2.min_hi, sh), kquant_pick(r.k3.min_lo, r.k3.min_hi, sh));
  return KquantChunk(r.d * scale_l, r.d * scale_h, r.dmin * min_l, r.dmin * min_h);
}
