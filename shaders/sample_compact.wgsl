// sample_compact: per unit (one invocation each), its candidates (tokens of a candidate level, see
// sample_select.wgsl) as (index, w bits) pairs in index order from head[HEAD_OFFSETS + u] on; nothing on overflow.
// See sample_common.wgsl.
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
  let nb = bitcast<f32>(head[8]);
  let lo = bitcast<f32>(head[9]);
  let hi = bitcast<f32>(head[10]);
  let upper_end = head[15];
  let window_lo = head[14];
  let window_hi = head[3];
  var at = head[HEAD_OFFSETS + u];
  for (var i = unit_start(u); i < unit_end(u); i++) {
    let w = work[i];
    if (!excluded(w) && is_candidate(level_of(m, w, nb, lo, hi), upper_end, window_lo, window_hi)) {
      cand[2u * at] = i;
      cand[2u * at + 1u] = bitcast<u32>(w);
      at++;
    }
  }
}
