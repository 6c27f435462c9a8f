// matmul_iq4: the tuned block body of the two IQ4 formats, IQ4_NL and IQ4_XS (each qs word read once for its low and
// high nibbles, each sub-block's scale applied once per row). The kernel is the block decoder
// shaders/decode_iq4_nl.wgsl or decode_iq4_xs.wgsl (layout, BLOCK_WORDS, IQ4_QS_WORD, sub_affine; after
// shaders/decode_units.wgsl and decode_iq4_values.wgsl: row_nibbles, PLACES, iq4_of), this file, the K_SPLIT
// reduction and the shared skeleton shaders/matmul.wgsl (composed in src/gpu/shaders.ts): read that header for the
// bindings, overrides and dispatch.
// The nibbles come as row_nibbles places them (a mask and a conversion each, the top one less 8), the places are
// taken out (one multiply) and each nibble becomes its codebook value by iq4_of's polynomial: no shifts and no table
// (on CPU adapters a WGSL shift runs lane by lane and an indexed constant goes through memory: bench/README.md).

// A sub-block's codebook values from row_nibbles' placed nibbles: the low ones (places 2^0 .. 2^24) and the high
// ones (2^4 .. 2^28, the top one less 8).
fn iq4_low(placed: vec4<f32>) -> vec4<f32> {
  return iq4_of(placed * PLACES);
}

fn iq4_high(placed: vec4<f32>) -> vec4<f32> {
  return iq4_of(placed * HIGH_PLACES + vec4<f32>(0.0, 0.0, 0.0, 8.0));
}

// GATED: the up rows in a pass of their own (shaders/matmul.wgsl).
const UP_OWN_PASS: bool = true;

// See shaders/matmul.wgsl: adds this block's products for rows o0..o3, tokens x0..x3 to *acc0..*acc3.
fn accumulate_block(o0: u32, o1: u32, o2: u32, o3: u32, b: u32, x0: u32, x1: u32, x2: u32, x3: u32,
    acc0: ptr<function, vec4<f32>>, acc1: ptr<function, vec4<f32>>, acc2: ptr<function, vec4<f32>>,
    acc3: ptr<function, vec4<f32>>) {
  let xb = b * (BLOCK_ELEMENTS / 4u);
  for (var s = 0u; s < BLOCK_ELEMENTS / 32u; s++) {
    // Sub-block s: weights 32s + 4i + j in word IQ4_QS_WORD + 4s + i's low nibbles, 32s + 16 + 4i + j in its high.
    let scale = vec4<f32>(sub_affine(o0, s).x, sub_affine(o1, s).x, sub_affine(o2, s).x, sub_affine(o3, s).x);
    var q0 = vec4<f32>(0.0);
    var q1 = vec4<f32>(0.0);
    var q2 = vec4<f32>(0.0);
    var q3 = vec4<f32>(0.0);
    for (var i = 0u; i < 4u; i++) {
      let qi = IQ4_QS_WORD + 4u * s + i;
      let n = row_nibbles(o0 + qi, o1 + qi, o2 + qi, o3 + qi);
      let l0 = iq4_low(n.l0);
      let l1 = iq4_low(n.l1);
      let l2 = iq4_low(n.l2);
      let l3 = iq4_low(n.l3);
      let h0 = iq4_high(n.h0);
      let h1 = iq4_high(n.h1);
      let h2 = iq4_high(n.h2);
      let h3 = iq4_high(n.h3);
      let xi = xb + 8u * s + i;
      q0 += dot4(l0, l1, l2, l3, x[x0 + xi]) + dot4(h0, h1, h2, h3, x[x0 + xi + 4u]);
      if (TILE_M > 1u) {
        q1 += dot4(l0, l1, l2, l3, x[x1 + xi]) + dot4(h0, h1, h2, h3, x[x1 + xi + 4u]);
      }
      if (TILE_M > 2u) {
        q2 += dot4(l0, l1, l2, l3, x[x2 + xi]) + dot4(h0, h1, h2, h3, x[x2 + xi + 4u]);
      }
      if (TILE_M > 3u) {
        q3 += dot4(l0, l1, l2, l3, x[x3 + xi]) + dot4(h0, h1, h2, h3, x[x3 + xi + 4u]);
      }
    }
    *acc0 += scale * q0;
    if (TILE_M > 1u) {
      *acc1 += scale * q1;
      *acc2 += scale * q2;
      *acc3 += scale * q3;
    }
  }
}
