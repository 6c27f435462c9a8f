// decode_f16_native: the native (`shader-f16`) form of shaders/decode_f16.wgsl's `halves`, the one function that
// differs between the two paths; src/gpu/shaders.ts (nativeF16Kernel) swaps it in and puts `enable f16;` first. The word
// is read as two f16 values (bitcast, no bit arithmetic) and widened to f32: the products accumulate in f32, so the
// results equal the packed path's bit for bit (both widen exactly).

// The two weights of a word, the low half first (native path).
fn halves(word: u32) -> vec2<f32> {
  return vec2<f32>(bitcast<vec2<f16>>(word));
}
