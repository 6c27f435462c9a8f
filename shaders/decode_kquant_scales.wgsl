// decode_kquant_scales: the 12-byte scale field that Q4_K and Q5_K share (a helper composed before their decoders,
// shaders/decode_q4_k.wgsl and decode_q5_k.wgsl; src/common/weight-formats.ts names it in their rows).

// The 8 six-bit (scale, min) pairs of a block from its 12 scale bytes (words a, b, c): columns 0 and 1 are the
// scales of sub-blocks 0..3 and 4..7, columns 2 and 3 their mins. Sub-blocks j < 4 use the low 6 bits of bytes
// j (scale) and j + 4 (min); j >= 4 the nibbles of byte j + 4 with the top 2 bits from bytes j - 4 and j.
fn scales_mins(a: u32, b: u32, c: u32) -> mat4x4<f32> {
  let shifts = vec4<u32>(0u, 8u, 16u, 24u);
  let bytes_a = (vec4<u32>(a) >> shifts) & vec4<u32>(255u);
  let bytes_b = (vec4<u32>(b) >> shifts) & vec4<u32>(255u);
  let bytes_c = (vec4<u32>(c) >> shifts) & vec4<u32>(255u);
  let six = vec4<u32>(63u);
  let top = vec4<u32>(6u);
  return mat4x4<f32>(
    vec4<f32>(bytes_a & six),
    vec4<f32>((bytes_c & vec4<u32>(15u)) | ((bytes_a >> top) << vec4<u32>(4u))),
    vec4<f32>(bytes_b & six),
    vec4<f32>((bytes_c >> vec4<u32>(4u)) | ((bytes_b >> top) << vec4<u32>(4u))),
  );
}

// (d * scale, -dmin * min) of sub-block s (0..7) of the block at word o: word 0 = f16 d | f16 dmin << 16, the
// scale bytes in words 1..3.
fn kquant_sub_affine(o: u32, s: u32) -> vec2<f32> {
  let dm = unpack2x16float(w[o]);
  let sm = scales_mins(w[o + 1u], w[o + 2u], w[o + 3u]);
  return vec2<f32>(dm.x * sm[s >> 2u][s & 3u], -dm.y * sm[2u + (s >> 2u)][s & 3u]);
}
