// sample_partials: per unit of the processed logits (one invocation each), the best (w, index) (ties to the lower
// index) and sum exp(w - unit max) over tokens that are not excluded. See sample_common.wgsl.
// Bindings: 0 work array<vec4<f32>> [count / 4]; 1 part array<u32> [4 * units] (words 0..2 of each unit); 2 params.
// Dispatch: ceil(units / 64) workgroups.

@group(0) @binding(0) var<storage, read> work: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> part: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

// The unit's best so far (consider: ties to the lower index, as `beats`).
var<private> best_w: f32;
var<private> best_i: u32;

fn consider(w: f32, i: u32) {
  if (beats(w, i, best_w, best_i)) {
    best_w = w;
    best_i = i;
  }
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let u = gid.x;
  if (u >= params.units) {
    return;
  }
  best_w = 0.0;
  best_i = NONE;
  let groups = unit_groups(u);
  for (var g = groups.x; g < groups.y; g++) {
    let v = work[g];
    consider(v.x, 4u * g);
    consider(v.y, 4u * g + 1u);
    consider(v.z, 4u * g + 2u);
    consider(v.w, 4u * g + 3u);
  }
  var s = 0.0;
  if (best_i != NONE) {
    for (var g = groups.x; g < groups.y; g++) {
      let v = work[g];
      let e = exp(v - best_w);
      s += select(0.0, e.x, !excluded(v.x));
      s += select(0.0, e.y, !excluded(v.y));
      s += select(0.0, e.z, !excluded(v.z));
      s += select(0.0, e.w, !excluded(v.w));
    }
  }
  part[4u * u] = bitcast<u32>(best_w);
  part[4u * u + 1u] = best_i;
  part[4u * u + 2u] = bitcast<u32>(s);
}
