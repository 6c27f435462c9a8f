// quantize_activations: the activations of a product as int8 blocks for the int8 product bodies
// (shaders/matmul_q8_0_int8.wgsl, matmul_q4_0_int8.wgsl; each has its layout): llama.cpp's q8_0 (ggml
// quantize_row_q8_0) with a scale per 16 values instead of 32: per half block d = max|x| / 127, q = x·(1/d) rounded
// half away from zero in [-127, 127] (0 for an all-zero half; shaders/q8_codes.wgsl, composed before this file), d
// kept as llama.cpp keeps it (f16), and the half's Σq (the offsets: Σ (w - 8)·q = Σ w·q - 8 Σq). Halves, not whole
// blocks, because a product writing its output quantized (QUANT_OUT) sees 16 outputs in a subgroup of CPU adapters
// and no more without a barrier (bench/README.md); finer than llama.cpp's blocks, never coarser. test/support/cpu-forward.ts's q8 activations repeat it. A product
// that writes the next product's input writes it so itself (shaders/matmul_quant_out.wgsl, QUANT_OUT); this kernel
// quantizes the others (attention's output, a standalone norm's). A fused norm's Y·g is quantized as it is: its
// product applies the token's 1/rms to the sums (shaders/matmul.wgsl NORMED), as the f32 products do.
//
// Bindings (group 0):
//   0 x       array<vec4<f32>>  X [m, k] f32 row-major (k a multiple of 32).
//   1 xq      array<vec4<u32>>  out: row t at vec4 t·k/4 (the row's place in an f32 [m, k] buffer, so that the
//                               product skeleton's row offsets hold). Quads (Q8_0's body): block b at vec4
//                               t·k/4 + 3b, two vec4 of packed int8 (value 4j + i in byte i of word j, low byte
//                               first), then the tail. PAIRS (the pair products of Q4_0): block b at vec4
//                               t·k/4 + 5b, four vec4 of pairs, vec4 j = (pair(4j+2, 4j), pair(18+4j, 16+4j),
//                               pair(4j+3, 4j+1), pair(19+4j, 17+4j)) with pair(h, l) = q_h + q_l·65536 as i32
//                               bits, then the tail. Tail: the halves' d (f32 bits) and Σq (i32 bits),
//                               (d_lo, d_hi, Σq_lo, Σq_hi), lo = values 0..15. A row takes 3k/32 (5k/32) of
//                               its k/4 vec4.
//   2 params  uniform { k, m }.
// Overrides: WORKGROUP_SIZE; PAIRS (the layout above).
// Dispatch: 1-D, ceil(m * k / 32 / WORKGROUP_SIZE) workgroups; one invocation per block.

struct Params {
  k: u32,
  m: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> xq: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;
override PAIRS: bool = false;

// Codes of elements 4j..4j+3 (a) and 16+4j..19+4j (b) as shaders/matmul_q4_0_int8.wgsl's pair words.
fn pairs(a: vec4<f32>, b: vec4<f32>) -> vec4<u32> {
  return vec4<u32>(pair_word(a.z, a.x), pair_word(b.z, b.x), pair_word(a.w, a.y), pair_word(b.w, b.y));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let row_blocks = params.k / 32u;
  let index = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (index >= params.m * row_blocks) {
    return;
  }
  let t = index / row_blocks;
  let b = index % row_blocks;
  let src = t * (params.k / 4u) + b * 8u;
  let v0 = x[src];
  let v1 = x[src + 1u];
  let v2 = x[src + 2u];
  let v3 = x[src + 3u];
  let v4 = x[src + 4u];
  let v5 = x[src + 5u];
  let v6 = x[src + 6u];
  let v7 = x[src + 7u];
  // Each half block (values 0..15: v0..v3, 16..31: v4..v7) has its own d.
  let a = max(max(abs(v0), abs(v1)), max(abs(v2), abs(v3)));
  let c = max(max(abs(v4), abs(v5)), max(abs(v6), abs(v7)));
  let d = vec2<f32>(max(max(a.x, a.y), max(a.z, a.w)), max(max(c.x, c.y), max(c.z, c.w))) / 127.0;
  let id = select(vec2<f32>(0.0), 1.0 / d, d > vec2<f32>(0.0));
  let q0 = code(v0 * id.x);
  let q1 = code(v1 * id.x);
  let q2 = code(v2 * id.x);
  let q3 = code(v3 * id.x);
  let q4 = code(v4 * id.y);
  let q5 = code(v5 * id.y);
  let q6 = code(v6 * id.y);
  let q7 = code(v7 * id.y);
  let lo = (q0 + q1) + (q2 + q3);
  let hi = (q4 + q5) + (q6 + q7);
  let tail = vec4<u32>(bitcast<u32>(stored_scale(d.x)), bitcast<u32>(stored_scale(d.y)),
    bitcast<u32>(i32(lo.x + lo.y + lo.z + lo.w)), bitcast<u32>(i32(hi.x + hi.y + hi.z + hi.w)));
  if (PAIRS) {
    let out = t * (params.k / 4u) + b * 5u;
    xq[out] = pairs(q0, q4);
    xq[out + 1u] = pairs(q1, q5);
    xq[out + 2u] = pairs(q2, q6);
    xq[out + 3u] = pairs(q3, q7);
    xq[out + 4u] = tail;
  } else {
    let out = t * (params.k / 4u) + b * 3u;
    xq[out] = vec4<u32>(pack_i8(q0), pack_i8(q1), pack_i8(q2), pack_i8(q3));
    xq[out + 1u] = vec4<u32>(pack_i8(q4), pack_i8(q5), pack_i8(q6), pack_i8(q7));
    xq[out + 2u] = tail;
  }
}
