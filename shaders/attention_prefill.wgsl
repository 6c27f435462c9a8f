// attention_prefill: causal grouped-query attention of m > 1 queries over the KV cache, tiled over the positions
// (flash-attention style: an online softmax per query row, no score buffer and no partial records). The same
// result as attention.wgsl with splits = 1; the work is shared differently: a workgroup takes WORKGROUP_SIZE query
// rows of one KV head (a row is one (query t, query head) pair, the `group` heads sharing that KV head side by
// side), walks the positions its rows attend to in tiles of KV_TILE, and each tile's K and V rows are loaded once
// for all its rows (into workgroup memory with SHARED_KV, else read by every row at the same address).
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
// head_dim == HEAD_DIM, a multiple of 4, at most 256; n_heads a multiple of n_kv_heads; pos0 + m <= max_seq.
// Overrides: WORKGROUP_SIZE (query rows per workgroup, one per invocation); HEAD_DIM (required: the tiles' size
//   and the loops' trip counts); KV_TILE (positions per tile, a multiple of 4; with SHARED_KV the two tiles take
//   2 * KV_TILE * HEAD_DIM * 4 bytes of workgroup memory); SHARED_KV (stage each tile in workgroup memory: GPUs;
//   off: each row reads the cache directly, no barriers: CPU adapters, where workgroup memory is plain memory too);
//   SINKS: read `sinks` (else bind any buffer).
// Dispatch: 1-D, n_kv_heads * ceil(m * group / WORKGROUP_SIZE) workgroups (x, spilling into y past the limit:
//   workgroup index = x + y * num_workgroups.x); workgroup b covers KV head b / blocks, rows
//   (b % blocks) * WORKGROUP_SIZE + [0, WORKGROUP_SIZE) of that head's m * group rows (row r: query r / group, head
//   kv_head * group + r % group). One invocation per row keeps its query and accumulator (HEAD_DIM floats each)
//   in private memory; per tile it takes all KV_TILE scores, then one rescale of its accumulator.

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

struct StepParams {
  m: u32,
  pos0: u32,
  splits: u32,
}

@group(0) @binding(0) var<storage, read> q: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> k_cache: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> v_cache: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> sinks: array<f32>;
@group(0) @binding(6) var<uniform> step_params: StepParams;

override WORKGROUP_SIZE: u32 = 64;
override HEAD_DIM: u32 = 64;
override KV_TILE: u32 = 16;
override ROWS: u32 = 1;
override SHARED_KV: bool = true;
override SINKS: bool = false;
// The tiles' length in vec4 (1 without SHARED_KV: unused).
override TILE_VEC4: u32 = select(1u, KV_TILE * HEAD_DIM / 4u, SHARED_KV);

const MAX_HEAD_DIM4: u32 = 64u;
// Finite stand-in for -infinity: exp(NEG_LARGE - s) is 0 for any score s.
const NEG_LARGE: f32 = -3.0e38;

var<workgroup> k_tile: array<vec4<f32>, TILE_VEC4>;
var<workgroup> v_tile: array<vec4<f32>, TILE_VEC4>;

// Where this workgroup reads the cache: KV head base (vec4s) and the last position any of its rows reads.
struct Span {
  cache_base: u32,
  last: u32,
  hd4: u32,
}

// K and V at tile position j (position p0 + j) and vec4 i of the head.
fn key(s: Span, p0: u32, j: u32, i: u32) -> vec4<f32> {
  if (SHARED_KV) {
    return k_tile[j * s.hd4 + i];
  }
  return k_cache[s.cache_base + min(p0 + j, s.last) * s.hd4 + i];
}
fn value(s: Span, p0: u32, j: u32, i: u32) -> vec4<f32> {
  if (SHARED_KV) {
    return v_tile[j * s.hd4 + i];
  }
  return v_cache[s.cache_base + min(p0 + j, s.last) * s.hd4 + i];
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
  let hd4 = HEAD_DIM / 4u;
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
  let span = Span(kv_head * params.max_seq * hd4, hi - 1u, hd4);

  // This invocation's rows row0 + lid * ROWS + r (r < ROWS; past the last row: a copy of it, not written).
  var query = array<vec4<f32>, 256>();
  var acc = array<vec4<f32>, 256>();
  var first = vec4<u32>(0u);
  var end = vec4<u32>(0u);
  var out_base = vec4<u32>(0u);
  var running_max = vec4<f32>(NEG_LARGE);
  var denominator = vec4<f32>(0.0);
  for (var r = 0u; r < ROWS; r++) {
    let row = min(row0 + lid * ROWS + r, rows - 1u);
    let t = row / group;
    let head = kv_head * group + row % group;
    end[r] = pos0 + t + 1u;
    first[r] = select(0u, max(end[r], params.window) - params.window, params.window > 0u);
    out_base[r] = (t * params.n_heads + head) * hd4;
    let q_base = t * (params.q_stride / 4u) + head * hd4;
    for (var i = 0u; i < hd4; i++) {
      query[r * hd4 + i] = q[q_base + i] * params.scale;
    }
    if (SINKS) {
      running_max[r] = sinks[head];
      denominator[r] = 1.0;
    }
  }

  for (var p0 = lo; p0 < hi; p0 += KV_TILE) {
    if (SHARED_KV) {
      // Stage the tile's K and V rows (positions past hi repeat the last one: masked below).
      for (var e = lid; e < KV_TILE * hd4; e += WORKGROUP_SIZE) {
        let at = span.cache_base + min(p0 + e / hd4, span.last) * hd4 + e % hd4;
        k_tile[e] = k_cache[at];
        v_tile[e] = v_cache[at];
      }
      workgroupBarrier();
    }
    // Eight positions a step: each K and V vec4 loaded once for all ROWS rows (unrolled: constant indices).
    for (var j = 0u; j < KV_TILE; j += 8u) {
      var sa = array<vec4<f32>, 4>();
      var sb = array<vec4<f32>, 4>();
      for (var i = 0u; i < hd4; i++) {
        let k0 = key(span, p0, j, i);
        let k1 = key(span, p0, j + 1u, i);
        let k2 = key(span, p0, j + 2u, i);
        let k3 = key(span, p0, j + 3u, i);
        let k4 = key(span, p0, j + 4u, i);
        let k5 = key(span, p0, j + 5u, i);
        let k6 = key(span, p0, j + 6u, i);
        let k7 = key(span, p0, j + 7u, i);
        let q0 = query[i];
        sa[0] += scores(q0, k0, k1, k2, k3);
        sb[0] += scores(q0, k4, k5, k6, k7);
        if (ROWS > 1u) {
          let q1 = query[hd4 + i];
          sa[1] += scores(q1, k0, k1, k2, k3);
          sb[1] += scores(q1, k4, k5, k6, k7);
        }
        if (ROWS > 2u) {
          let q2 = query[2u * hd4 + i];
          sa[2] += scores(q2, k0, k1, k2, k3);
          sb[2] += scores(q2, k4, k5, k6, k7);
        }
        if (ROWS > 3u) {
          let q3 = query[3u * hd4 + i];
          sa[3] += scores(q3, k0, k1, k2, k3);
          sb[3] += scores(q3, k4, k5, k6, k7);
        }
      }
      let pb = p0 + j;
      let s0 = softmax_step(sa[0], sb[0], pb, first[0], end[0], running_max[0], denominator[0]);
      var s1 = s0;
      var s2 = s0;
      var s3 = s0;
      running_max[0] = s0.running_max;
      denominator[0] = s0.denominator;
      if (ROWS > 1u) {
        s1 = softmax_step(sa[1], sb[1], pb, first[1], end[1], running_max[1], denominator[1]);
        running_max[1] = s1.running_max;
        denominator[1] = s1.denominator;
      }
      if (ROWS > 2u) {
        s2 = softmax_step(sa[2], sb[2], pb, first[2], end[2], running_max[2], denominator[2]);
        running_max[2] = s2.running_max;
        denominator[2] = s2.denominator;
      }
      if (ROWS > 3u) {
        s3 = softmax_step(sa[3], sb[3], pb, first[3], end[3], running_max[3], denominator[3]);
        running_max[3] = s3.running_max;
        denominator[3] = s3.denominator;
      }
      for (var i = 0u; i < hd4; i++) {
        let v0 = value(span, p0, j, i);
        let v1 = value(span, p0, j + 1u, i);
        let v2 = value(span, p0, j + 2u, i);
        let v3 = value(span, p0, j + 3u, i);
        let v4 = value(span, p0, j + 4u, i);
        let v5 = value(span, p0, j + 5u, i);
        let v6 = value(span, p0, j + 6u, i);
        let v7 = value(span, p0, j + 7u, i);
        acc[i] = acc[i] * s0.correction + s0.wa.x * v0 + s0.wa.y * v1 + s0.wa.z * v2 + s0.wa.w * v3 + s0.wb.x * v4 + s0.wb.y * v5 + s0.wb.z * v6 + s0.wb.w * v7;
        if (ROWS > 1u) {
          let a = hd4 + i;
          acc[a] = acc[a] * s1.correction + s1.wa.x * v0 + s1.wa.y * v1 + s1.wa.z * v2 + s1.wa.w * v3 + s1.wb.x * v4 + s1.wb.y * v5 + s1.wb.z * v6 + s1.wb.w * v7;
        }
        if (ROWS > 2u) {
          let a = 2u * hd4 + i;
          acc[a] = acc[a] * s2.correction + s2.wa.x * v0 + s2.wa.y * v1 + s2.wa.z * v2 + s2.wa.w * v3 + s2.wb.x * v4 + s2.wb.y * v5 + s2.wb.z * v6 + s2.wb.w * v7;
        }
        if (ROWS > 3u) {
          let a = 3u * hd4 + i;
          acc[a] = acc[a] * s3.correction + s3.wa.x * v0 + s3.wa.y * v1 + s3.wa.z * v2 + s3.wa.w * v3 + s3.wb.x * v4 + s3.wb.y * v5 + s3.wb.z * v6 + s3.wb.w * v7;
        }
      }
    }
    if (SHARED_KV) {
      workgroupBarrier();
    }
  }
  for (var r = 0u; r < ROWS; r++) {
    if (row0 + lid * ROWS + r < rows) {
      let inverse = 1.0 / denominator[r];
      for (var i = 0u; i < hd4; i++) {
        out[out_base[r] + i] = acc[r * hd4 + i] * inverse;
      }
    }
  }
}
