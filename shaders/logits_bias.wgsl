// logits_bias: adds a sparse logit bias to the processed logits (after logits_process.wgsl): for each pair j,
// work[ids[j]] += values[j], unless that token is excluded (masked: LOWEST, -inf or NaN). Token ids are distinct.
//
// Bindings (group 0):
//   0 pairs   array<u32>  [2 * pair_count] (token id, bias as f32 bits)
//   1 work    array<f32>  [count] processed logits, updated in place
//   2 params  uniform { pair_count, count }
// Dispatch: ceil(pair_count / 64) workgroups.

struct Params {
  pair_count: u32,
  count: u32,
}

@group(0) @binding(0) var<storage, read> pairs: array<u32>;
@group(0) @binding(1) var<storage, read_write> work: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

const LOWEST: f32 = -3.4028234663852886e38;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let j = gid.x;
  if (j >= params.pair_count) {
    return;
  }
  let id = pairs[2u * j];
  if (id < params.count) {
    let w = work[id];
    if (w > LOWEST) {
      work[id] = w + bitcast<f32>(pairs[2u * j + 1u]);
    }
  }
}
