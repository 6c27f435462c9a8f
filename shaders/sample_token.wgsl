// sample_token: after the candidates (see sample_common.wgsl for the whole), one workgroup finds the threshold key
// the draw keeps (temperature, min-p, top-k, top-p) into head[17], emits the greedy token (T <= 0), and writes the
// top-N. sample_draw.wgsl then draws.
//
// The distribution, with w the processed logits, M = max w, T the temperature, q_i = exp((w_i - M) / T):
//   excluded tokens (w = LOWEST, -inf or NaN) have q = 0;
//   min-p keeps q_i >= min_p (relative to q_max = 1); top-k keeps w_i >= the k-th largest w (ties kept);
//   top-p then keeps the largest threshold set {w_i >= t} whose mass is >= top_p of what min-p/top-k kept;
//   the token is the first index whose running sum of kept q exceeds u * Z (u uniform in [0,1), 24 bits).
//   T <= 0 is greedy: the largest w, ties to the lowest index.
// Where the thresholds are searched: over the candidates sample_compact wrote (flag FLAG_CANDIDATES, no overflow:
// they hold every token a threshold can lie at, in index order; under a top-p window the kept mass of the gap above
// the window, head[16], comes off the goal), else over every logit (one workgroup: the slow path, for upper sets
// the refining rounds could not bring under `cap`).
// The workgroup size WG is an override: small on CPU adapters, where barriers cost most.
// Output: on every token excluded, NONE (0xFFFFFFFF) and LOWEST for each stream; greedy, per stream s,
// out[2s] = the token id and out[2s + 1] its logprob (f32 bits); then top_n (id, logprob bits) pairs, best first,
// at out[2 * streams + 2j]. Logprobs are log-softmax of w at T = 1 (after penalties, bias and the mask; before
// temperature and truncation). Greedy with update_counts != 0 adds 1 to counts[token] (the next step's penalties).
//
// Bindings (group 0):
//   0 work    array<f32>  [count] processed logits
//   1 head    array<u32>  (sample_reduce, sample_select; head[17] written here)
//   2 cand    array<u32>  [2 * cap] (sample_compact)
//   3 out     array<u32>  [2 * streams + 2 * top_n]
//   4 counts  array<u32>  [count] (written only with update_counts)
//   5 params  uniform
// Dispatch: exactly 1 workgroup.

@group(0) @binding(0) var<storage, read> work: array<f32>;
@group(0) @binding(1) var<storage, read_write> head: array<u32>;
@group(0) @binding(2) var<storage, read_write> cand: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<storage, read_write> counts: array<u32>;
@group(0) @binding(5) var<uniform> params: Params;

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

fn emit(s: u32, chosen: u32, m: f32, log_z1: f32) {
  out[2u * s] = chosen;
  out[2u * s + 1u] = bitcast<u32>(work[chosen] - m - log_z1);
  if (s == 0u && params.update_counts != 0u) {
    counts[chosen] = counts[chosen] + 1u;
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) lid: u32) {
  let streams = params.streams;
  let top_n = min(params.top_n, MAX_TOP_N);
  let candidates = (params.flags & FLAG_CANDIDATES) != 0u;
  use_cand = candidates && head[5] == 0u;
  n_src = select(params.count, head[4], use_cand);

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
    let top_key = key_of(m);
    // top-k: the largest key t with count(key >= t) >= k.
    if ((params.flags & FLAG_TOP_K) != 0u) {
      threshold = search_threshold(lid, threshold, top_key, f32(params.top_k), false, m, inv_t);
    }
    // top-p: the largest key t whose mass reaches top_p of the mass kept so far (after top-k: over the source
    // set, which holds all of it; min-p alone: the units' kept masses, which count every token). Under a top-p
    // window the candidates lack the gap above it: its mass comes off the goal.
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
      var goal = params.top_p * kept;
      if (use_cand && (params.flags & FLAG_TOP_K) == 0u) {
        goal -= bitcast<f32>(head[16]);
      }
      threshold = search_threshold(lid, threshold, top_key, goal, true, m, inv_t);
    }
    if (lid == 0u) {
      head[17] = threshold;
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
