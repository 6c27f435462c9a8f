// sample_draw: the draw (T > 0), after sample_token chose the threshold key head[17]. See sample_common.wgsl.
//   `mass` (a unit per invocation): each unit's kept mass sum exp((w - M) / T) over tokens with key >= head[17].
//   `main` (one workgroup): a counter-based generator (Philox4x32-10 keyed by the seed, counter = step + stream),
//     so a seed and a step give the same token on any adapter; each stream walks the units' kept masses to the
//     unit where the running sum passes u * Z, then the unit's logits: the first index whose running sum of kept q
//     passes it (the distribution sample_token.wgsl describes). Thread t draws streams t, t + WG, ... (the engine
//     uses one stream; tests draw thousands in one dispatch). Never a pass over the whole vocabulary in one
//     workgroup.
// Output (`main`): per stream s, out[2s] = the token id and out[2s + 1] its logprob (f32 bits, log-softmax at
// T = 1); with update_counts != 0, stream 0 adds 1 to counts[token] (the next step's penalties).
// Bindings (group 0; `mass` uses the first four, so one module serves both):
//   0 work array<vec4<f32>> [count / 4]; 1 part array<u32> [4 * units] (word 3 of each unit: the kept mass); 2 head
//   array<u32>; 3 params uniform; 4 out array<u32> [2 * streams + ...]; 5 counts array<u32> [count].
// Dispatch: `mass` ceil(units / 64) workgroups; `main` exactly 1.

@group(0) @binding(0) var<storage, read> work: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> part: array<u32>;
@group(0) @binding(2) var<storage, read_write> head: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
@group(0) @binding(5) var<storage, read_write> counts: array<u32>;

override WG: u32 = 256u;

@compute @workgroup_size(64)
fn mass(@builtin(global_invocation_id) gid: vec3<u32>) {
  let u = gid.x;
  if (u >= params.units || head[1] == NONE) {
    return;
  }
  let m = bitcast<f32>(head[0]);
  let threshold = head[17];
  let inv_t = inv_temperature();
  var kept = 0.0;
  let groups = unit_groups(u);
  for (var g = groups.x; g < groups.y; g++) {
    let v = work[g];
    let q = exp((v - m) * inv_t);
    kept += select(0.0, q.x, key_of(v.x) >= threshold);
    kept += select(0.0, q.y, key_of(v.y) >= threshold);
    kept += select(0.0, q.z, key_of(v.z) >= threshold);
    kept += select(0.0, q.w, key_of(v.w) >= threshold);
  }
  part[4u * u + 3u] = bitcast<u32>(kept);
}

// ---- Philox4x32-10 ------------------------------------------------------------------------------------------

// The 64-bit product of two u32 as (hi, lo).
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
  let a_lo = a & 0xffffu;
  let a_hi = a >> 16u;
  let b_lo = b & 0xffffu;
  let b_hi = b >> 16u;
  let ll = a_lo * b_lo;
  let lh = a_lo * b_hi;
  let hl = a_hi * b_lo;
  let hh = a_hi * b_hi;
  let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  let lo = (ll & 0xffffu) | (mid << 16u);
  let hi = hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
  return vec2<u32>(hi, lo);
}

fn philox(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
  var c = counter;
  var k = key;
  for (var round = 0u; round < 10u; round++) {
    let p0 = mul_wide(0xD2511F53u, c.x);
    let p1 = mul_wide(0xCD9E8D57u, c.z);
    c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
    k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

// Walks the units' kept masses (in order, skipping zeros) to the unit where the running sum passes goal: (unit,
// goal left); rounding past the end gives the last non-zero unit with all of its mass.
fn walk_units(goal_in: f32) -> vec2<f32> {
  var goal = goal_in;
  var owner = NONE;
  var last_owner = 0u;
  for (var u = 0u; u < params.units; u++) {
    let v = bitcast<f32>(part[4u * u + 3u]);
    if (v > 0.0) {
      last_owner = u;
      if (owner == NONE) {
        if (goal < v) {
          owner = u;
        } else {
          goal -= v;
        }
      }
    }
  }
  if (owner == NONE) {
    owner = last_owner;
    goal = bitcast<f32>(part[4u * owner + 3u]);
  }
  return vec2<f32>(bitcast<f32>(owner), goal);
}

fn uniform_draw(s: u32) -> f32 {
  let bits = philox(vec4<u32>(params.step + s, 0u, 0u, 0u), vec2<u32>(params.seed_lo, params.seed_hi));
  return f32(bits.x >> 8u) * (1.0 / 16777216.0);
}

fn logit(i: u32) -> f32 {
  return work[i / 4u][i % 4u];
}

fn emit(s: u32, chosen: u32, m: f32, log_z1: f32) {
  out[2u * s] = chosen;
  out[2u * s + 1u] = bitcast<u32>(logit(chosen) - m - log_z1);
  if (s == 0u && params.update_counts != 0u) {
    counts[chosen] = counts[chosen] + 1u;
  }
}

// Each stream walks the units' kept masses at head[17] to its unit, then the unit's logits.
@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  let best = head[1];
  if (best == NONE || !(params.temperature > 0.0)) {
    return;
  }
  let m = bitcast<f32>(head[0]);
  let log_z1 = bitcast<f32>(head[2]);
  let inv_t = 1.0 / params.temperature;
  let threshold = head[17];
  var total = 0.0;
  for (var u = 0u; u < params.units; u++) {
    total += bitcast<f32>(part[4u * u + 3u]);
  }
  for (var s = lid; s < params.streams; s += WG) {
    let found = walk_units(uniform_draw(s) * total);
    let owner = bitcast<u32>(found.x);
    var goal = found.y;
    var pick = NONE;
    var last = NONE;
    for (var i = unit_start(owner); i < unit_end(owner); i++) {
      let w = logit(i);
      if (key_of(w) >= threshold) {
        let q = exp((w - m) * inv_t);
        if (q > 0.0) {
          last = i;
          if (pick == NONE) {
            if (goal < q) {
              pick = i;
            } else {
              goal -= q;
            }
          }
        }
      }
    }
    emit(s, select(pick, last, pick == NONE), m, log_z1);
  }
}
