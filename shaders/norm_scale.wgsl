// norm_scale: RMSNorm fused across a product boundary, the consumer's side: 1/sqrt(mean(y²) + eps) of a token from
// the sums of squares a NORM_OUT product wrote (shaders/matmul.wgsl), composed before matmul.wgsl (NORMED products)
// by src/gpu/shaders.ts. Reads the kernel's
// `norm_sums: array<f32>` ([m, norm_groups]) and `params` { k (y's width), m, norm_groups, eps }.

// The scale of `token` (clamped to the last: rows past m compute on it and are not written).
fn norm_scale(token: u32) -> f32 {
  let base = min(token, params.m - 1u) * params.norm_groups;
  var squares = 0.0;
  for (var g = 0u; g < params.norm_groups; g++) {
    squares += norm_sums[base + g];
  }
  return inverseSqrt(squares / f32(params.k) + params.eps);
}
