// matmul_affine_block: the product block body built on any block decoder (src/common/weight-formats.ts lists
// which formats use it): for each sub-block s of SUB_ELEMENTS weights sharing (scale, offset) = sub_affine(o, s),
// Σ unit·x and (where an offset can be non-zero) Σ x over its groups, then acc += scale·Σ unit·x + offset·Σ x, so
// the scales are applied once per sub-block and per row. The decoder's units (group_units: code = UNIT_SCALE·unit -
// UNIT_BIAS) are its codes in the form it widens fastest, for most formats one unpack4x8unorm a word; UNIT_SCALE
// and UNIT_BIAS fold into the sub-block's scale and offset. Composed (src/gpu/shaders.ts) with the decoder, the K_SPLIT reduction
// and the skeleton shaders/matmul.wgsl.

// Σ x is needed where a sub-block's offset can be non-zero: the decoder's own or its units' bias.
const SUMS_X: bool = HAS_OFFSET || UNIT_BIAS != 0.0;

// GATED: the up rows in a pass of their own (shaders/matmul.wgsl).
const UP_OWN_PASS: bool = true;

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  let groups = SUB_ELEMENTS / 4u;
  let ones = vec4<f32>(1.0);
  for (var s = 0u; s < BLOCK_ELEMENTS / SUB_ELEMENTS; s++) {
    let a0 = sub_affine(o0, s);
    let a1 = sub_affine(o1, s);
    let a2 = sub_affine(o2, s);
    let a3 = sub_affine(o3, s);
    // weight = scale·code + offset = (scale·UNIT_SCALE)·unit + (offset - scale·UNIT_BIAS).
    let code_scale = vec4<f32>(a0.x, a1.x, a2.x, a3.x);
    let scale = code_scale * UNIT_SCALE;
    let offset = vec4<f32>(a0.y, a1.y, a2.y, a3.y) - code_scale * UNIT_BIAS;
    // q_t: Σ code·x of token t (rows in the components); sx: Σ x of tokens 0..3 (in the components).
    var q0 = vec4<f32>(0.0);
    var q1 = vec4<f32>(0.0);
    var q2 = vec4<f32>(0.0);
    var q3 = vec4<f32>(0.0);
    var sx = vec4<f32>(0.0);
    for (var i = 0u; i < groups; i++) {
      let g = s * groups + i;
      let c0 = group_units(o0, g);
      let c1 = group_units(o1, g);
      let c2 = group_units(o2, g);
      let c3 = group_units(o3, g);
      let xi = xb + g;
      let v0 = x[x0 + xi];
      q0 += dot4(c0, c1, c2, c3, v0);
      if (SUMS_X) {
        sx.x += dot(v0, ones);
      }
      if (TILE_M > 1u) {
        let v1 = x[x1 + xi];
        q1 += dot4(c0, c1, c2, c3, v1);
        if (SUMS_X) {
          sx.y += dot(v1, ones);
        }
      }
      if (TILE_M > 2u) {
        let v2 = x[x2 + xi];
        q2 += dot4(c0, c1, c2, c3, v2);
        if (SUMS_X) {
          sx.z += dot(v2, ones);
        }
      }
      if (TILE_M > 3u) {
        let v3 = x[x3 + xi];
        q3 += dot4(c0, c1, c2, c3, v3);
        if (SUMS_X) {
          sx.w += dot(v3, ones);
        }
      }
    }
    if (SUMS_X) {
      *acc0 += scale * q0 + offset * sx.x;
      if (TILE_M > 1u) {
        *acc1 += scale * q1 + offset * sx.y;
        *acc2 += scale * q2 + offset * sx.z;
        *acc3 += scale * q3 + offset * sx.w;
      }
    } else {
      *acc0 += scale * q0;
      if (TILE_M > 1u) {
        *acc1 += scale * q1;
        *acc2 += scale * q2;
        *acc3 += scale * q3;
      }
    }
  }
}
