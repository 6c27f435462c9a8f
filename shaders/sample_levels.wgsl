// sample_levels: per unit (one invocation each), with M known, per level (under this round's mapping,
// head[11..13]) the count of its tokens and their kept mass exp((w - M) / T) (0 below the min-p threshold; T = 1
// when greedy). The first round (FROM_STAGE false) walks the unit's logits and also writes the unit's kept mass;
// the refining rounds (FROM_STAGE true) walk only the unit's stretch of the stage, the first round's candidates.
// See sample_common.wgsl.
// Bindings: 0 work array<f32>; 1 part array<u32> (word 3 of each unit); 2 head array<u32>; 3 levels array<u32>
// [2 * LEVELS * units]: counts at LEVELS * u + j, mass bits at LEVELS * (units + u) + j; 4 params; 5 stage
// array<u32> (sample_compact's (index, w bits) pairs). Dispatch: ceil(units / 64) workgroups.

@group(0) @binding(0) var<storage, read> work: array<f32>;
@group(0) @binding(1) var<storage, read_write> part: array<u32>;
@group(0) @binding(2) var<storage, read_write> head: array<u32>;
@group(0) @binding(3) var<storage, read_write> levels: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> stage: array<u32>;

// Whether the per-level sums are indexed by the level (CPU adapters) or unrolled into registers (GPUs).
override DYNAMIC_INDEX: bool = false;
// Whether this round walks the stage (a refining round) or the logits (the first round).
override FROM_STAGE: bool = false;

// The unit's logits, or its stretch of the stage (sample_compact wrote it from HEAD_OFFSETS + units + 2u on).
fn unit_span(u: u32) -> vec2<u32> {
  if (FROM_STAGE) {
    return vec2<u32>(head[HEAD_OFFSETS + params.units + 2u * u], head[HEAD_OFFSETS + params.units + 2u * u + 1u]);
  }
  return vec2<u32>(unit_start(u), unit_end(u));
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let u = gid.x;
  // A refining round runs only after a round that asked for one.
  if (u >= params.units || (head[7] > 0u && head[18] == 0u)) {
    return;
  }
  let m = bitcast<f32>(head[0]);
  let nb = bitcast<f32>(head[11]);
  let lo = bitcast<f32>(head[12]);
  let hi = bitcast<f32>(head[13]);
  let threshold = min_p_threshold(m);
  let inv_t = inv_temperature();
  var count: array<u32, LEVELS>;
  var mass: array<f32, LEVELS>;
  for (var j = 0u; j < LEVELS; j++) {
    count[j] = 0u;
    mass[j] = 0.0;
  }
  var kept = 0.0;
  let span = unit_span(u);
  // Levels only where candidates are made; their masses only where top-p applies without top-k (sample_select).
  let want_levels = (params.flags & FLAG_CANDIDATES) != 0u;
  let want_mass = (params.flags & FLAG_TOP_P) != 0u && (params.flags & FLAG_TOP_K) == 0u;
  for (var k = span.x; k < span.y; k++) {
    var w: f32;
    if (FROM_STAGE) {
      w = bitcast<f32>(stage[2u * k + 1u]);
    } else {
      w = work[k];
    }
    if (!excluded(w)) {
      let q = select(0.0, exp((w - m) * inv_t), key_of(w) >= threshold);
      kept += q;
      if (want_levels) {
        let level = level_of(m, w, nb, lo, hi);
        if (DYNAMIC_INDEX) {
          // CPU adapters: an indexed store into the thread's own array is cheap there.
          count[level] += 1u;
          mass[level] += q;
        } else {
          // Constant indices (the loop unrolls), so the per-level sums stay in registers.
          for (var j = 0u; j < LEVELS; j++) {
            count[j] += select(0u, 1u, level == j);
          }
          if (want_mass) {
            for (var j = 0u; j < LEVELS; j++) {
              mass[j] += select(0.0, q, level == j);
            }
          }
        }
      }
    }
  }
  if (!FROM_STAGE) {
    part[4u * u + 3u] = bitcast<u32>(kept);
  }
  for (var j = 0u; j < LEVELS; j++) {
    levels[LEVELS * u + j] = count[j];
    levels[LEVELS * (params.units + u) + j] = bitcast<u32>(mass[j]);
  }
}
