// q8_codes: how a block of activations becomes llama.cpp's q8_0 codes and how the int8 products' layouts hold them
// (shared by shaders/quantize_activations.wgsl and the products that write their output quantized,
// shaders/matmul_quant_out.wgsl; composed in src/gpu/shaders.ts). Layouts: quantize_activations.wgsl's header.

// x·id rounded half away from zero (C's roundf, as quantize_row_q8_0_ref; WGSL's round() would take halves to even)
// and clamped to [-127, 127] (v - trunc(v) is exact in f32).
fn code(v: vec4<f32>) -> vec4<f32> {
  let t = trunc(v);
  let q = t + select(vec4<f32>(0.0), sign(v), abs(v - t) >= vec4<f32>(0.5));
  return clamp(q, vec4<f32>(-127.0), vec4<f32>(127.0));
}

// Four codes as four int8, the first in the low byte (the quads layout's word).
fn pack_i8(q: vec4<f32>) -> u32 {
  let v = bitcast<vec4<u32>>(vec4<i32>(q)) & vec4<u32>(255u);
  return v.x | (v.y << 8u) | (v.z << 16u) | (v.w << 24u);
}

// The pair word pair(h, l) = q_h + q_l·65536 (i32 bits) of two codes (the PAIRS layout's word).
fn pair_word(h: f32, l: f32) -> u32 {
  return bitcast<u32>(i32(h) + i32(l) * 65536);
}

// d as llama.cpp stores it (f16), as the products use it.
fn stored_scale(d: f32) -> f32 {
  return unpack2x16float(pack2x16float(vec2<f32>(d, 0.0))).x;
}
