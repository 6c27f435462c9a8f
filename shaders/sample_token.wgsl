// sample_token: the last step of the sampler (see sample_common.wgsl for the whole): draws one token from the
// processed logits with temperature, min-p, top-k and top-p, using a counter-based generator (Philox4x32-10 keyed by
// the seed, counter = step), so a seed and a step give the same token on any adapter. One workgroup computes the
// distribution once, then draws `streams` tokens from it (thread t draws streams t, t + 256, ...): stream s uses
// counter step + s (the engine uses one stream; tests draw thousands in one dispatch).
//
// The distribution, with w the processed logits, M = max w, T the temperature, q_i = exp((w_i - M) / T):
//   excluded tokens (w = LOWEST, -inf or NaN) have q = 0;
//   min-p keeps q_i >= min_p (relative to q_max = 1); top-k keeps w_i >= the k-th largest w (ties kept);
//   top-p then keeps the largest threshold set {w_i >= t} whose mass is >= top_p of what min-p/top-k kept;
//   the token is the first index whose running sum of kept q exceeds u * Z (u uniform in [0,1), 24 bits).
//   T <= 0 is greedy: the largest w, ties to the lowest index.
// Where the thresholds are searched: over the candidates sample_compact wrote (flag FLAG_CANDIDATES, no overflow:
// they hold every token a threshold can keep, in index order), else over every logit. Without top-k and top-p the
// draw walks the units' kept masses (sample_levels) and then the chosen unit, never the whole vocabulary.
// The workgroup size WG is an override: small on CPU adapters, where barriers cost most.
// Output: per stream s, out[2s] = the token id (0xFFFFFFFF if every token is excluded) and out[2s + 1] its
// logprob (f32 bits); then top_n (id, logprob bits) pairs, best first, at out[2 * streams + 2j]. Logprobs are
// log-softmax of w at T = 1 (after penalties, bias and the mask; before temperature and truncation).
// With update_counts != 0, stream 0 adds 1 to counts[token] (for the penalties of the next step).
//
// Bindings (group 0):
//   0 work    array<f32>  [count] processed logits
//   1 part    array<u32>  [4 * units] (sample_partials, sample_levels)
//   2 head    array<u32>  (sample_reduce, sample_select)
//   3 cand    array<u32>  [2 * cap] (sample_compact)
//   4 out     array<u32>  [2 * streams + 2 * top_n]
//   5 counts  array<u32>  [count] (written only with update_counts)
//   6 params  uniform
// Dispatch: exactly 1 workgroup.

@group(0) @binding(0) var<storage, read> work: array<f32>;
@group(0) @binding(1) var<storage, read_write> part: array<u32>;
@group(0) @binding(2) var<storage, read_write> head: array<u32>;
@group(0) @binding(3) var<storage, read_write> cand: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
@group(0) @binding(5) var<storage, read_write> counts: array<u32>;
@group(0) @binding(6) var<uniform> params: Params;

override WG: u32 = 256u;
const BINS: u32 = 8u;

var<workgroup> red_f: array<f32, WG>;
var<workgroup> red_u: array<u32, WG>;
var<workgroup> shared_u: u32;
var<workgroup> shared_f: f32;
var<workgroup> bins: array<f32, BINS * WG>;
var<workgroup> bin_totals: array<f32, BINS>;

// The set the thresholds are searched over: the candidates, or every logit.
var<private> use_cand: bool;
var<private> n_src: u32;

fn src_w(j: u32) -> f32 {
  if (use_cand) {
    return bitcast<f32>(cand[2u * j + 1u]);
  }
  return work[j];
}

fn src_i(j: u32) -> u32 {
  if (use_cand) {
    return cand[2u * j];
  }
  return j;
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

// ---- reductions over the source set ------------------------------------------------------------------------

// Workgroup sums in a fixed order: every thread's partial, then one thread adds the 256 partials in order.
fn sum_f(lid: u32, v: f32) -> f32 {
  red_f[lid] = v;
  workgroupBarrier();
  if (lid == 0u) {
    var total = 0.0;
    for (var t = 0u; t < WG; t++) {
      total += red_f[t];
    }
    shared_f = total;
  }
  return workgroupUniformLoad(&shared_f);
}

// The position (in the source set) of the best (w, index) strictly below (below_w, below_i) in the beats order
// (all when below_i == NONE); NONE when there is none. Source positions are in index order, so ties go to the
// lower position as to the lower index.
fn best_below(lid: u32, below_w: f32, below_i: u32) -> u32 {
  var best_w = 0.0;
  var best_j = NONE;
  for (var j = lid; j < n_src; j += WG) {
    let w = src_w(j);
    let i = src_i(j);
    let below = below_i == NONE || beats(below_w, below_i, w, i);
    if (below && beats(w, j, best_w, best_j)) {
      best_w = w;
      best_j = j;
    }
  }
  red_f[lid] = best_w;
  red_u[lid] = best_j;
  workgroupBarrier();
  if (lid == 0u) {
    var w = red_f[0];
    var j = red_u[0];
    for (var t = 1u; t < WG; t++) {
      if (beats(red_f[t], red_u[t], w, j)) {
        w = red_f[t];
        j = red_u[t];
      }
    }
    shared_u = j;
  }
  return workgroupUniformLoad(&shared_u);
}

// The mass of a token for threshold searches: 1 (counting, for top-k) or q = exp((w - M) / T) (top-p).
fn measure(w: f32, use_mass: bool, m: f32, inv_t: f32) -> f32 {
  return select(1.0, exp((w - m) * inv_t), use_mass);
}

// The total measure of source tokens with key >= t (t >= 1).
fn measure_at_least(lid: u32, t: u32, use_mass: bool, m: f32, inv_t: f32) -> f32 {
  var z = 0.0;
  for (var j = lid; j < n_src; j += WG) {
    let w = src_w(j);
    if (key_of(w) >= t) {
      z += measure(w, use_mass, m, inv_t);
    }
  }
  return sum_f(lid, z);
}

// The largest key t in [lo, hi] with measure(key >= t) >= goal, given that t = lo qualifies: an 8-ary search,
// each round one pass that bins the keys in [lo, hi] into 8 equal sub-ranges (11 rounds cover 32 bits).
fn search_threshold(lid: u32, lo_in: u32, hi_in: u32, goal: f32, use_mass: bool, m: f32, inv_t: f32) -> u32 {
  var lo = lo_in;
  var hi = hi_in;
  for (var round = 0u; round < 12u; round++) {
    if (lo >= hi) {
      break;
    }
    let width = (hi - lo) / BINS + 1u; // sub-range j is [lo + j * width, lo + (j + 1) * width)
    var local: array<f32, BINS>;
    for (var j = 0u; j < BINS; j++) {
      local[j] = 0.0;
    }
    for (var s = lid; s < n_src; s += WG) {
      let w = src_w(s);
      let k = key_of(w);
      if (k >= lo && k > 0u) {
        let j = min((k - lo) / width, BINS - 1u); // keys above hi land in the last bin
        local[j] += measure(w, use_mass, m, inv_t);
      }
    }
    for (var j = 0u; j < BINS; j++) {
      bins[j * WG + lid] = local[j];
    }
    workgroupBarrier();
    for (var b = lid; b < BINS; b += WG) {
      var total = 0.0;
      for (var t = 0u; t < WG; t++) {
        total += bins[b * WG + t];
      }
      bin_totals[b] = total;
    }
    workgroupBarrier();
    if (lid == 0u) {
      // measure(key >= lo + j * width) = sum of bins j.. ; pick the largest j that reaches the goal.
      var above = 0.0;
      var pick = 0u;
      for (var jj = 0u; jj < BINS; jj++) {
        let j = BINS - 1u - jj;
        above += bin_totals[j];
        if (above >= goal && pick == 0u && j > 0u) {
          pick = j;
        }
      }
      shared_u = pick;
    }
    let j = workgroupUniformLoad(&shared_u);
    let new_lo = lo + j * width;
    if (j < BINS - 1u) {
      hi = min(hi, new_lo + width - 1u);
    }
    lo = new_lo;
  }
  return min(lo, hi_in);
}

// The mass of entry t of what a draw walks: the threads' partials (red_f) or the units' kept masses.
fn walked(t: u32, from_units: bool) -> f32 {
  if (from_units) {
    return bitcast<f32>(part[4u * t + 3u]);
  }
  return red_f[t];
}

// Walks the masses (in order, skipping zeros) to the entry where the running sum passes goal: (entry, goal left);
// rounding past the end gives the last non-zero entry with all of its mass.
fn walk(goal_in: f32, used: u32, from_units: bool) -> vec2<f32> {
  var goal = goal_in;
  var owner = NONE;
  var last_owner = 0u;
  for (var t = 0u; t < used; t++) {
    let v = walked(t, from_units);
    if (v > 0.0) {
      last_owner = t;
      if (owner == NONE) {
        if (goal < v) {
          owner = t;
        } else {
          goal -= v;
        }
      }
    }
  }
  if (owner == NONE) {
    owner = last_owner;
    goal = walked(owner, from_units);
  }
  return vec2<f32>(bitcast<f32>(owner), goal);
}

fn uniform_draw(s: u32) -> f32 {
  let bits = philox(vec4<u32>(params.step + s, 0u, 0u, 0u), vec2<u32>(params.seed_lo, params.seed_hi));
  return f32(bits.x >> 8u) * (1.0 / 16777216.0);
}

fn emit(s: u32, chosen: u32, m: f32, log_z1: f32) {
  out[2u * s] = chosen;
  out[2u * s + 1u] = bitcast<u32>(work[chosen] - m - log_z1);
  if (s == 0u && params.update_counts != 0u) {
    counts[chosen] = counts[chosen] + 1u;
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  let count = params.count;
  let units = params.units;
  let streams = params.streams;
  let top_n = min(params.top_n, MAX_TOP_N);
  let candidates = (params.flags & FLAG_CANDIDATES) != 0u;
  use_cand = candidates && head[5] == 0u;
  n_src = select(count, head[4], use_cand);

  // The best token (the greedy answer), M and the log-sum-exp at T = 1 (sample_reduce).
  if (lid == 0u) {
    shared_u = head[1];
  }
  let best = workgroupUniformLoad(&shared_u);
  if (lid == 0u) {
    shared_f = bitcast<f32>(head[0]);
  }
  let m = workgroupUniformLoad(&shared_f);
  let log_z1 = bitcast<f32>(head[2]);
  if (best == NONE) {
    if (lid == 0u) {
      for (var s = 0u; s < streams; s++) {
        out[2u * s] = NONE;
        out[2u * s + 1u] = bitcast<u32>(LOWEST);
      }
      for (var j = 0u; j < top_n; j++) {
        out[2u * streams + 2u * j] = NONE;
        out[2u * streams + 2u * j + 1u] = bitcast<u32>(LOWEST);
      }
    }
    return;
  }

  if (params.temperature > 0.0) {
    let inv_t = 1.0 / params.temperature;
    var threshold = min_p_threshold(m);
    let truncated = (params.flags & (FLAG_TOP_K | FLAG_TOP_P)) != 0u;
    if (!truncated) {
      // No top-k or top-p: the kept set is everything at or above the min-p threshold. Each stream walks the
      // units' kept masses to its unit, then the unit's logits.
      var total = 0.0;
      for (var u = 0u; u < units; u++) {
        total += bitcast<f32>(part[4u * u + 3u]);
      }
      for (var s = lid; s < streams; s += WG) {
        let found = walk(uniform_draw(s) * total, units, true);
        let owner = bitcast<u32>(found.x);
        var goal = found.y;
        var pick = NONE;
        var last = NONE;
        for (var i = unit_start(owner); i < unit_end(owner); i++) {
          let w = work[i];
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
    } else {
      let top_key = key_of(m);
      // top-k: the largest key t with count(key >= t) >= k.
      if ((params.flags & FLAG_TOP_K) != 0u) {
        threshold = search_threshold(lid, threshold, top_key, f32(params.top_k), false, m, inv_t);
      }
      // top-p: the largest key t whose mass reaches top_p of the mass kept so far (after top-k: over the source
      // set, which holds all of it; min-p alone: the units' kept masses, which count every token).
      if ((params.flags & FLAG_TOP_P) != 0u) {
        var kept = 0.0;
        if ((params.flags & FLAG_TOP_K) != 0u) {
          kept = measure_at_least(lid, threshold, true, m, inv_t);
        } else {
          if (lid == 0u) {
            shared_f = bitcast<f32>(head[6]);
          }
          kept = workgroupUniformLoad(&shared_f);
        }
        threshold = search_threshold(lid, threshold, top_key, params.top_p * kept, true, m, inv_t);
      }
      // Thread t's partial mass over its contiguous run of the source set.
      let run = (n_src + WG - 1u) / WG;
      var part_mass = 0.0;
      for (var j = min(lid * run, n_src); j < min(lid * run + run, n_src); j++) {
        let w = src_w(j);
        if (key_of(w) >= threshold) {
          part_mass += exp((w - m) * inv_t);
        }
      }
      red_f[lid] = part_mass;
      workgroupBarrier();
      let used = (n_src + run - 1u) / run;
      var total = 0.0;
      for (var t = 0u; t < used; t++) {
        total += red_f[t];
      }
      for (var s = lid; s < streams; s += WG) {
        let found = walk(uniform_draw(s) * total, used, false);
        let owner = bitcast<u32>(found.x);
        var goal = found.y;
        var pick = NONE;
        var last = NONE;
        for (var j = owner * run; j < min(owner * run + run, n_src); j++) {
          let w = src_w(j);
          if (key_of(w) >= threshold) {
            let q = exp((w - m) * inv_t);
            if (q > 0.0) {
              last = j;
              if (pick == NONE) {
                if (goal < q) {
                  pick = j;
                } else {
                  goal -= q;
                }
              }
            }
          }
        }
        emit(s, src_i(select(pick, last, pick == NONE)), m, log_z1);
      }
    }
  } else if (lid == 0u) {
    for (var s = 0u; s < streams; s++) {
      emit(s, best, m, log_z1);
    }
  }

  // top_n alternatives, best first (from the candidates when there are any: they hold at least top_n tokens).
  var prev_w = 0.0;
  var prev_i = NONE;
  for (var j = 0u; j < top_n; j++) {
    let next = best_below(lid, prev_w, prev_i);
    if (next == NONE) {
      if (lid == 0u) {
        out[2u * streams + 2u * j] = NONE;
        out[2u * streams + 2u * j + 1u] = bitcast<u32>(LOWEST);
      }
      break;
    }
    let id = src_i(next);
    prev_w = src_w(next);
    prev_i = id;
    if (lid == 0u) {
      out[2u * streams + 2u * j] = id;
      out[2u * streams + 2u * j + 1u] = bitcast<u32>(prev_w - m - log_z1);
    }
  }
}
