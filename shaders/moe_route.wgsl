// moe_route: the mixture-of-experts router's choice (gpt-oss, as llama.cpp's SOFTMAX_WEIGHT gating): for each token,
// the `used` largest of its `experts` router logits (ties to the lower expert id), in descending order, and the
// softmax over those chosen logits only. Its outputs feed shaders/matmul_experts.wgsl on the GPU.
//
// Bindings (group 0):
//   0 logits   array<f32>  [m, experts] (the router product, its bias added).
//   1 ids      array<u32>  [m, used]: chosen expert ids, largest logit first.
//   2 weights  array<f32>  [m, used]: softmax over the chosen logits.
//   3 params   uniform { m, experts, used } (used <= experts, used <= MAX_USED).
// Overrides: WORKGROUP_SIZE.
// Dispatch: 1-D, ceil(m / WORKGROUP_SIZE) workgroups; one invocation per token (experts are few: 32 or 128).

struct Params {
  m: u32,
  experts: u32,
  used: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read_write> ids: array<u32>;
@group(0) @binding(2) var<storage, read_write> weights: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;

const MAX_USED: u32 = 16u;
const NEG_LARGE: f32 = -3.0e38;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let t = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (t >= params.m) {
    return;
  }
  let base = t * params.experts;
  let out = t * params.used;
  var chosen_logit = array<f32, MAX_USED>();
  // Selection by rounds: round s takes the largest logit below the previous pick (ties: the next higher id).
  var prev_value = 3.4e38;
  var prev_id = 0xffffffffu;
  for (var s = 0u; s < params.used; s++) {
    var best = NEG_LARGE;
    var best_id = 0xffffffffu;
    for (var e = 0u; e < params.experts; e++) {
      let v = logits[base + e];
      // After the previous pick in (value descending, id ascending) order, and better than the best so far.
      let after_prev = v < prev_value || (v == prev_value && (prev_id == 0xffffffffu || e > prev_id));
      if (after_prev && (best_id == 0xffffffffu || v > best)) {
        best = v;
        best_id = e;
      }
    }
    ids[out + s] = best_id;
    chosen_logit[s] = best;
    prev_value = best;
    prev_id = best_id;
  }
  // Softmax over the chosen (the first is the largest).
  let top = chosen_logit[0];
  var total = 0.0;
  for (var s = 0u; s < params.used; s++) {
    total += exp(chosen_logit[s] - top);
  }
  for (var s = 0u; s < params.used; s++) {
    weights[out + s] = exp(chosen_logit[s] - top) / total;
  }
}
