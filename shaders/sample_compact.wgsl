// sample_compact: per unit (one invocation each), its candidates (tokens of level <= J, see sample_select.wgsl) as
// (index, w bits) pairs in index order from head[8 + u] on; nothing on overflow. See sample_common.wgsl.
// Bindings: 0 work array<f32>; 1 head array<u32>; 2 cand array<u32> [2 * cap]; 3 params.
// Dispatch: ceil(units / 64) workgroups.

@group(0) @binding(0) var<storage, read> work: array<f32>;
@group(0) @binding(1) var<storage, read_write> head: array<u32>;
@group(0) @binding(2) var<storage, read_write> cand: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let u = gid.x;
  if (u >= params.units || head[5] != 0u) {
    return;
  }
  let m = bitcast<f32>(head[0]);
  let level = head[3];
  let lo = bitcast<f32>(head[8]);
  let hi = bitcast<f32>(head[9]);
  var at = head[HEAD_OFFSETS + u];
  for (var i = unit_start(u); i < unit_end(u); i++) {
    let w = work[i];
    if (!excluded(w) && level_of(m, w, lo, hi) <= level) {
      cand[2u * at] = i;
      cand[2u * at + 1u] = bitcast<u32>(w);
      at++;
    }
  }
}
