// attention_rope: what the two kernels of attention over the KV cache with RoPE inside share (attention.wgsl, an
// invocation per query heads' chunk and split; attention_decode.wgsl, a workgroup per chunk and split): their params,
// overrides and composed consts, the RoPE and q/k-norm bindings, which (query, KV head, chunk, split) a unit of work
// is and the positions it attends to, and the rotation of a head's vec4s. src/gpu/shaders.ts
// puts it after step_params.wgsl, attention_common.wgsl and rope_rotation.wgsl, before either kernel.
// Params (binding 4): attention.wgsl's header says what each field is.

struct Params {
  m: u32,
  n_heads: u32,
  n_kv_heads: u32,
  head_dim: u32,
  max_seq: u32,
  scale: f32,
  q_stride: u32,
  window: u32,
  rope_eps: f32,
  rot_dims: u32,
  mscale: f32,
}

override SINKS: bool = false;
override ROPE: bool = false;
override NEOX: bool = false;
override QK_NORM: bool = false;

// Set by the composer (src/gpu/attention-compose.ts): the head dim (params.head_dim), with ROPE the rotated dims
// (params.rot_dims), and HEADS, the query heads (of one KV head) per invocation or workgroup; every loop marked
// `// unroll` is written out there, so that each index into the private arrays (queries, accumulators) is a constant.
const HEAD_DIM: u32 = 64u;
const ROT_DIMS: u32 = 64u;
const HEADS: u32 = 1u;
const HD4: u32 = HEAD_DIM / 4u;
const ROT4: u32 = ROT_DIMS / 4u;
const HALF4: u32 = ROT4 / 2u;

@group(0) @binding(7) var<storage, read> inv_freq: array<f32>;
@group(0) @binding(8) var<storage, read> q_norm: array<f32>;
@group(0) @binding(9) var<storage, read> k_norm: array<f32>;

// A unit of work (an invocation of attention.wgsl, a workgroup of attention_decode.wgsl): query t (at position pos0 +
// t) of KV head kv_head, `count` (1..HEADS) of its group's query heads from first_head on (a slot past them repeats
// the last head and is not written), split `split` of `splits`, attending to positions [begin, end).
struct Unit {
  t: u32,
  kv_head: u32,
  chunk: u32,
  split: u32,
  count: u32,
  first_head: u32,
  begin: u32,
  end: u32,
}

// The units: m * n_kv_heads * chunks * splits of them (chunks = ceil(group / HEADS)), `index` one of them (below
// that count). Splits (> 1 only for m = 1) cut the pos0 + 1 positions into equal lengths ceil((pos0 + 1) / splits);
// the causal limit is pos0 + t, the sliding window's first position (window > 0) pos0 + t + 1 - window.
fn units(splits: u32) -> u32 {
  let group = params.n_heads / params.n_kv_heads;
  return params.m * params.n_kv_heads * ((group + HEADS - 1u) / HEADS) * splits;
}

fn unit_of(index: u32, splits: u32) -> Unit {
  let group = params.n_heads / params.n_kv_heads;
  let chunks = (group + HEADS - 1u) / HEADS;
  var u: Unit;
  u.split = index % splits;
  let r = index / splits; // (t * n_kv_heads + kv_head) * chunks + chunk
  u.chunk = r % chunks;
  u.t = (r / chunks) / params.n_kv_heads;
  u.kv_head = (r / chunks) % params.n_kv_heads;
  u.count = min(HEADS, group - u.chunk * HEADS);
  u.first_head = u.kv_head * group + u.chunk * HEADS;
  let limit = step_params.pos0 + u.t + 1u;
  let split_len = (step_params.pos0 + splits) / splits;
  u.end = min(limit, select(limit, (u.split + 1u) * split_len, splits > 1u));
  let first = select(0u, max(limit, params.window) - params.window, params.window > 0u);
  u.begin = max(u.split * split_len, first);
  return u;
}

// The q/k norm's weights of a head's vec4 j (k_norm's for a key, q_norm's for a query).
fn norm_weights(is_k: bool, j: u32) -> vec4<f32> {
  let i = 4u * j;
  return select(vec4<f32>(q_norm[i], q_norm[i + 1u], q_norm[i + 2u], q_norm[i + 3u]),
    vec4<f32>(k_norm[i], k_norm[i + 1u], k_norm[i + 2u], k_norm[i + 3u]), is_k);
}

// NEOX pairs (p, p + rot_dims/2): vec4 j (< HALF4) of a head, a, with vec4 j + HALF4, b, rotated at `position`.
fn rotate_neox4(a: vec4<f32>, b: vec4<f32>, position: u32, j: u32) -> array<vec4<f32>, 2> {
  let cs = rotations4(position, 4u * j);
  return array<vec4<f32>, 2>(a * cs[0] - b * cs[1], a * cs[1] + b * cs[0]);
}

// Interleaved pairs (2p, 2p + 1): vec4 j (< ROT4) of a head holds pairs 2j (x, y) and 2j + 1 (z, w), rotated at
// `position`.
fn rotate_interleaved4(v: vec4<f32>, position: u32, j: u32) -> vec4<f32> {
  let c0 = rotation(position, 2u * j) * params.mscale;
  let c1 = rotation(position, 2u * j + 1u) * params.mscale;
  let a = vec2<f32>(v.x, v.z);
  let b = vec2<f32>(v.y, v.w);
  let c = vec2<f32>(c0.x, c1.x);
  let s = vec2<f32>(c0.y, c1.y);
  let ra = a * c - b * s;
  let rb = a * s + b * c;
  return vec4<f32>(ra.x, rb.x, ra.y, rb.y);
}
