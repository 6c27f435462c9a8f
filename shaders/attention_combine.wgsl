// attention_combine: merges the partial results of attention.wgsl run with splits > 1 (flash-decoding: the
// positions of each query split over several invocations) into the attention output.
//   For row r = (query t, head h) with split records (max_s, denominator_s, acc_s):
//   M = max_s max_s;  out[r, :] = Σ_s exp(max_s - M) acc_s / Σ_s exp(max_s - M) denominator_s.
//   (An empty split has max = -3e38 and denominator 0: its weight is 0.)
//
// Bindings (group 0):
//   0 partials array<vec4<f32>>  [rows, splits] records of head_dim/4 + 1 vec4: (max, denominator, 0, 0), acc.
//   1 out      array<vec4<f32>>  [rows, head_dim] (rows = m * n_heads: the layout attention.wgsl writes).
//   2 params   uniform { rows, head_dim }.
//   3 step_params uniform StepParams { m, pos0, splits }: the forward step's params (src/gpu/kernel-op.ts; the struct is
//              shaders/step_params.wgsl, which src/gpu/shaders.ts puts before this file); read here: splits.
// Overrides: WORKGROUP_SIZE.
// Dispatch: 1-D, ceil(rows * head_dim / 4 / WORKGROUP_SIZE) workgroups; one invocation per output vec4.

struct Params {
  rows: u32,
  head_dim: u32,
}

@group(0) @binding(0) var<storage, read> partials: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<uniform> step_params: StepParams;

override WORKGROUP_SIZE: u32 = 64;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let hd4 = params.head_dim / 4u;
  let index = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (index >= params.rows * hd4) {
    return;
  }
  let row = index / hd4;
  let i = index % hd4;
  let stride = hd4 + 1u;
  let first = row * step_params.splits * stride;
  var overall_max = partials[first].x;
  for (var s = 1u; s < step_params.splits; s++) {
    overall_max = max(overall_max, partials[first + s * stride].x);
  }
  var denominator = 0.0;
  var acc = vec4<f32>(0.0);
  for (var s = 0u; s < step_params.splits; s++) {
    let record = first + s * stride;
    let header = partials[record];
    let weight = exp(header.x - overall_max);
    denominator += weight * header.y;
    acc += weight * partials[record + 1u + i];
  }
  out[index] = acc / denominator;
}
