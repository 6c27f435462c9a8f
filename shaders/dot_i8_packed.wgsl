// dot_i8_packed: the packed int8 dot products of the int8-activation product bodies (shaders/matmul_q8_0_int8.wgsl,
// matmul_q4_0_int8.wgsl). Needs WGSL's packed_4x8_integer_dot_product language feature (dot4I8Packed): composed
// only into the kernels of adapters that have it (src/gpu/shaders.ts).

// Four consecutive weight words w[o] .. w[o + 3].
fn words4(o: u32) -> vec4<u32> {
  return vec4<u32>(w[o], w[o + 1u], w[o + 2u], w[o + 3u]);
}

// Σ over 16 int8 pairs: a and b each hold 4 words of 4 packed int8.
fn dot_i8x16(a: vec4<u32>, b: vec4<u32>) -> i32 {
  return (dot4I8Packed(a.x, b.x) + dot4I8Packed(a.y, b.y)) + (dot4I8Packed(a.z, b.z) + dot4I8Packed(a.w, b.w));
}

// The int8 block of 32 activations whose vec4 index is q (shaders/quantize_activations.wgsl's layout): its two
// vec4 of packed codes and (d, Σq) as f32 and i32 bits.
struct ActivationBlock {
  lo: vec4<u32>,
  hi: vec4<u32>,
  d: f32,
  sum: i32,
}

fn activation_block(q: u32) -> ActivationBlock {
  let tail = bitcast<vec4<u32>>(x[q + 2u]);
  return ActivationBlock(bitcast<vec4<u32>>(x[q]), bitcast<vec4<u32>>(x[q + 1u]), bitcast<f32>(tail.x), bitcast<i32>(tail.y));
}
