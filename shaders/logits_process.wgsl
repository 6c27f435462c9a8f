// logits_process: the elementwise part of sampling, over the vocabulary, before the sampler:
//   w[i] = logits[i], then for a token seen counts[i] > 0 times: the repetition penalty (w / r when w > 0, else
//   w * r), then `- frequency * counts[i] - presence`; then the sparse logit bias (logits_bias.wgsl, a
//   separate dispatch after this one); tokens whose bit is 0 in the constraint mask become LOWEST (the most
//   negative f32; the sampler treats it, -inf and NaN as excluded).
// Temperature, top-k/top-p/min-p and the draw happen in the sample_*.wgsl kernels (sample_common.wgsl).
//
// Bindings (group 0):
//   0 logits  array<f32>  [count] (a logits row, bound at its offset)
//   1 counts  array<u32>  [count] how often each token was generated (penalties); ignored when has_penalties = 0
//   2 mask    array<u32>  [ceil(count / 32)] bit (i & 31) of word (i >> 5) = token i allowed; ignored when has_mask = 0
//   3 work    array<f32>  [count] output: processed logits
//   4 params  uniform
// Dispatch: ceil(count / WORKGROUP_SIZE) workgroups, 1-D (the x/y split is fine).

struct Params {
  count: u32,
  has_mask: u32,
  has_penalties: u32,
  _pad: u32,
  repetition_penalty: f32,
  frequency_penalty: f32,
  presence_penalty: f32,
  _pad2: f32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> counts: array<u32>;
@group(0) @binding(2) var<storage, read> mask: array<u32>;
@group(0) @binding(3) var<storage, read_write> work: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 256;
const LOWEST: f32 = -3.4028234663852886e38;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (i >= params.count) {
    return;
  }
  var w = logits[i];
  if (params.has_penalties != 0u) {
    let seen = counts[i];
    if (seen > 0u) {
      let r = params.repetition_penalty;
      w = select(w * r, w / r, w > 0.0);
      w = w - params.frequency_penalty * f32(seen) - params.presence_penalty;
    }
  }
  if (params.has_mask != 0u && (mask[i >> 5u] & (1u << (i & 31u))) == 0u) {
    w = LOWEST;
  }
  work[i] = w;
}
