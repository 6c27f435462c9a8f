// sample_partials: per unit of the processed logits (one invocation each), the best (w, index) (ties to the lower
// index) and sum exp(w - unit max) over tokens that are not excluded. See sample_common.wgsl.
// Bindings: 0 work array<f32> [count]; 1 part array<u32> [4 * units] (words 0..2 of each unit); 2 params.
// Dispatch: ceil(units / 64) workgroups.

@group(0) @binding(0) var<storage, read> work: array<f32>;
@group(0) @binding(1) var<storage, read_write> part: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let u = gid.x;
  if (u >= params.units) {
    return;
  }
  var best_w = 0.0;
  var best_i = NONE;
  for (var i = unit_start(u); i < unit_end(u); i++) {
    let w = work[i];
    if (beats(w, i, best_w, best_i)) {
      best_w = w;
      best_i = i;
    }
  }
  var s = 0.0;
  if (best_i != NONE) {
    for (var i = unit_start(u); i < unit_end(u); i++) {
      let w = work[i];
      if (!excluded(w)) {
        s += exp(w - best_w);
      }
    }
  }
  part[4u * u] = bitcast<u32>(best_w);
  part[4u * u + 1u] = best_i;
  part[4u * u + 2u] = bitcast<u32>(s);
}
