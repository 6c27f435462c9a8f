// quantize_activations: the activations of a product as llama.cpp's q8_0 blocks (ggml quantize_row_q8_0), for the
// int8 product bodies (shaders/matmul_q8_0_int8.wgsl, matmul_q4_0_int8.wgsl; each has its layout): per 32 consecutive values of a row,
// d = max|x| / 127, q = x·(1/d) rounded half away from zero (C's roundf, as quantize_row_q8_0_ref; WGSL's round()
// would take halves to even) in [-127, 127] (0 for an all-zero block), d kept as llama.cpp keeps it (f16), and the
// block's Σq (Q4_0's -8 offset: Σ (w - 8)·q = Σ w·q - 8 Σq). test/support/cpu-forward.ts's q8 activations repeat it.
//
// Bindings (group 0):
//   0 x       array<vec4<f32>>  X [m, k] f32 row-major (k a multiple of 32).
//   1 xq      array<vec4<u32>>  out: row t at vec4 t·k/4 (the row's place in an f32 [m, k] buffer, so that the
//                               product skeleton's row offsets hold). Quads (for Q8_0's dot4I8Packed): block b at
//                               vec4 t·k/4 + 3b, two vec4 of packed int8 (value 4j + i in byte i of word j, low
//                               byte first), then the tail. PAIRS (for Q4_0's pair products): block b at vec4
//                               t·k/4 + 5b, four vec4 of pairs, vec4 j = (pair(4j+2, 4j), pair(18+4j, 16+4j),
//                               pair(4j+3, 4j+1), pair(19+4j, 17+4j)) with pair(h, l) = q_h + q_l·65536 as i32
//                               bits, then the tail. Tail: (bitcast<u32>(d), bitcast<u32>(Σq), 0, 0). A row takes
//                               3k/32 (5k/32) of its k/4 vec4.
//   2 params  uniform { k, m, norm_groups, eps }.
//   3 norm_sums array<f32>  NORMED: the sums of squares a NORM_OUT product wrote (shaders/matmul.wgsl), [m, norm_groups].
// Overrides: WORKGROUP_SIZE; PAIRS (the layout above); NORMED (X holds Y·g of a NORM_OUT product: each value is
//   first scaled by its token's 1/sqrt(Σ norm_sums / k + eps), shaders/norm_scale.wgsl's norm_scale, composed with
//   this file; so the blocks are those of RMSNorm(Y)·g).
// Dispatch: 1-D, ceil(m * k / 32 / WORKGROUP_SIZE) workgroups; one invocation per block.

struct Params {
  k: u32,
  m: u32,
  norm_groups: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> xq: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read> norm_sums: array<f32>;

override WORKGROUP_SIZE: u32 = 64;
override PAIRS: bool = false;
override NORMED: bool = false;

// Codes of elements 4j..4j+3 (a) and 16+4j..19+4j (b) as shaders/matmul_q4_0_int8.wgsl's pair words.
fn pairs(a: vec4<f32>, b: vec4<f32>) -> vec4<u32> {
  let high = vec4<i32>(vec4<f32>(a.z, b.z, a.w, b.w));
  let low = vec4<i32>(vec4<f32>(a.x, b.x, a.y, b.y));
  return bitcast<vec4<u32>>(high + low * 65536);
}

// Four values already rounded to integers in [-127, 127] as four int8, the first in the low byte.
fn pack_i8(q: vec4<f32>) -> u32 {
  let v = bitcast<vec4<u32>>(vec4<i32>(q)) & vec4<u32>(255u);
  return v.x | (v.y << 8u) | (v.z << 16u) | (v.w << 24u);
}

// x·id rounded half away from zero and clamped to [-127, 127] (v - trunc(v) is exact in f32).
fn code(v: vec4<f32>) -> vec4<f32> {
  let t = trunc(v);
  let q = t + select(vec4<f32>(0.0), sign(v), abs(v - t) >= vec4<f32>(0.5));
  return clamp(q, vec4<f32>(-127.0), vec4<f32>(127.0));
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
  var r = 1.0;
  if (NORMED) {
    r = norm_scale(t);
  }
  let v0 = x[src] * r;
  let v1 = x[src + 1u] * r;
  let v2 = x[src + 2u] * r;
  let v3 = x[src + 3u] * r;
  let v4 = x[src + 4u] * r;
  let v5 = x[src + 5u] * r;
  let v6 = x[src + 6u] * r;
  let v7 = x[src + 7u] * r;
  let a = max(max(max(abs(v0), abs(v1)), max(abs(v2), abs(v3))), max(max(abs(v4), abs(v5)), max(abs(v6), abs(v7))));
  let amax = max(max(a.x, a.y), max(a.z, a.w));
  let d = amax / 127.0;
  let id = select(0.0, 1.0 / d, d > 0.0);
  let q0 = code(v0 * id);
  let q1 = code(v1 * id);
  let q2 = code(v2 * id);
  let q3 = code(v3 * id);
  let q4 = code(v4 * id);
  let q5 = code(v5 * id);
  let q6 = code(v6 * id);
  let q7 = code(v7 * id);
  let s = (q0 + q1) + (q2 + q3) + (q4 + q5) + (q6 + q7);
  let sum = i32(s.x + s.y + s.z + s.w);
  // d as llama.cpp stores it (f16), used so in the products.
  let d16 = unpack2x16float(pack2x16float(vec2<f32>(d, 0.0))).x;
  let tail = vec4<u32>(bitcast<u32>(d16), bitcast<u32>(sum), 0u, 0u);
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
