// sample_reduce: one workgroup folds the units' partial results into M, the best token and log sum exp(w - M)
// (head words 0..2) and starts the candidate rounds. See sample_common.wgsl.
// Bindings: 0 part array<u32> [4 * units]; 1 head array<u32>; 2 params. Dispatch: 1 workgroup (WG: 4 on CPU
// adapters, 256 on GPUs).

@group(0) @binding(0) var<storage, read_write> part: array<u32>;
@group(0) @binding(1) var<storage, read_write> head: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

override WG: u32 = 256u;

var<workgroup> red_w: array<f32, WG>;
var<workgroup> red_i: array<u32, WG>;
var<workgroup> best_shared: vec2<u32>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  // Each thread takes the units lid, lid + WG, ...; thread 0 folds the partials in order (`beats` is a total order).
  var best_w = 0.0;
  var best_i = NONE;
  for (var u = lid; u < params.units; u += WG) {
    let i = part[4u * u + 1u];
    let w = bitcast<f32>(part[4u * u]);
    if (beats(w, i, best_w, best_i)) {
      best_w = w;
      best_i = i;
    }
  }
  red_w[lid] = best_w;
  red_i[lid] = best_i;
  workgroupBarrier();
  if (lid == 0u) {
    var w = red_w[0];
    var i = red_i[0];
    for (var t = 1u; t < WG; t++) {
      if (beats(red_w[t], red_i[t], w, i)) {
        w = red_w[t];
        i = red_i[t];
      }
    }
    best_shared = vec2<u32>(bitcast<u32>(w), i);
  }
  let best = workgroupUniformLoad(&best_shared);
  let m = bitcast<f32>(best.x);
  var z = 0.0;
  if (best.y != NONE) {
    for (var u = lid; u < params.units; u += WG) {
      if (part[4u * u + 1u] != NONE) {
        z += bitcast<f32>(part[4u * u + 2u]) * exp(bitcast<f32>(part[4u * u]) - m);
      }
    }
  }
  red_w[lid] = z;
  workgroupBarrier();
  if (lid == 0u) {
    var total = 0.0;
    for (var t = 0u; t < WG; t++) {
      total += red_w[t];
    }
    head[0] = best.x;
    head[1] = best.y;
    head[2] = bitcast<u32>(log(total));
    head[5] = 0u;
    head[7] = 0u;
    head[18] = 0u;
    // The first round's mapping (nb, lo, hi): the square-root levels.
    head[11] = bitcast<u32>(0.0);
    head[12] = bitcast<u32>(0.0);
    head[13] = bitcast<u32>(-1.0);
  }
}
