// sample_select: one invocation picks the candidate level J and where each unit's candidates go (head words 3..9 and
// 12 + u), and the next round's finer mapping. See sample_common.wgsl for why the candidates hold every threshold the draw can choose.
// Bindings: 0 part array<u32>; 1 head array<u32>; 2 levels array<u32>; 3 params. Dispatch: 1 workgroup of 1.

@group(0) @binding(0) var<storage, read_write> part: array<u32>;
@group(0) @binding(1) var<storage, read_write> head: array<u32>;
@group(0) @binding(2) var<storage, read_write> levels: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(1)
fn main() {
  if (head[7] > 0u && head[5] == 0u) {
    return;
  }
  let units = params.units;
  var kept = 0.0;
  for (var u = 0u; u < units; u++) {
    kept += bitcast<f32>(part[4u * u + 3u]);
  }
  head[6] = bitcast<u32>(kept);
  var need_count = max(min(params.top_n, MAX_TOP_N), 1u);
  if ((params.flags & FLAG_TOP_K) != 0u) {
    need_count = max(need_count, params.top_k);
  }
  // top-p without top-k: the candidates must hold top_p of the kept mass (with room for rounding: the draw sums
  // the same masses in another order).
  var need_mass = 0.0;
  if ((params.flags & FLAG_TOP_P) != 0u && (params.flags & FLAG_TOP_K) == 0u) {
    need_mass = params.top_p * kept * 1.001;
  }
  var total_count = 0u;
  var total_mass = 0.0;
  var level = LEVELS - 1u;
  for (var j = 0u; j < LEVELS; j++) {
    for (var u = 0u; u < units; u++) {
      total_count += levels[LEVELS * u + j];
      total_mass += bitcast<f32>(levels[LEVELS * (units + u) + j]);
    }
    if (total_count >= need_count && total_mass >= need_mass) {
      level = j;
      break;
    }
  }
  var at = 0u;
  for (var u = 0u; u < units; u++) {
    head[HEAD_OFFSETS + u] = at;
    for (var j = 0u; j <= level; j++) {
      at += levels[LEVELS * u + j];
    }
  }
  head[3] = level;
  head[4] = at;
  head[5] = select(0u, 1u, at > params.cap);
  head[7] = head[7] + 1u;
  // The mapping J refers to, and the next round's: J's own depth range split finer.
  let lo = bitcast<f32>(head[10]);
  let hi = bitcast<f32>(head[11]);
  head[8] = head[10];
  head[9] = head[11];
  var a = 0.0;
  var b = -1.0; // open
  if (hi < 0.0) {
    a = f32(level * level) / 4.0;
    if (level + 1u < LEVELS) {
      b = f32((level + 1u) * (level + 1u)) / 4.0;
    }
  } else if (level == 0u) {
    b = lo;
  } else if (level + 1u < LEVELS) {
    let step = (hi - lo) / f32(LEVELS - 2u);
    a = lo + f32(level - 1u) * step;
    b = select(lo + f32(level) * step, hi, level == LEVELS - 2u);
  } else {
    a = hi;
  }
  if (b < 0.0) {
    b = 2.0 * a + 16.0;
  }
  head[10] = bitcast<u32>(a);
  head[11] = bitcast<u32>(b);
}
