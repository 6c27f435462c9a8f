// sample_select: one invocation picks the candidate levels (head words 3..7 and 14..16) and where each unit's
// candidates go (HEAD_OFFSETS + u), and the next round's finer mapping (11..13). See sample_common.wgsl for why the
// candidates hold every threshold the draw can choose.
// Bindings: 0 part array<u32>; 1 head array<u32>; 2 levels array<u32>; 3 params. Dispatch: 1 workgroup of 1.

@group(0) @binding(0) var<storage, read_write> part: array<u32>;
@group(0) @binding(1) var<storage, read_write> head: array<u32>;
@group(0) @binding(2) var<storage, read_write> levels: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

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

@compute @workgroup_size(1)
fn main() {
  if (head[7] > 0u && head[18] == 0u) {
    return;
  }
  let units = params.units;
  var kept = 0.0;
  for (var u = 0u; u < units; u++) {
    kept += bitcast<f32>(part[4u * u + 3u]);
  }
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
  // Per level totals over the units (a fixed order), and the first levels whose cumulative totals reach each need.
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
    var c = 0u;
    var q = 0.0;
    for (var u = 0u; u < units; u++) {
      c += levels[LEVELS * u + j];
      q += bitcast<f32>(levels[LEVELS * (units + u) + j]);
    }
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
  // A refining round is kept only if it narrows the candidates (rounding can move a crossing by a level).
  if (head[7] > 0u && at >= head[4]) {
    head[7] = head[7] + 1u;
    head[18] = 0u;
    return;
  }
  at = 0u;
  for (var u = 0u; u < units; u++) {
    head[HEAD_OFFSETS + u] = at;
    for (var j = 0u; j < LEVELS; j++) {
      if (is_candidate(j, upper_end, window_lo, window_hi)) {
        at += levels[LEVELS * u + j];
      }
    }
  }
  head[3] = window_hi;
  head[4] = at;
  head[5] = select(0u, 1u, at > params.cap);
  head[7] = head[7] + 1u;
  head[18] = select(0u, 1u, at > min(params.refine_above, params.cap));
  head[14] = window_lo;
  head[15] = upper_end;
  head[16] = bitcast<u32>(gap);
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
}
