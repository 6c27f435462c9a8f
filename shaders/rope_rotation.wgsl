// rope_rotation: the rotation of RoPE pair p at a position, shared by rope.wgsl (prefill, and models whose heads the
// fused path does not take) and the ROPE paths of attention.wgsl and attention_decode.wgsl (decode: q and the new k
// rotated where attention reads them); src/gpu/shaders.ts puts it before each. Reads the kernel's
// `inv_freq: array<f32>` ([rot_dims / 2] inverse frequencies, src/model/rope-frequencies.ts) and, in rotations4,
// `params.mscale` (each of those kernels' Params has it).

// pi/2 in three parts (Cody-Waite): turns * PIO2_HIGH and turns * PIO2_MID are exact for |turns| < 2^15.
const PIO2_HIGH: f32 = 1.5703125;
const PIO2_MID: f32 = 4.837512969970703125e-4;
const PIO2_LOW: f32 = 7.54978995489188216e-8;
const TWO_OVER_PI: f32 = 0.6366197723675814;

// (cos, sin) of position * inv_freq[p], the angle rounded to f32 as llama.cpp forms it. Not WGSL's cos/sin:
// they need only be accurate to 2^-11 (SwiftShader's are off by ~1e-4); instead the angle is reduced to
// r in [-pi/4, pi/4] by quarter turns and sin r, cos r come from minimax polynomials (Cephes sinf/cosf),
// within a few f32 ulps.
fn rotation(position: u32, p: u32) -> vec2<f32> {
  let angle = f32(position) * inv_freq[p];
  let turns = round(angle * TWO_OVER_PI);
  let r = ((angle - turns * PIO2_HIGH) - turns * PIO2_MID) - turns * PIO2_LOW;
  let z = r * r;
  let sin_r = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
  let cos_r = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
  // angle = turns * pi/2 + r: rotate (cos r, sin r) by the quarter turns.
  switch (i32(turns) & 3) {
    case 1: {
      return vec2<f32>(-sin_r, cos_r);
    }
    case 2: {
      return vec2<f32>(-cos_r, -sin_r);
    }
    case 3: {
      return vec2<f32>(sin_r, -cos_r);
    }
    default: {
      return vec2<f32>(cos_r, sin_r);
    }
  }
}

// cos (x) and sin (y) of pairs p .. p + 3 at `position`, times mscale (the rotated values' magnitude, as rope.wgsl
// applies it).
fn rotations4(position: u32, p: u32) -> array<vec4<f32>, 2> {
  let r0 = rotation(position, p) * params.mscale;
  let r1 = rotation(position, p + 1u) * params.mscale;
  let r2 = rotation(position, p + 2u) * params.mscale;
  let r3 = rotation(position, p + 3u) * params.mscale;
  return array<vec4<f32>, 2>(vec4<f32>(r0.x, r1.x, r2.x, r3.x), vec4<f32>(r0.y, r1.y, r2.y, r3.y));
}
