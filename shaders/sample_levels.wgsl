// sample_levels: per unit (one invocation each), with M known, per level (under this round's mapping,
// head[11..13]) the count of its tokens and their kept mass exp((w - M) / T) (0 below the min-p threshold; T = 1
// when greedy). The first round (FROM_STAGE false) walks the unit's logits and also writes the unit's kept mass;
// the refining rounds (FROM_STAGE true) walk only the unit's stretch of the stage, the first round's candidates.
// See sample_common.wgsl.
// Bindings: 0 work array<vec4<f32>>; 1 part array<u32> (word 3 of each unit); 2 head array<u32>; 3 levels array<u32>
// [2 * LEVELS * units]: counts at LEVELS * u + j, mass bits at LEVELS * (units + u) + j; 4 params; 5 stage
// array<u32> (sample_compact's (index, w bits) pairs). Dispatch: ceil(units / 64) workgroups.

@group(0) @binding(0) var<storage, read> work: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> part: array<u32>;
@group(0) @binding(2) var<storage, read_write> head: array<u32>;
@group(0) @binding(3) var<storage, read_write> levels: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> stage: array<u32>;

// Whether the per-level sums are indexed by the level (CPU adapters) or unrolled into registers (GPUs).
override DYNAMIC_INDEX: bool = false;
// Whether this round walks the stage (a refining round) or the logits (the first round).
override FROM_STAGE: bool = false;

// One invocation's sums and what it bins by (set at the start of main).
var<private> count: array<u32, LEVELS>;
var<private> mass: array<f32, LEVELS>;
var<private> kept: f32;
var<private> m: f32;
var<private> mapping: vec3<f32>; // nb, lo, hi
var<private> threshold: u32;
var<private> inv_t: f32;
var<private> want_levels: bool;
var<private> want_mass: bool;

// Adds one logit to the sums.
fn tally(w: f32) {
  if (excluded(w)) {
    return;
  }
  let q = select(0.0, exp((w - m) * inv_t), key_of(w) >= threshold);
  kept += q;
  if (!want_levels) {
    return;
  }
  var level: u32;
  if (FROM_STAGE) {
    level = refined_level(depth(m, w), mapping.x, mapping.y, mapping.z);
  } else {
    level = root_level(depth(m, w));
  }
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

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let u = gid.x;
  // A refining round runs only after a round that asked for one.
  if (u >= params.units || (head[7] > 0u && head[18] == 0u)) {
    return;
  }
  m = bitcast<f32>(head[0]);
  mapping = vec3<f32>(bitcast<f32>(head[11]), bitcast<f32>(head[12]), bitcast<f32>(head[13]));
  threshold = min_p_threshold(m);
  inv_t = inv_temperature();
  for (var j = 0u; j < LEVELS; j++) {
    count[j] = 0u;
    mass[j] = 0.0;
  }
  kept = 0.0;
  // Levels only where candidates are made; their masses only where top-p applies without top-k (sample_select).
  want_levels = (params.flags & FLAG_CANDIDATES) != 0u;
  want_mass = (params.flags & FLAG_TOP_P) != 0u && (params.flags & FLAG_TOP_K) == 0u;
  if (FROM_STAGE) {
    // The unit's stretch of the stage (sample_compact wrote it from HEAD_OFFSETS + units + 2u on).
    let spans = HEAD_OFFSETS + params.units + 2u * u;
    for (var k = head[spans]; k < head[spans + 1u]; k++) {
      tally(bitcast<f32>(stage[2u * k + 1u]));
    }
  } else {
    let groups = unit_groups(u);
    for (var g = groups.x; g < groups.y; g++) {
      let v = work[g];
      tally(v.x);
      tally(v.y);
      tally(v.z);
      tally(v.w);
    }
    part[4u * u + 3u] = bitcast<u32>(kept);
  }
  for (var j = 0u; j < LEVELS; j++) {
    levels[LEVELS * u + j] = count[j];
    levels[LEVELS * (params.units + u) + j] = bitcast<u32>(mass[j]);
  }
}
