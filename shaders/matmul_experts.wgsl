// matmul_experts: the mixture-of-experts products (gpt-oss): the skeleton of shaders/matmul.wgsl for weights held as
// experts [experts, n rows, k], where each token uses the `used` experts that shaders/moe_route.wgsl chose for it (ids
// and routing weights on the GPU: nothing comes back to the CPU mid-forward). Only the chosen experts' rows are read.
// Composed like every product (src/gpu/shaders.ts): the format's block decoder, its block body, the K_SPLIT reduction,
// then this file, whose block loop calls the body for one token at a time (TILE_M = 1).
//
// Two modes (override WEIGHTED):
//   GATED (WEIGHTED = false): w holds, for this part's experts, the gate rows of each expert then the up rows (the
//     weight loader stacks ffn_gate_exps and ffn_up_exps, as the dense gate/up). For each (token t, slot s) with
//     expert e = ids[t * used + s]: y[(t * used + s), row] = swiglu_oai(gate_e·x_t + gate_bias[e, row],
//     up_e·x_t + up_bias[e, row]), swiglu_oai(g, u) = min(g, LIMIT) · sigmoid(ALPHA · min(g, LIMIT)) ·
//     (clamp(u, -LIMIT, LIMIT) + 1) (llama.cpp's swiglu_oai, alpha 1.702, limit 7).
//   WEIGHTED: the down products summed with the routing weights into the residual: y[t, row] +=
//     Σ_s route_w[t * used + s] · (W_e·x_(t * used + s) + bias[e, row]) over the slots whose expert is in this part.
// A tensor split over several buffers holds whole experts per part ([expert_start, expert_start + expert_count));
// each part is one dispatch, and slots whose expert lies in another part are skipped (GATED: left for that part's
// dispatch to write; WEIGHTED: added by it).
//
// Bindings (group 0):
//   0 w        array<u32>  this part's experts, each [n rows, k / BLOCK_ELEMENTS blocks] (GATED: all gate experts,
//                          then all up experts of the part).
//   1 x        array<vec4<f32>>  GATED: X [m, k]; WEIGHTED: the activations [m * used, k].
//   2 bias     array<f32>  GATED: gate biases [experts, n] then up biases [experts, n] (2 * experts * n);
//                          WEIGHTED: [experts, n]. Whole tensors (every expert), indexed by the expert id.
//   3 y        array<f32>  GATED: [m * used, n]; WEIGHTED: [m, n] (read and written: the residual).
//   4 params   uniform { n, k, m, used, expert_start, expert_count, experts }.
//   5 ids      array<u32>  [m, used]: the chosen experts of each token.
//   6 route_w  array<f32>  [m, used]: their weights (read when WEIGHTED).
// Overrides: WORKGROUP_SIZE, K_SPLIT (as matmul.wgsl), WEIGHTED, ALPHA, LIMIT.
// Dispatch: 1-D, ceil(n / (4 * WORKGROUP_SIZE / K_SPLIT)) * (GATED: m * used; WEIGHTED: m) workgroups; a workgroup
//   has one (token, slot) (GATED) or one token (WEIGHTED), so its expert id is uniform across it.

struct Params {
  n: u32,
  k: u32,
  m: u32,
  used: u32,
  expert_start: u32,
  expert_count: u32,
  experts: u32,
}

@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> ids: array<u32>;
@group(0) @binding(6) var<storage, read> route_w: array<f32>;

override WORKGROUP_SIZE: u32 = 64;
override K_SPLIT: u32 = 1;
override WEIGHTED: bool = false;
override ALPHA: f32 = 1.702;
override LIMIT: f32 = 7.0;
// The block bodies' token tile: one token per invocation here.
const TILE_M: u32 = 1u;

var<workgroup> chosen: u32;

fn swiglu_oai(gate: vec4<f32>, up: vec4<f32>) -> vec4<f32> {
  let g = min(gate, vec4<f32>(LIMIT));
  let u = clamp(up, vec4<f32>(-LIMIT), vec4<f32>(LIMIT));
  return g / (1.0 + exp(-ALPHA * g)) * (u + 1.0);
}

// The expert of slot `slot` (ids index), uniform across the workgroup; params.experts when it is not in this part.
fn expert_of(slot: u32, lid: u32) -> u32 {
  // Every invocation has read the previous slot's id before it is overwritten (called in uniform control flow).
  workgroupBarrier();
  if (lid == 0u) {
    chosen = ids[slot];
  }
  let e = workgroupUniformLoad(&chosen);
  if (e < params.expert_start || e >= params.expert_start + params.expert_count) {
    return params.experts;
  }
  return e;
}

// Σ over blocks of this lane of rows row0..row0+3 (clamped to n - 1) of the expert whose rows start at word
// `base`, against x row `x_row`.
fn rows_dot(base: u32, row0: u32, x_row: u32, lane: u32) -> vec4<f32> {
  let blocks = params.k / BLOCK_ELEMENTS;
  let last = params.n - 1u;
  let w0 = base + min(row0, last) * blocks * BLOCK_WORDS;
  let w1 = base + min(row0 + 1u, last) * blocks * BLOCK_WORDS;
  let w2 = base + min(row0 + 2u, last) * blocks * BLOCK_WORDS;
  let w3 = base + min(row0 + 3u, last) * blocks * BLOCK_WORDS;
  let x0 = x_row * (params.k / 4u);
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  for (var b = lane; b < blocks; b += K_SPLIT) {
    let o = b * BLOCK_WORDS;
    accumulate_block(w0 + o, w1 + o, w2 + o, w3 + o, b, x0, x0, x0, x0, &acc0, &acc1, &acc2, &acc3);
  }
  return acc0;
}

fn bias4(at: u32, row0: u32) -> vec4<f32> {
  let last = params.n - 1u;
  return vec4<f32>(bias[at + min(row0, last)], bias[at + min(row0 + 1u, last)], bias[at + min(row0 + 2u, last)], bias[at + min(row0 + 3u, last)]);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = params.n;
  let rows_per_group = 4u * (WORKGROUP_SIZE / K_SPLIT);
  let row_groups = (n + rows_per_group - 1u) / rows_per_group;
  let wg = wid.x + wid.y * nwg.x;
  let item = wg / row_groups; // GATED: token * used + slot; WEIGHTED: the token
  let items = select(params.m * params.used, params.m, WEIGHTED);
  if (item >= items) {
    return;
  }
  let lane = lid % K_SPLIT;
  let row0 = (wg % row_groups) * rows_per_group + (lid / K_SPLIT) * 4u;
  let expert_words = n * (params.k / BLOCK_ELEMENTS) * BLOCK_WORDS;
  var result = vec4<f32>(0.0);
  var write = false;
  if (!WEIGHTED) {
    let e = expert_of(item, lid);
    if (e == params.experts) {
      return;
    }
    let local = e - params.expert_start;
    let t = item / params.used;
    var gate = rows_dot(local * expert_words, row0, t, lane);
    var up = rows_dot((params.expert_count + local) * expert_words, row0, t, lane);
    if (K_SPLIT > 1u) {
      gate = sum_over_split(gate, lid, lane);
      up = sum_over_split(up, lid, lane);
    }
    result = swiglu_oai(gate + bias4(e * n, row0), up + bias4((params.experts + e) * n, row0));
    write = true;
  } else {
    for (var s = 0u; s < params.used; s++) {
      let slot = item * params.used + s;
      let e = expert_of(slot, lid);
      if (e == params.experts) {
        continue;
      }
      var value = rows_dot((e - params.expert_start) * expert_words, row0, slot, lane);
      if (K_SPLIT > 1u) {
        value = sum_over_split(value, lid, lane);
      }
      result += route_w[slot] * (value + bias4(e * n, row0));
      write = true;
    }
  }
  if (lane != 0u || !write) {
    return;
  }
  let out_row = item * n;
  for (var i = 0u; i < 4u; i++) {
    let row = row0 + i;
    if (row < n) {
      if (WEIGHTED) {
        y[out_row + row] += result[i];
      } else {
        y[out_row + row] = result[i];
      }
    }
  }
}
