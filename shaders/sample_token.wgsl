// sample_token: draws one token from processed logits (logits_process.wgsl) with temperature, min-p, top-k and
// top-p, using a counter-based generator (Philox4x32-10 keyed by the seed, counter = step), so a seed and a
// step give the same token on any adapter. One workgroup computes the distribution once, then draws `streams`
// tokens from it (thread t draws streams t, t + 256, ...): stream s uses counter step + s (the engine uses one stream; tests draw thousands in one
// dispatch). The workgroup size is fixed (256) and every reduction has a fixed order (per-thread partials summed
// by one thread), so results do not depend on the adapter.
//
// The distribution, with w the processed logits, M = max w, T the temperature, q_i = exp((w_i - M) / T):
//   excluded tokens (w = LOWEST, -inf or NaN) have q = 0;
//   min-p keeps q_i >= min_p (relative to q_max = 1); top-k keeps w_i >= the k-th largest w (ties kept);
//   top-p then keeps the largest threshold set {w_i >= t} whose mass is >= top_p of what min-p/top-k kept;
//   the token is the first index whose running sum of kept q exceeds u * Z (u uniform in [0,1), 24 bits).
//   T <= 0 is greedy: the largest w, ties to the lowest index.
// Output: per stream s, out[2s] = the token id (0xFFFFFFFF if every token is excluded) and out[2s + 1] its
// logprob (f32 bits); then top_n (id, logprob bits) pairs, best first, at out[2 * streams + 2j]. Logprobs are log-softmax of w at T = 1
// (after penalties, bias and the mask; before temperature and truncation).
// With update_counts != 0, stream 0 adds 1 to counts[token] (for the penalties of the next step).
//
// Bindings (group 0):
//   0 work    array<f32>  [count] processed logits
//   1 out     array<u32>  [2 * streams + 2 * top_n]
//   2 counts  array<u32>  [count] (written only with update_counts)
//   3 params  uniform
// Dispatch: exactly 1 workgroup.

struct Params {
  count: u32,
  streams: u32,
  seed_lo: u32,
  seed_hi: u32,
  step: u32,
  top_k: u32,
  top_n: u32,
  update_counts: u32,
  temperature: f32,
  top_p: f32,
  min_p: f32,
  _pad: f32,
}

@group(0) @binding(0) var<storage, read> work: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

const WG: u32 = 256u;
const NONE: u32 = 0xffffffffu;
const LOWEST: f32 = -3.4028234663852886e38;
const MAX_TOP_N: u32 = 20u;
const BINS: u32 = 8u;

var<workgroup> red_f: array<f32, WG>;
var<workgroup> red_u: array<u32, WG>;
var<workgroup> shared_u: u32;
var<workgroup> shared_f: f32;
var<workgroup> bins: array<f32, 2048>; // BINS * WG
var<workgroup> bin_totals: array<f32, 8>;

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

// ---- helpers ----------------------------------------------------------------------------------------------

fn excluded(w: f32) -> bool {
  return !(w > LOWEST); // LOWEST, -inf and NaN
}

// An order-preserving u32 key for f32 (larger float, larger key); excluded values map to 0.
fn key_of(w: f32) -> u32 {
  if (excluded(w)) {
    return 0u;
  }
  let bits = bitcast<u32>(w);
  return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

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

fn sum_u(lid: u32, v: u32) -> u32 {
  red_u[lid] = v;
  workgroupBarrier();
  if (lid == 0u) {
    var total = 0u;
    for (var t = 0u; t < WG; t++) {
      total += red_u[t];
    }
    shared_u = total;
  }
  return workgroupUniformLoad(&shared_u);
}

// (w, index) beats (best_w, best_i): larger w, or equal w and lower index; excluded never beats.
fn beats(w: f32, i: u32, best_w: f32, best_i: u32) -> bool {
  if (i == NONE || excluded(w)) {
    return false;
  }
  return best_i == NONE || w > best_w || (w == best_w && i < best_i);
}

// The best (w, index) that is strictly below (below_w, below_i) in the beats order (all when below_i == NONE).
fn best_below(lid: u32, below_w: f32, below_i: u32) -> u32 {
  let count = params.count;
  var best_w = 0.0;
  var best_i = NONE;
  for (var i = lid; i < count; i += WG) {
    let w = work[i];
    let below = below_i == NONE || beats(below_w, below_i, w, i);
    if (below && beats(w, i, best_w, best_i)) {
      best_w = w;
      best_i = i;
    }
  }
  red_f[lid] = best_w;
  red_u[lid] = best_i;
  workgroupBarrier();
  if (lid == 0u) {
    var w = red_f[0];
    var i = red_u[0];
    for (var t = 1u; t < WG; t++) {
      if (beats(red_f[t], red_u[t], w, i)) {
        w = red_f[t];
        i = red_u[t];
      }
    }
    shared_u = i;
  }
  return workgroupUniformLoad(&shared_u);
}

// The mass of a token for threshold searches: 1 (counting, for top-k) or q = exp((w - M) / T) (top-p).
fn measure(w: f32, use_mass: bool, m: f32, inv_t: f32) -> f32 {
  return select(1.0, exp((w - m) * inv_t), use_mass);
}

// The total measure of tokens with key >= t (t >= 1).
fn measure_at_least(lid: u32, t: u32, use_mass: bool, m: f32, inv_t: f32) -> f32 {
  var z = 0.0;
  for (var i = lid; i < params.count; i += WG) {
    let w = work[i];
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
    for (var i = lid; i < params.count; i += WG) {
      let w = work[i];
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
    if (lid < BINS) {
      var total = 0.0;
      for (var t = 0u; t < WG; t++) {
        total += bins[lid * WG + t];
      }
      bin_totals[lid] = total;
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

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32) {
  let count = params.count;
  let streams = params.streams;
  let top_n = min(params.top_n, MAX_TOP_N);

  // The best token: the greedy answer and M.
  let best = best_below(lid, 0.0, NONE);
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
  let m = work[best];

  // log-sum-exp at T = 1, for logprobs.
  var z1 = 0.0;
  for (var i = lid; i < count; i += WG) {
    let w = work[i];
    if (!excluded(w)) {
      z1 += exp(w - m);
    }
  }
  let log_z1 = log(sum_f(lid, z1));

  if (params.temperature > 0.0) {
    let inv_t = 1.0 / params.temperature;
    let top_key = key_of(m);
    // min-p: (w - M) / T >= ln(min_p)
    var threshold = 1u; // keys >= 1: every token that is not excluded
    if (params.min_p > 0.0) {
      threshold = max(threshold, key_of(m + log(params.min_p) * params.temperature));
      threshold = min(threshold, top_key);
    }
    // top-k: the largest key t with count(key >= t) >= k.
    if (params.top_k > 0u && params.top_k < count) {
      threshold = search_threshold(lid, threshold, top_key, f32(params.top_k), false, m, inv_t);
    }
    // top-p: the largest key t whose mass reaches top_p of the mass kept so far.
    if (params.top_p < 1.0) {
      let goal = params.top_p * measure_at_least(lid, threshold, true, m, inv_t);
      threshold = search_threshold(lid, threshold, top_key, goal, true, m, inv_t);
    }

    // Thread t's partial mass over its contiguous chunk [t * chunk, (t + 1) * chunk).
    let chunk = (count + WG - 1u) / WG;
    var part = 0.0;
    for (var i = min(lid * chunk, count); i < min(lid * chunk + chunk, count); i++) {
      let w = work[i];
      if (key_of(w) >= threshold) {
        part += exp((w - m) * inv_t);
      }
    }
    red_f[lid] = part;
    workgroupBarrier();
    // The draws, one stream per thread: find the chunk holding u * Z (summing the partials in order, as
    // every thread does alike), then the token inside it.
    let used = (count + chunk - 1u) / chunk;
    var total = 0.0;
    for (var t = 0u; t < used; t++) {
      total += red_f[t];
    }
    let key = vec2<u32>(params.seed_lo, params.seed_hi);
    for (var s = lid; s < streams; s += WG) {
      let bits = philox(vec4<u32>(params.step + s, 0u, 0u, 0u), key);
      let u = f32(bits.x >> 8u) * (1.0 / 16777216.0);
      var goal = u * total;
      var owner = NONE;
      var last_owner = 0u;
      for (var t = 0u; t < used; t++) {
        if (red_f[t] > 0.0) {
          last_owner = t;
          if (owner == NONE) {
            if (goal < red_f[t]) {
              owner = t;
            } else {
              goal -= red_f[t];
            }
          }
        }
      }
      if (owner == NONE) {
        // Rounding left the goal past the end: the last kept token.
        owner = last_owner;
        goal = red_f[owner];
      }
      var pick = NONE;
      var last = NONE;
      for (var i = owner * chunk; i < min(owner * chunk + chunk, count); i++) {
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
      let chosen = select(pick, last, pick == NONE);
      out[2u * s] = chosen;
      out[2u * s + 1u] = bitcast<u32>(work[chosen] - m - log_z1);
      if (s == 0u && params.update_counts != 0u) {
        counts[chosen] = counts[chosen] + 1u;
      }
    }
  } else if (lid == 0u) {
    for (var s = 0u; s < streams; s++) {
      out[2u * s] = best;
      out[2u * s + 1u] = bitcast<u32>(m - m - log_z1);
    }
    if (params.update_counts != 0u) {
      counts[best] = counts[best] + 1u;
    }
  }

  // top_n alternatives, best first.
  var prev_w = 0.0;
  var prev_i = NONE;
  for (var j = 0u; j < top_n; j++) {
    let next = best_below(lid, prev_w, prev_i);
    if (lid == 0u) {
      out[2u * streams + 2u * j] = next;
      out[2u * streams + 2u * j + 1u] = select(bitcast<u32>(work[next] - m - log_z1), bitcast<u32>(LOWEST), next == NONE);
    }
    if (next == NONE) {
      break;
    }
    prev_w = work[next];
    prev_i = next;
  }
}
