// sample_reduce: one invocation folds the units' partial results into M, the best token and log sum exp(w - M)
// (head words 0..2) and starts the candidate rounds. See sample_common.wgsl.
// Bindings: 0 part array<u32> [4 * units]; 1 head array<u32>; 2 params. Dispatch: 1 workgroup of 1.

@group(0) @binding(0) var<storage, read_write> part: array<u32>;
@group(0) @binding(1) var<storage, read_write> head: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(1)
fn main() {
  var best_w = 0.0;
  var best_i = NONE;
  for (var u = 0u; u < params.units; u++) {
    let i = part[4u * u + 1u];
    let w = bitcast<f32>(part[4u * u]);
    if (beats(w, i, best_w, best_i)) {
      best_w = w;
      best_i = i;
    }
  }
  var z = 0.0;
  if (best_i != NONE) {
    for (var u = 0u; u < params.units; u++) {
      if (part[4u * u + 1u] != NONE) {
        z += bitcast<f32>(part[4u * u + 2u]) * exp(bitcast<f32>(part[4u * u]) - best_w);
      }
    }
  }
  head[0] = bitcast<u32>(best_w);
  head[1] = best_i;
  head[2] = bitcast<u32>(log(z));
  head[5] = 0u;
  head[7] = 0u;
  head[18] = 0u;
  // The first round's mapping (nb, lo, hi): the square-root levels.
  head[11] = bitcast<u32>(0.0);
  head[12] = bitcast<u32>(0.0);
  head[13] = bitcast<u32>(-1.0);
}
