// sample_compact: per unit (one invocation each), its candidates (tokens of a candidate level under head[8..10],
// see sample_select.wgsl) as (index, w bits) pairs in index order from head[HEAD_OFFSETS + u] on. Two uses:
//   TO_STAGE (after the first round): the unit's logits -> the stage (room for the whole vocabulary), and the
//     unit's stretch of it [start, end) into head[HEAD_OFFSETS + units + 2u ..]; the refining rounds walk only it;
//   else (after the last round): the unit's stretch of the stage -> the candidates (nothing on overflow).
// See sample_common.wgsl.
// Bindings: 0 work array<vec4<f32>>; 1 head array<u32>; 2 src array<u32> (the stage; unused with TO_STAGE); 3 dst
// array<u32> (the stage with TO_STAGE, else the candidates [2 * cap]); 4 params.
// Dispatch: ceil(units / 64) workgroups.

@group(0) @binding(0) var<storage, read> work: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> head: array<u32>;
@group(0) @binding(2) var<storage, read> src: array<u32>;
@group(0) @binding(3) var<storage, read_write> dst: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;

override TO_STAGE: bool = false;

// Where this invocation's next candidate goes; the first round's candidate depths (upper, top, bottom).
var<private> at: u32;
var<private> bounds: vec3<f32>;
var<private> all_upper: bool;
var<private> open_window: bool;

// Token i with logit w to the stage if it is a candidate of the first round.
fn stage_one(w: f32, i: u32, m: f32) {
  let d = depth(m, w);
  if (!excluded(w) && (all_upper || d < bounds.x || (d >= bounds.y && (open_window || d < bounds.z)))) {
    dst[2u * at] = i;
    dst[2u * at + 1u] = bitcast<u32>(w);
    at++;
  }
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let u = gid.x;
  if (u >= params.units || (!TO_STAGE && head[5] != 0u)) {
    return;
  }
  let m = bitcast<f32>(head[0]);
  let upper_end = head[15];
  let window_lo = head[14];
  let window_hi = head[3];
  let spans = HEAD_OFFSETS + params.units + 2u * u;
  let start = head[HEAD_OFFSETS + u];
  at = start;
  if (TO_STAGE) {
    // After the first round: root_level(d) < upper_end, or window_lo <= it <= window_hi, as depth bounds (exact:
    // root_level(d) < j is d < (j / 2)^2 for j < LEVELS, and always for j >= LEVELS).
    let below = window_hi + 1u;
    bounds = vec3<f32>(f32(upper_end * upper_end), f32(window_lo * window_lo), f32(below * below)) * 0.25;
    all_upper = upper_end >= LEVELS;
    open_window = below >= LEVELS;
    let groups = unit_groups(u);
    for (var g = groups.x; g < groups.y; g++) {
      let v = work[g];
      stage_one(v.x, 4u * g, m);
      stage_one(v.y, 4u * g + 1u, m);
      stage_one(v.z, 4u * g + 2u, m);
      stage_one(v.w, 4u * g + 3u, m);
    }
    head[spans] = start;
    head[spans + 1u] = at;
    return;
  }
  let nb = bitcast<f32>(head[8]);
  let lo = bitcast<f32>(head[9]);
  let hi = bitcast<f32>(head[10]);
  for (var k = head[spans]; k < head[spans + 1u]; k++) {
    let w = bitcast<f32>(src[2u * k + 1u]);
    if (!excluded(w) && is_candidate(level_of(m, w, nb, lo, hi), upper_end, window_lo, window_hi)) {
      dst[2u * at] = src[2u * k];
      dst[2u * at + 1u] = bitcast<u32>(w);
      at++;
    }
  }
}
