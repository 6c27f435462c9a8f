// sample_select: one workgroup picks the candidate levels (head words 3..7, 14..18, and after the first round
// 19..21) and where each unit's candidates go (HEAD_OFFSETS + u), and the next round's finer mapping (11..13).
// See sample_common.wgsl for why the candidates hold every threshold the draw can choose. The sums over units are
// split over the workgroup (WG: 4 on CPU adapters, 256 on GPUs, where one invocation walking 1024 units x 12 levels
// would take milliseconds).
// Bindings: 0 part array<u32>; 1 head array<u32>; 2 levels array<u32>; 3 params. Dispatch: 1 workgroup.

@group(0) @binding(0) var<storage, read_write> part: array<u32>;
@group(0) @binding(1) var<storage, read_write> head: array<u32>;
@group(0) @binding(2) var<storage, read_write> levels: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

override WG: u32 = 256u;

// The depth range [x, y) of level j under the mapping (nb, lo, hi) (y < 0: open).
fn depth_range(j: u32, nb: f32, lo: f32, hi: f32) -> vec2<f32> {
  if (hi < 0.0) {
    let b = select(-1.0, f32((j + 1u) * (j + 1u)) / 4.0, j + 1u < LEVELS);
    return vec2<f32>(f32(j * j) / 4.0, b);
  }
  if (j == 0u) {
    return vec2<f32>(0.0, nb);
  }
  if (j == 1u) {
    return vec2<f32>(nb, lo);
  }
  if (j == LEVELS - 1u) {
    return vec2<f32>(hi, -1.0);
  }
  let step = (hi - lo) / f32(LEVELS - 3u);
  return vec2<f32>(lo + f32(j - 2u) * step, select(lo + f32(j - 1u) * step, hi, j == LEVELS - 2u));
}

// In a refining round, the level that holds the first round's gap (not in the stage): 1 beside a top-N's upper set
// (the last accepted round's, head[15]; it stays apart in every accepted round), else 0.
fn lump_level() -> u32 {
  return select(0u, 1u, head[15] > 0u);
}

// Workgroup scratch: per-thread partials, the per-level totals, the decision thread 0 broadcasts.
var<workgroup> red_f: array<f32, WG>;
var<workgroup> red_u: array<u32, WG>;
var<workgroup> level_count: array<u32, LEVELS>;
var<workgroup> level_mass: array<f32, LEVELS>;
var<workgroup> shared_kept: f32;
var<workgroup> decided: vec4<u32>; // accept (1), upper_end, window_lo, window_hi
var<workgroup> skip: u32;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) {
    skip = select(0u, 1u, head[7] > 0u && head[18] == 0u);
  }
  if (workgroupUniformLoad(&skip) != 0u) {
    return;
  }
  let units = params.units;
  // Each thread sums the units lid, lid + WG, ...; thread 0 adds the partials in order.
  var kept_part = 0.0;
  var c_part: array<u32, LEVELS>;
  var q_part: array<f32, LEVELS>;
  for (var j = 0u; j < LEVELS; j++) {
    c_part[j] = 0u;
    q_part[j] = 0.0;
  }
  for (var u = lid; u < units; u += WG) {
    kept_part += bitcast<f32>(part[4u * u + 3u]);
    for (var j = 0u; j < LEVELS; j++) {
      c_part[j] += levels[LEVELS * u + j];
      q_part[j] += bitcast<f32>(levels[LEVELS * (units + u) + j]);
    }
  }
  red_f[lid] = kept_part;
  workgroupBarrier();
  if (lid == 0u) {
    var kept = 0.0;
    for (var t = 0u; t < WG; t++) {
      kept += red_f[t];
    }
    shared_kept = kept;
  }
  // One level at a time through the two WG-sized arrays (all levels at once would pass 16 KiB of workgroup memory).
  for (var j = 0u; j < LEVELS; j++) {
    workgroupBarrier();
    red_u[lid] = c_part[j];
    red_f[lid] = q_part[j];
    workgroupBarrier();
    if (lid == 0u) {
      var c = 0u;
      var q = 0.0;
      for (var t = 0u; t < WG; t++) {
        c += red_u[t];
        q += red_f[t];
      }
      level_count[j] = c;
      level_mass[j] = q;
    }
  }
  workgroupBarrier();
  // A refining round walked only the stage: the first round's gap (above its window, not in the stage) joins the
  // level that holds it now (1 beside a top-N's upper set, else 0) as one lump, so the cumulative masses are whole.
  if (lid == 0u && head[7] > 0u) {
    let lump = lump_level();
    level_count[lump] += head[20];
    level_mass[lump] += bitcast<f32>(head[19]);
  }

  // Thread 0 decides: the crossing levels, the candidate levels, whether this round is kept, the next mapping.
  if (lid == 0u) {
    decided = decide(shared_kept);
  }
  let d = workgroupUniformLoad(&decided);
  if (d.x == 0u) {
    return;
  }
  // Where each unit's candidates start: contiguous runs of units per thread, their totals, a prefix by thread 0.
  let run = (units + WG - 1u) / WG;
  let first = min(lid * run, units);
  let last = min(first + run, units);
  var mine = 0u;
  for (var u = first; u < last; u++) {
    for (var j = 0u; j < LEVELS; j++) {
      if (is_candidate(j, d.y, d.z, d.w)) {
        mine += levels[LEVELS * u + j];
      }
    }
  }
  red_u[lid] = mine;
  workgroupBarrier();
  if (lid == 0u) {
    var at = 0u;
    for (var t = 0u; t < WG; t++) {
      let n = red_u[t];
      red_u[t] = at;
      at += n;
    }
  }
  workgroupBarrier();
  var at = red_u[lid];
  for (var u = first; u < last; u++) {
    head[HEAD_OFFSETS + u] = at;
    for (var j = 0u; j < LEVELS; j++) {
      if (is_candidate(j, d.y, d.z, d.w)) {
        at += levels[LEVELS * u + j];
      }
    }
  }
}

// Thread 0's part, from the per-level totals: head words 3..18 but the offsets; (accept, upper_end, window_lo,
// window_hi). A refining round is kept only if it narrows the candidates (rounding can move a crossing by a level).
fn decide(kept: f32) -> vec4<u32> {
  head[6] = bitcast<u32>(kept);
  let top_n = min(params.top_n, MAX_TOP_N);
  var need_count = max(top_n, 1u);
  if ((params.flags & FLAG_TOP_K) != 0u) {
    need_count = max(need_count, params.top_k);
  }
  // Top-p without top-k: a window of levels around where its threshold lies.
  let window = (params.flags & FLAG_TOP_P) != 0u && (params.flags & FLAG_TOP_K) == 0u;
  var need_lo = 0.0;
  var need_hi = 0.0;
  if (window) {
    need_lo = params.top_p * kept * 0.999;
    need_hi = params.top_p * kept * 1.001;
  }
  // The first levels whose cumulative totals reach each need.
  var count: array<u32, LEVELS>;
  var mass: array<f32, LEVELS>;
  var total_count = 0u;
  var total_mass = 0.0;
  var j_count = LEVELS - 1u;
  var j_lo = LEVELS - 1u;
  var j_hi = LEVELS - 1u;
  var found_count = false;
  var found_lo = false;
  var found_hi = false;
  for (var j = 0u; j < LEVELS; j++) {
    let c = level_count[j];
    let q = level_mass[j];
    count[j] = c;
    mass[j] = q;
    total_count += c;
    total_mass += q;
    if (!found_count && total_count >= need_count) {
      j_count = j;
      found_count = true;
    }
    if (!found_lo && total_mass >= need_lo) {
      j_lo = j;
      found_lo = true;
    }
    if (!found_hi && total_mass >= need_hi) {
      j_hi = j;
      found_hi = true;
    }
  }
  // The candidate levels: levels < upper_end, and window_lo ..= window_hi.
  var upper_end = 0u;
  var window_lo = 0u;
  var window_hi = j_count;
  if (window) {
    if (top_n == 0u) {
      window_lo = j_lo;
      window_hi = j_hi;
    } else if (j_count + 1u >= j_lo) {
      window_hi = max(j_count, j_hi);
    } else {
      upper_end = j_count + 1u;
      window_lo = j_lo;
      window_hi = j_hi;
    }
  }
  var gap = 0.0;
  for (var j = upper_end; j < window_lo; j++) {
    gap += mass[j];
  }
  var at = 0u;
  for (var j = 0u; j < LEVELS; j++) {
    if (is_candidate(j, upper_end, window_lo, window_hi)) {
      at += count[j];
    }
  }
  // A refining round is also refused where a candidate level may hold tokens the stage lacks: the lump's, or the
  // last unless the first round's candidates reached the last level (then every token below them is in the stage).
  // Only rounding can lead a round there (the same masses summed in another order); the round before it stands.
  let refining = head[7] > 0u;
  let lump_partial = head[20] > 0u && is_candidate(lump_level(), upper_end, window_lo, window_hi);
  let last_partial = head[21] == 0u && is_candidate(LEVELS - 1u, upper_end, window_lo, window_hi);
  let partial_level = lump_partial || last_partial;
  if (refining && (at >= head[4] || partial_level)) {
    head[7] = head[7] + 1u;
    head[18] = 0u;
    return vec4<u32>(0u, 0u, 0u, 0u);
  }
  head[3] = window_hi;
  head[4] = at;
  head[5] = select(0u, 1u, at > params.cap);
  head[7] = head[7] + 1u;
  head[18] = select(0u, 1u, at > min(params.refine_above, params.cap));
  head[14] = window_lo;
  head[15] = upper_end;
  head[16] = bitcast<u32>(gap);
  if (!refining) {
    // The first round's gap: the tokens a refining round's stage will not hold above the window.
    var gap_count = 0u;
    for (var j = upper_end; j < window_lo; j++) {
      gap_count += count[j];
    }
    head[19] = bitcast<u32>(gap);
    head[20] = gap_count;
    head[21] = select(0u, 1u, is_candidate(LEVELS - 1u, upper_end, window_lo, window_hi));
  }
  // The mapping the candidate levels refer to, and the next round's: the crossing levels' depth range split finer.
  // A top-p window refines the window alone and keeps the top-N's upper set (or everything above the window) as
  // level 0; otherwise level 0 is everything above the crossing level (and level 1 is empty).
  let nb = bitcast<f32>(head[11]);
  let lo = bitcast<f32>(head[12]);
  let hi = bitcast<f32>(head[13]);
  head[8] = head[11];
  head[9] = head[12];
  head[10] = head[13];
  var first = j_count;
  var last = j_count;
  if (window) {
    first = j_lo;
    last = j_hi;
  }
  let a = depth_range(first, nb, lo, hi).x;
  var b = depth_range(last, nb, lo, hi).y;
  if (b < 0.0) {
    b = 2.0 * a + 16.0;
  }
  var next_nb = a;
  if (window && top_n > 0u && j_count < j_lo) {
    next_nb = depth_range(j_count, nb, lo, hi).y;
  }
  head[11] = bitcast<u32>(next_nb);
  head[12] = bitcast<u32>(a);
  head[13] = bitcast<u32>(b);
  return vec4<u32>(1u, upper_end, window_lo, window_hi);
}
