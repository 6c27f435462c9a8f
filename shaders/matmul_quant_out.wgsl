// matmul_quant_out: QUANT_OUT, a product that writes the next product's input (a fused norm's Y·g, SwiGLU's output)
// also writes it as that product's int8 activations, the blocks shaders/quantize_activations.wgsl would make of it
// (the same values, the same shaders/q8_codes.wgsl arithmetic: identical bits), so the next product needs no
// quantize dispatch. Part of the product skeleton (shaders/matmul.wgsl: its bindings, params and overrides),
// composed after q8_codes.wgsl in src/gpu/shaders.ts; quad_max and quad_sum come from the K_SPLIT reduction's part.
//
// A half block (16 consecutive outputs, one d) is the 4 rows of a quad of invocations 4j .. 4j + 3 (K_SPLIT 1; the
// product's first output column y_offset, n and the row width y_stride multiples of 32, so that no block is cut:
// src/gpu/kernels/products.ts quantizesOut). The quad's largest |value| and its codes' sum come from quad_max and
// quad_sum (subgroup operations on CPU adapters, whose subgroups are such quads: no barrier); the quad's first
// invocation writes its half of the tail.
//   8 xq_out  array<vec4<u32>>  the blocks, row t at vec4 t·y_stride/4 (the next product's k = y_stride), laid out
//                               as quantize_activations.wgsl's quads, or its pairs with QUANT_PAIRS.

@group(0) @binding(8) var<storage, read_write> xq_out: array<vec4<u32>>;

override QUANT_OUT: bool = false;
override QUANT_PAIRS: bool = false;

fn max_abs(v: vec4<f32>) -> f32 {
  let a = abs(v);
  return max(max(a.x, a.y), max(a.z, a.w));
}

// Row t's vec4 index of block b's word group g (quads: 0, 1 the codes, 2 the tail; pairs: 0..3, 4 the tail).
fn quant_at(t: u32, b: u32, g: u32) -> u32 {
  return t * (params.y_stride / 4u) + select(3u, 5u, QUANT_PAIRS) * b + g;
}

// One token's 4 codes q (outputs e..e + 3 of block b, e a multiple of 4), and where e is the first of its half, the
// half's d and Σq, into row t.
fn write_codes(t: u32, b: u32, e: u32, q: vec4<f32>, d: f32, sum: f32) {
  let h = e / 16u;
  if (QUANT_PAIRS) {
    let at = quant_at(t, b, (e & 15u) / 4u);
    if (h == 0u) {
      xq_out[at].x = pair_word(q.z, q.x);
      xq_out[at].z = pair_word(q.w, q.y);
    } else {
      xq_out[at].y = pair_word(q.z, q.x);
      xq_out[at].w = pair_word(q.w, q.y);
    }
  } else {
    xq_out[quant_at(t, b, h)][(e / 4u) & 3u] = pack_i8(q);
  }
  if ((e & 15u) == 0u) {
    let tail = quant_at(t, b, select(2u, 4u, QUANT_PAIRS));
    xq_out[tail][h] = bitcast<u32>(stored_scale(d));
    xq_out[tail][2u + h] = bitcast<u32>(i32(sum));
  }
}

// Quantizes the values v_t (rows row0 .. row0 + 3 of token t0 + t; 0 past n or m) of invocation lid. Called by every
// invocation of the workgroup (uniform control flow).
fn quantize_out(lid: u32, row0: u32, t0: u32, v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>) {
  let d = quad_max(vec4<f32>(max_abs(v0), max_abs(v1), max_abs(v2), max_abs(v3)), lid) / 127.0;
  let id = select(vec4<f32>(0.0), 1.0 / d, d > vec4<f32>(0.0));
  let q0 = code(v0 * id.x);
  let q1 = code(v1 * id.y);
  let q2 = code(v2 * id.z);
  let q3 = code(v3 * id.w);
  let ones = vec4<f32>(1.0);
  let sum = quad_sum(vec4<f32>(dot(q0, ones), dot(q1, ones), dot(q2, ones), dot(q3, ones)), lid);
  let column = params.y_offset + row0;
  let b = column / 32u;
  let e = column % 32u;
  if (row0 < params.n) {
    write_codes(t0, b, e, q0, d.x, sum.x);
    if (TILE_M > 1u && t0 + 1u < params.m) {
      write_codes(t0 + 1u, b, e, q1, d.y, sum.y);
    }
    if (TILE_M > 2u && t0 + 2u < params.m) {
      write_codes(t0 + 2u, b, e, q2, d.z, sum.z);
    }
    if (TILE_M > 3u && t0 + 3u < params.m) {
      write_codes(t0 + 3u, b, e, q3, d.w, sum.w);
    }
  }
}
