// sample_common: what every sampling kernel shares. WGSL has no #include: src/gpu/shaders.ts puts this text before
// each of them.
//
// The sampler narrows a 150-260k vocabulary to a few candidates in parallel passes without barriers (one invocation
// per unit of `unit` contiguous logits, so a CPU adapter such as SwiftShader runs them on all its threads), then
// searches the thresholds and draws in one small workgroup:
//   1. sample_partials (a unit per invocation): each unit's best (w, index) and sum exp(w - unit max).
//   2. sample_reduce   (1 invocation): M = max w, the best token, log sum exp(w - M) (logprobs) into `head`.
//   3. sample_levels   (a unit per invocation; when T > 0 or a top-N is asked): each unit's kept mass
//                      sum exp((w - M) / T) over the min-p threshold, and per level (level_of: how far below M)
//                      its tokens' count and kept mass.
//   4. sample_select   (1 invocation; for top-k, top-p or a top-N): the smallest level J whose tokens and those
//                      above (an upper set of the logits) number at least max(top_k, top_n, 1) and,
//                      for top-p without top-k, hold top_p of the kept mass; where each unit's candidates go.
//                      Every threshold the draw can choose then lies inside the candidates, so searching and drawing
//                      over them gives what searching the whole vocabulary gives. More than `cap`: overflow.
//   5. sample_compact  (a unit per invocation): the candidates (index, w bits) in index order.
//   6. sample_token    (one workgroup): thresholds and draw over the candidates (on overflow over every logit), or,
//                      without top-k and top-p, a walk over the units' kept masses and then one unit.
// Every sum has a fixed order, so results depend on the logits, the seed and the step, not on the adapter.
//
// Steps 3 and 4 run up to REFINE_ROUNDS times: when level J holds too many tokens (overflow), the next round splits
// J's depth range into finer levels; a round after one without overflow does nothing.
//
// head (array<u32>): [0] M bits, [1] the best index (NONE: every token excluded), [2] log sum exp(w - M) bits,
// [3] J, [4] candidates, [5] overflow (1), [6] total kept mass bits, [7] rounds done, [8..9] the mapping (lo, hi
// bits) J refers to, [10..11] the next round's mapping, then [12 + u] where unit u's candidates start.

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
  units: u32,
  unit: u32,
  cap: u32,
  // bit 0: top-k applies (0 < top_k < count); bit 1: top-p applies (top_p < 1); bit 2: candidates were made.
  flags: u32,
}

const NONE: u32 = 0xffffffffu;
const LOWEST: f32 = -3.4028234663852886e38;
const MAX_TOP_N: u32 = 20u;
const LEVELS: u32 = 12u;
const HEAD_OFFSETS: u32 = 12u;
const FLAG_TOP_K: u32 = 1u;
const FLAG_TOP_P: u32 = 2u;
const FLAG_CANDIDATES: u32 = 4u;

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

// (w, index) beats (best_w, best_i): larger w, or equal w and lower index; excluded never beats.
fn beats(w: f32, i: u32, best_w: f32, best_i: u32) -> bool {
  if (i == NONE || excluded(w)) {
    return false;
  }
  return best_i == NONE || w > best_w || (w == best_w && i < best_i);
}

// The level of a logit w below the maximum m, under a mapping (lo, hi) of depths d = M - w (logit units):
//   hi < 0 (the first round): floor(2 sqrt(d)), at most LEVELS - 1: level j holds (j / 2)^2 <= d < ((j + 1) / 2)^2
//     (0.25, 1, 2.25, 4, ... 30.25; the last level is open);
//   else (a refining round): level 0 holds d < lo, levels 1 .. LEVELS - 2 split [lo, hi) evenly, the last d >= hi.
// Monotone in w under either mapping; every kernel computes it with the same expression, so a token has one level.
fn level_of(m: f32, w: f32, lo: f32, hi: f32) -> u32 {
  let d = max(m - w, 0.0);
  if (hi < 0.0) {
    return u32(min(floor(2.0 * sqrt(d)), f32(LEVELS - 1u)));
  }
  if (d < lo) {
    return 0u;
  }
  if (d >= hi) {
    return LEVELS - 1u;
  }
  return 1u + min(u32(floor((d - lo) / (hi - lo) * f32(LEVELS - 2u))), LEVELS - 3u);
}

fn inv_temperature() -> f32 {
  return select(1.0, 1.0 / params.temperature, params.temperature > 0.0);
}

// The min-p threshold as a key: tokens with key >= it are kept by min-p (1: every token that is not excluded).
fn min_p_threshold(m: f32) -> u32 {
  if (params.temperature > 0.0 && params.min_p > 0.0) {
    return min(max(1u, key_of(m + log(params.min_p) * params.temperature)), key_of(m));
  }
  return 1u;
}

fn unit_start(u: u32) -> u32 {
  return min(u * params.unit, params.count);
}

fn unit_end(u: u32) -> u32 {
  return min(u * params.unit + params.unit, params.count);
}
