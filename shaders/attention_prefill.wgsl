// attention_prefill: causal grouped-query attention of m > 1 queries over the KV cache, tiled over the positions
// (flash-attention style: an online softmax per query row, no score buffer and no partial records). The same
// result as attention.wgsl with splits = 1; the work is shared differently: a workgroup takes WORKGROUP_SIZE x ROWS
// query rows of one KV head (a row is one (query t, query head) pair, the `group` heads sharing that KV head side
// by side), walks the positions its rows attend to in tiles of KV_TILE, and each K and V vec4 is loaded once for
// an invocation's ROWS rows (staged in workgroup memory with SHARED_KV, else read from the cache).
//   out[t, h, :] = Σ_p softmax_p(scale * q[t, h, :] · K[h / group, p, :]) V[h / group, p, :],
//   group = n_heads / n_kv_heads, query t at position pos0 + t attends to [first_t, pos0 + t] (first_t 0, or with
//   a window pos0 + t + 1 - window), as in attention.wgsl.
//
// Bindings (group 0):
//   0 q        array<vec4<f32>>  query t's heads [n_heads, head_dim] (after RoPE) at t * q_stride floats.
//   1 k_cache  array<vec4<f32>>  this layer's K cache [n_kv_heads, max_seq, head_dim] f32.
//   2 v_cache  array<vec4<f32>>  this layer's V cache [n_kv_heads, max_seq, head_dim] f32.
//   3 out      array<vec4<f32>>  the result [m, n_heads, head_dim].
//   4 params   uniform { m, n_heads, n_kv_heads, head_dim, max_seq, scale: f32, q_stride, window }
//              (q_stride a multiple of 4; window 0: none, else llama.cpp's standard sliding window).
//   5 sinks    array<f32>  [n_heads] (read when SINKS): a logit per head in the softmax's denominator with no
//              value (gpt-oss): each row's online softmax starts from (max = sink, denominator = 1).
//   6 step_params uniform { m, pos0, splits }: the forward step's uniform (src/gpu/kernel-op.ts); read: pos0.
// head_dim == HEAD_DIM, a multiple of 4; n_heads a multiple of n_kv_heads; pos0 + m <= max_seq.
//
// Composed per (HEAD_DIM, ROWS) by src/gpu/attention-prefill-kernel.ts: it sets the two consts below and writes
// out every loop marked `// unroll` (trip count HD4, ROWS or a literal), so that every index into a private array
// (the rows' queries and accumulators, HEAD_DIM floats each) is a constant: registers on a GPU, and no per-lane
// gather/scatter on SwiftShader, which turns every non-constant index into one. As written here (head dim 64,
// 4 rows, loops kept) it is the same kernel, only slower.
// Overrides: WORKGROUP_SIZE (invocations per workgroup, ROWS query rows each); KV_TILE (positions per tile, a
//   multiple of 8; with SHARED_KV the two tiles take 2 * KV_TILE * HEAD_DIM * 4 bytes of workgroup memory);
//   SHARED_KV (stage each tile in workgroup memory: GPUs; off: each invocation reads the cache directly, no
//   barriers: CPU adapters, where workgroup memory is plain memory too); SINKS: read `sinks` (else bind any buffer).
// Dispatch: 1-D, n_kv_heads * ceil(m * group / (WORKGROUP_SIZE * ROWS)) workgroups (x, spilling into y past the
//   limit: workgroup index = x + y * num_workgroups.x); workgroup b covers KV head b / blocks, rows
//   (b % blocks) * WORKGROUP_SIZE * ROWS + [0, WORKGROUP_SIZE * ROWS) of that head's m * group rows (row r: query
//   r / group, head kv_head * group + r % group); invocation lid its rows lid * ROWS + [0, ROWS). Per 8 positions
//   each row takes 8 scores, then one rescale of its accumulator.

struct Params {
  m: u32,
  n_heads: u32,
  n_kv_heads: u32,
  head_dim: u32,
  max_seq: u32,
  scale: f32,
  q_stride: u32,
  window: u32,
}

// StepParams and bindings 0-6 (q, k_cache, v_cache, out, params, sinks, step_params) come from step_params.wgsl and
// attention_common.wgsl, composed in front of this file (src/gpu/shaders.ts), as for attention.wgsl.

// Set by the composer (see above). LANES 4 (composed with `enable subgroups;`, subgroups of exactly 4 lanes, no
// SHARED_KV, HD4 a multiple of 4): each lane of a subgroup loads every 4th vec4 of each K and V row and the others
// take it with a shuffle (a constant lane after unrolling: one register shuffle), a quarter of the per-lane loads
// (SwiftShader: every load at a non-constant index is a gather, its dearest operation). LANES 1: whole rows.
const HEAD_DIM: u32 = 64u;
const ROWS: u32 = 1u;
const LANES: u32 = 1u;
const HD4: u32 = HEAD_DIM / 4u;
const HDL: u32 = HD4 / LANES;

override WORKGROUP_SIZE: u32 = 64;
override KV_TILE: u32 = 16;
override SHARED_KV: bool = true;
override SINKS: bool = false;
// The tiles' length in vec4 (1 without SHARED_KV: unused).
override TILE_VEC4: u32 = select(1u, KV_TILE * HD4, SHARED_KV);

var<workgroup> k_tile: array<vec4<f32>, TILE_VEC4>;
var<workgroup> v_tile: array<vec4<f32>, TILE_VEC4>;

// K and V at a position's offset (vec4s: into the tile with SHARED_KV, else into the cache) plus vec4 i.
fn key(at: u32, i: u32) -> vec4<f32> {
  if (SHARED_KV) {
    return k_tile[at + i];
  }
  return k_cache[at + i];
}
fn value(at: u32, i: u32) -> vec4<f32> {
  if (SHARED_KV) {
    return v_tile[at + i];
  }
  return v_cache[at + i];
}

// A vec4 this subgroup's lane `lane` holds (LANES 1: this lane's own).
fn from_lane(x: vec4<f32>, lane: u32) -> vec4<f32> {
  return x; // LANES > 1: subgroupShuffle
}

// One row's online-softmax step over 8 positions: scores (a: positions pb..pb+3, b: pb+4..pb+7) masked to the
// row's [first, end), the running max and denominator updated, the weights and the accumulator's correction out.
struct Step {
  wa: vec4<f32>,
  wb: vec4<f32>,
  correction: f32,
  running_max: f32,
  denominator: f32,
}

fn softmax_step(sa: vec4<f32>, sb: vec4<f32>, pb: u32, first: u32, end: u32, running_max: f32, denominator: f32) -> Step {
  let pa = vec4<u32>(pb) + vec4<u32>(0u, 1u, 2u, 3u);
  let pbb = pa + vec4<u32>(4u);
  let in_a = (pa >= vec4<u32>(first)) & (pa < vec4<u32>(end));
  let in_b = (pbb >= vec4<u32>(first)) & (pbb < vec4<u32>(end));
  let a = select(vec4<f32>(NEG_LARGE), sa, in_a);
  let b = select(vec4<f32>(NEG_LARGE), sb, in_b);
  let m4 = max(a, b);
  let new_max = max(running_max, max(max(m4.x, m4.y), max(m4.z, m4.w)));
  var r: Step;
  // Masked positions get weight 0 (also while new_max is still NEG_LARGE, where exp(0) would be 1).
  r.wa = select(vec4<f32>(0.0), exp(a - vec4<f32>(new_max)), in_a);
  r.wb = select(vec4<f32>(0.0), exp(b - vec4<f32>(new_max)), in_b);
  r.correction = exp(running_max - new_max);
  r.running_max = new_max;
  r.denominator = denominator * r.correction + dot(r.wa + r.wb, vec4<f32>(1.0));
  return r;
}

fn scores(qi: vec4<f32>, k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32>) -> vec4<f32> {
  return vec4<f32>(dot(qi, k0), dot(qi, k1), dot(qi, k2), dot(qi, k3));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let lane = 0u; // LANES > 1: subgroup_invocation_id
  let pos0 = step_params.pos0;
  let group = params.n_heads / params.n_kv_heads;
  let rows = params.m * group;
  let wg_rows = WORKGROUP_SIZE * ROWS;
  let blocks = (rows + wg_rows - 1u) / wg_rows;
  let b = wid.x + wid.y * nwg.x;
  let kv_head = b / blocks;
  let row0 = (b % blocks) * wg_rows;
  if (kv_head >= params.n_kv_heads) {
    return; // whole workgroups only (past the 1-D count)
  }
  // The workgroup's positions [lo, hi): its first query's first to its last query's last (uniform).
  let t_first = row0 / group;
  let t_last = min(params.m, (row0 + wg_rows + group - 1u) / group) - 1u;
  let hi = pos0 + t_last + 1u;
  let lo = select(0u, max(pos0 + t_first + 1u, params.window) - params.window, params.window > 0u);
  let cache_base = kv_head * params.max_seq * HD4;
  let last = hi - 1u;

  // This invocation's rows row0 + lid * ROWS + r (r < ROWS; past the last row: a copy of it, not written).
  var query: array<vec4<f32>, ROWS * HD4>;
  var acc = array<vec4<f32>, ROWS * HD4>();
  var first: array<u32, ROWS>;
  var end: array<u32, ROWS>;
  var out_base: array<u32, ROWS>;
  var running_max: array<f32, ROWS>;
  var denominator: array<f32, ROWS>;
  // unroll
  for (var r = 0u; r < ROWS; r++) {
    let row = min(row0 + lid * ROWS + r, rows - 1u);
    let t = row / group;
    let head = kv_head * group + row % group;
    end[r] = pos0 + t + 1u;
    first[r] = select(0u, max(end[r], params.window) - params.window, params.window > 0u);
    out_base[r] = (t * params.n_heads + head) * HD4;
    let q_base = t * (params.q_stride / 4u) + head * HD4;
    // unroll
    for (var i = 0u; i < HD4; i++) {
      query[r * HD4 + i] = q[q_base + i] * params.scale;
    }
    running_max[r] = NEG_LARGE;
    denominator[r] = 0.0;
    if (SINKS) {
      running_max[r] = sinks[head];
      denominator[r] = 1.0;
    }
  }

  for (var p0 = lo; p0 < hi; p0 += KV_TILE) {
    if (SHARED_KV) {
      // Stage the tile's K and V rows (positions past hi repeat the last one: masked below).
      for (var e = lid; e < KV_TILE * HD4; e += WORKGROUP_SIZE) {
        let at = cache_base + min(p0 + e / HD4, last) * HD4 + e % HD4;
        k_tile[e] = k_cache[at];
        v_tile[e] = v_cache[at];
      }
      workgroupBarrier();
    }
    // Eight positions a step: each K and V vec4 loaded once for all ROWS rows.
    for (var j = 0u; j < KV_TILE; j += 8u) {
      let pb = p0 + j;
      // Where each of the 8 positions' rows starts (past hi: the last position again, masked below).
      var at: array<u32, 8>;
      // unroll
      for (var e = 0u; e < 8u; e++) {
        at[e] = select(cache_base + min(pb + e, last) * HD4, (j + e) * HD4, SHARED_KV);
      }
      var sa = array<vec4<f32>, ROWS>(); // (an explicit zero: a loop body's var without one kept the last step's sums here)
      var sb = array<vec4<f32>, ROWS>();
      // LANES > 1: this lane's vec4s c * LANES + lane of the 8 K rows.
      var kl: array<vec4<f32>, 8u * HDL>;
      if (LANES > 1u) {
        // unroll
        for (var e = 0u; e < 8u; e++) {
          // unroll
          for (var c = 0u; c < HDL; c++) {
            kl[e * HDL + c] = key(at[e], c * LANES + lane);
          }
        }
      }
      // unroll
      for (var i = 0u; i < HD4; i++) {
        var k0: vec4<f32>;
        var k1: vec4<f32>;
        var k2: vec4<f32>;
        var k3: vec4<f32>;
        var k4: vec4<f32>;
        var k5: vec4<f32>;
        var k6: vec4<f32>;
        var k7: vec4<f32>;
        if (LANES > 1u) {
          k0 = from_lane(kl[i / LANES], i % LANES);
          k1 = from_lane(kl[HDL + i / LANES], i % LANES);
          k2 = from_lane(kl[2u * HDL + i / LANES], i % LANES);
          k3 = from_lane(kl[3u * HDL + i / LANES], i % LANES);
          k4 = from_lane(kl[4u * HDL + i / LANES], i % LANES);
          k5 = from_lane(kl[5u * HDL + i / LANES], i % LANES);
          k6 = from_lane(kl[6u * HDL + i / LANES], i % LANES);
          k7 = from_lane(kl[7u * HDL + i / LANES], i % LANES);
        } else {
          k0 = key(at[0], i);
          k1 = key(at[1], i);
          k2 = key(at[2], i);
          k3 = key(at[3], i);
          k4 = key(at[4], i);
          k5 = key(at[5], i);
          k6 = key(at[6], i);
          k7 = key(at[7], i);
        }
        // unroll
        for (var r = 0u; r < ROWS; r++) {
          let qi = query[r * HD4 + i];
          sa[r] += scores(qi, k0, k1, k2, k3);
          sb[r] += scores(qi, k4, k5, k6, k7);
        }
      }
      var st: array<Step, ROWS>;
      var vl: array<vec4<f32>, 8u * HDL>;
      if (LANES > 1u) {
        // unroll
        for (var e = 0u; e < 8u; e++) {
          // unroll
          for (var c = 0u; c < HDL; c++) {
            vl[e * HDL + c] = value(at[e], c * LANES + lane);
          }
        }
      }
      // unroll
      for (var r = 0u; r < ROWS; r++) {
        st[r] = softmax_step(sa[r], sb[r], pb, first[r], end[r], running_max[r], denominator[r]);
        running_max[r] = st[r].running_max;
        denominator[r] = st[r].denominator;
      }
      // unroll
      for (var i = 0u; i < HD4; i++) {
        var v0: vec4<f32>;
        var v1: vec4<f32>;
        var v2: vec4<f32>;
        var v3: vec4<f32>;
        var v4: vec4<f32>;
        var v5: vec4<f32>;
        var v6: vec4<f32>;
        var v7: vec4<f32>;
        if (LANES > 1u) {
          v0 = from_lane(vl[i / LANES], i % LANES);
          v1 = from_lane(vl[HDL + i / LANES], i % LANES);
          v2 = from_lane(vl[2u * HDL + i / LANES], i % LANES);
          v3 = from_lane(vl[3u * HDL + i / LANES], i % LANES);
          v4 = from_lane(vl[4u * HDL + i / LANES], i % LANES);
          v5 = from_lane(vl[5u * HDL + i / LANES], i % LANES);
          v6 = from_lane(vl[6u * HDL + i / LANES], i % LANES);
          v7 = from_lane(vl[7u * HDL + i / LANES], i % LANES);
        } else {
          v0 = value(at[0], i);
          v1 = value(at[1], i);
          v2 = value(at[2], i);
          v3 = value(at[3], i);
          v4 = value(at[4], i);
          v5 = value(at[5], i);
          v6 = value(at[6], i);
          v7 = value(at[7], i);
        }
        // unroll
        for (var r = 0u; r < ROWS; r++) {
          let s = st[r];
          acc[r * HD4 + i] = acc[r * HD4 + i] * s.correction + s.wa.x * v0 + s.wa.y * v1 + s.wa.z * v2 + s.wa.w * v3 + s.wb.x * v4 + s.wb.y * v5 + s.wb.z * v6 + s.wb.w * v7;
        }
      }
    }
    if (SHARED_KV) {
      workgroupBarrier();
    }
  }
  // unroll
  for (var r = 0u; r < ROWS; r++) {
    if (row0 + lid * ROWS + r < rows) {
      let inverse = 1.0 / denominator[r];
      // unroll
      for (var i = 0u; i < HD4; i++) {
        out[out_base[r] + i] = acc[r * HD4 + i] * inverse;
      }
    }
  }
}
