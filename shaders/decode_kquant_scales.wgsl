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
