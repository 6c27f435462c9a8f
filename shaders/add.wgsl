// add: a[i] += b[i % period] for i < n. The residual add (period = n) and a bias broadcast over the rows of a
// [rows, period] activation (period = the row length: Qwen2 q/k/v biases after an f32 product).
//
// Bindings (group 0):
//   0 b       array<f32>  [period].
//   1 a       array<f32>  [n], updated in place.
//   2 params  uniform { n, period }.
// Overrides: WORKGROUP_SIZE.
// Dispatch: 1-D, ceil(n / WORKGROUP_SIZE) workgroups; one invocation per element.

struct Params {
  n: u32,
  period: u32,
}

@group(0) @binding(0) var<storage, read> b: array<f32>;
@group(0) @binding(1) var<storage, read_write> a: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let index = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (index >= params.n) {
    return;
  }
  a[index] += b[index % params.period];
}
