// sample_common: what every sampling kernel shares. WGSL has no #include: src/gpu/shaders.ts puts this text before
// each of them.
//
// The sampler narrows a 150-260k vocabulary to a few candidates in parallel passes without barriers (one invocation
// per unit of `unit` contiguous logits, so a CPU adapter such as SwiftShader runs them on all its threads), then
// searches the thresholds in one small workgroup and draws over the units:
//   1. sample_partials (a unit per invocation): each unit's best (w, index) and sum exp(w - unit max).
//   2. sample_reduce   (1 invocation): M = max w, the best token, log sum exp(w - M) (logprobs) into `head`.
//   3. sample_levels   (a unit per invocation; when candidates are made): each unit's kept mass
//                      sum exp((w - M) / T) over the min-p threshold, and per level (level_of: how far below M)
//                      its tokens' count and kept mass.
//   4. sample_select   (1 invocation; for top-k, top-p or a top-N): which levels become candidates, and where each
//                      unit's candidates go. Top-k and the top-N need an upper set of the logits (levels 0..J,
//                      J the smallest level whose tokens and those above number at least max(top_k, top_n, 1)).
//                      Top-p without top-k needs only the levels its threshold can lie in: the "window" from the
//                      first level whose cumulative kept mass reaches top_p * 0.999 of the kept mass to the first
//                      that reaches top_p * 1.001 (room for rounding: the search sums the same masses in another
//                      order), and, with a top-N, the top-N's upper set; the kept mass between the two (the "gap",
//                      never candidates) is written to head, and the search subtracts it from its goal. Every
//                      threshold the draw can choose then lies inside the candidates, so searching over them gives
//                      what searching the whole vocabulary gives. More than `cap`: overflow.
//   5. sample_compact  (a unit per invocation): the candidates (index, w bits) in index order. After the first
//                      round it writes them to the stage (room for every token) and each unit's stretch of it; the
//                      refining rounds (3 and 4 again) walk only the stage, a fraction of the vocabulary, and add
//                      the first round's gap as one lump; after the last, it writes the candidates from the stage.
//   6. sample_token    (one workgroup): the top-k/top-p threshold key over the candidates (on overflow over every
//                      logit), or the min-p one, into head[17]; the greedy token; the top-N.
//   7. sample_draw     `mass` (a unit per invocation; T > 0): each unit's kept mass at that threshold; then its
//                      `main` (one workgroup): each stream walks the units' kept masses to its unit, then the
//                      unit's logits: the first index whose running sum of kept mass passes u * Z.
// Every sum has a fixed order, so results depend on the logits, the seed and the step, not on the adapter.
//
// Steps 3 and 4 run up to REFINE_ROUNDS times: when the candidates are too many (over `cap`: overflow; or over
// `refine_above`, which makes the one-workgroup search slow), the next round splits the crossing levels' depth range
// into finer levels (level_of's refined mapping) and is kept only if it gives fewer candidates, all in the stage
// (sample_select); a round after one that needed no refining does nothing. A top-p window shrinks about ninefold a
// round; an upper set too large for `cap` (a top-k of many thousands, or a top-N over a flat top) falls back to the
// whole-vocabulary search.
//
// head (array<u32>): [0] M bits, [1] the best index (NONE: every token excluded), [2] log sum exp(w - M) bits,
// [3] the window's last level, [4] candidates, [5] overflow (1), [6] total kept mass bits, [7] rounds done,
// [8..10] the mapping (nb, lo, hi bits) the candidate levels refer to, [11..13] the next round's mapping,
// [14] the window's first level, [15] the upper set's end (levels below it are candidates too), [16] the gap's
// kept mass bits, [17] the threshold key the draw keeps (key >= it), [18] whether another round refines (1),
// [19] the first round's gap mass bits and [20] its tokens (not in the stage), [21] whether the first round's
// candidates reach the last level (1: the stage holds every token below its window), then [HEAD_OFFSETS + u] where unit
// u's candidates start, and [HEAD_OFFSETS + units + 2u], [.. + 1] unit u's stretch [start, end) of the stage.

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
  // Candidates above this many are refined further while rounds remain (at most `cap`).
  refine_above: u32,
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
const HEAD_OFFSETS: u32 = 24u;
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

// The level of a logit w below the maximum m, under a mapping (nb, lo, hi) of depths d = M - w (logit units):
//   hi < 0 (the first round): the largest j <= LEVELS - 1 with (j / 2)^2 <= d: level j holds
//     (j / 2)^2 <= d < ((j + 1) / 2)^2 (0.25, 1, 2.25, 4, ... 30.25; the last level is open). The bounds are exact
//     in f32 and the square root only guesses j (it may be an ulp off), so the level agrees with sample_select's
//     depth_range exactly: the refining rounds, which walk only the first round's candidates, rely on it;
//   else (a refining round, nb <= lo < hi): level 0 holds d < nb, level 1 nb <= d < lo, levels 2 .. LEVELS - 2
//     split [lo, hi) evenly, the last d >= hi.
// Monotone in w under either mapping; every kernel computes it with the same expression, so a token has one level.
// The kernels that know which mapping they bin by call root_level or refined_level themselves.
fn level_of(m: f32, w: f32, nb: f32, lo: f32, hi: f32) -> u32 {
  let d = depth(m, w);
  if (hi < 0.0) {
    return root_level(d);
  }
  return refined_level(d, nb, lo, hi);
}

fn depth(m: f32, w: f32) -> f32 {
  return max(m - w, 0.0);
}

// The first round's level of depth d.
fn root_level(d: f32) -> u32 {
  let last = f32(LEVELS - 1u);
  var r = min(floor(2.0 * sqrt(d)), last);
  r = select(r, r - 1.0, r * r * 0.25 > d);
  r = select(r, r + 1.0, r < last && (r + 1.0) * (r + 1.0) * 0.25 <= d);
  return u32(r);
}

// A refining round's level of depth d.
fn refined_level(d: f32, nb: f32, lo: f32, hi: f32) -> u32 {
  if (d < nb) {
    return 0u;
  }
  if (d < lo) {
    return 1u;
  }
  if (d >= hi) {
    return LEVELS - 1u;
  }
  return 2u + min(u32(floor((d - lo) / (hi - lo) * f32(LEVELS - 3u))), LEVELS - 4u);
}

// Whether level j is a candidate: below the upper set's end (head[15]), or inside the window (head[14] ..= head[3]).
fn is_candidate(j: u32, upper_end: u32, window_lo: u32, window_hi: u32) -> bool {
  return j < upper_end || (j >= window_lo && j <= window_hi);
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

// The passes over the logits read them 4 a load as vec4 (a CPU adapter gathers each load a lane at a time, so a
// vec4 costs about what one f32 costs): unit u's groups [x, y). The sampler's input is a multiple of 4 long (its
// own copy is padded with LOWEST, excluded), and a unit is a multiple of 4 long.
fn unit_groups(u: u32) -> vec2<u32> {
  return vec2<u32>(unit_start(u) / 4u, (unit_end(u) + 3u) / 4u);
}
