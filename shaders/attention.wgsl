// attention: causal grouped-query attention of m queries over the KV cache, with an online softmax (no score
// buffer). Query t sits at position pos0 + t and attends to cache positions [0, pos0 + t]; decode is m = 1
// (attends to [0, pos0]), prefill is m > 1 (after rope.wgsl stored the m new keys and values in the cache).
//   out[t, h, :] = Σ_p softmax_p(scale * q[t, h, :] · K[h / group, p, :]) V[h / group, p, :],
//   group = n_heads / n_kv_heads (query heads sharing one KV head), scale usually 1/sqrt(head_dim).
//
// Bindings (group 0):
//   0 q        array<vec4<f32>>  query t's heads [n_heads, head_dim] (after RoPE) at t * q_stride floats (the q
//                                part of the decoder's qkv rows, or q_stride = n_heads * head_dim for a plain q).
//   1 k_cache  array<vec4<f32>>  this layer's K cache [n_kv_heads, max_seq, head_dim] f32.
//   2 v_cache  array<vec4<f32>>  this layer's V cache [n_kv_heads, max_seq, head_dim] f32.
//   3 out      array<vec4<f32>>  splits = 1: the result [m, n_heads, head_dim].
//                                splits > 1: partial records [m, n_heads, splits] of head_dim/4 + 1 vec4 each:
//                                (running max, softmax denominator, 0, 0), then the unnormalised Σ weight·V;
//                                attention_combine.wgsl merges them into the result (flash-decoding).
//   4 params   uniform { m, n_heads, n_kv_heads, head_dim, max_seq, scale: f32, split_len, q_stride, window }
//              (q_stride a multiple of 4; window 0: none, else query t attends to its last `window` positions
//              [pos0 + t + 1 - window, pos0 + t], llama.cpp's standard sliding window (gpt-oss); split_len is read
//              only when splits > 1).
//   5 sinks    array<f32>  [n_heads] (read when SINKS): a learned logit per head that joins the softmax's
//              denominator with no value (gpt-oss's attention sinks): out = Σ_p e^(s_p) V_p / (e^(sink) + Σ_p e^(s_p)).
//              Split 0 starts its online softmax from it, so split attention and attention_combine need nothing more.
//              Split s of query t covers positions [s*split_len, min((s+1)*split_len, pos0 + t + 1)) (may be
//              empty); split_len a multiple of 4 when splits > 1.
//   6 step_params uniform StepParams { m, pos0, splits }: the forward step's params (one buffer written once per step
//              and bound by every layer's dispatch; see src/gpu/kernel-op.ts); read here: pos0 and splits (1: the
//              result into out; > 1: split records).
//   7 inv_freq array<f32>  ROPE: RoPE's inverse frequencies [rot_dims / 2] (rope_rotation.wgsl; any buffer otherwise).
//   8 q_norm   array<f32>  ROPE with QK_NORM: the q heads' RMSNorm weights [head_dim] (any buffer otherwise).
//   9 k_norm   array<f32>  likewise for the k heads.
// ROPE (decode steps, m = 1: what rope.wgsl would do first, done here so that it costs no dispatch): q holds the
//   token's whole qkv row unrotated (q heads, k heads, v heads); each invocation normalises (QK_NORM) and rotates its
//   query heads, and the one whose split holds the new position pos0 does the same to its KV head's new key and takes
//   it and the new value from the row, not from the cache; the KV head's first invocation also stores them in the
//   caches at pos0. Pairs as rope.wgsl's (NEOX or interleaved), four at a time: rot_dims (ROT_DIMS, below) a multiple
//   of 8 (NEOX) or 4; the values past rot_dims are only normalised. Params: rope_eps (QK_NORM), mscale (rope.wgsl's);
//   params.head_dim and params.rot_dims are the composed HEAD_DIM and ROT_DIMS (the kernel reads the consts).
// The bindings and the constants MAX_HEAD_DIM4 and NEG_LARGE are declared in attention_common.wgsl, StepParams in
// step_params.wgsl: src/gpu/shaders.ts puts both before this file.
// head_dim a multiple of 4, at most 256; n_heads a multiple of n_kv_heads; pos0 + m <= max_seq.
// Overrides: WORKGROUP_SIZE; SINKS: read `sinks` (else bind any buffer); HEADS (1..4):
//   query heads per invocation, all of one KV head, so that each key and value read serves HEADS heads (grouped-query
//   attention's whole point; on CPU adapters, where every load is a per-lane gather, the reads are most of the work).
// Dispatch: 1-D, ceil(m * n_kv_heads * chunks * splits / WORKGROUP_SIZE) workgroups, chunks = ceil((n_heads /
//   n_kv_heads) / HEADS); one invocation per (query, KV head, chunk of up to HEADS of its query heads, split), which
//   keeps its queries and output accumulators (HEAD_DIM floats each) in private memory and walks its positions once,
//   four at a time. Split records and results are per query head, as attention_combine.wgsl reads them.

struct Params {
  m: u32,
  n_heads: u32,
  n_kv_heads: u32,
  head_dim: u32,
  max_seq: u32,
  scale: f32,
  split_len: u32,
  q_stride: u32,
  window: u32,
  rope_eps: f32,
  rot_dims: u32,
  mscale: f32,
}

override WORKGROUP_SIZE: u32 = 64;
override SINKS: bool = false;
// Query heads per invocation (1..4), all of one KV head: each key and value read serves them all.
override HEADS: u32 = 1;
override ROPE: bool = false;
override NEOX: bool = false;
override QK_NORM: bool = false;

// Set by the composer (src/gpu/attention-kernel.ts) for the model: the head dim (params.head_dim) and, with ROPE,
// the rotated dims (params.rot_dims); every loop marked `// unroll` (trip count HD4, ROT4 or HALF4) is written out
// there, so that each index into the private arrays (queries, accumulators, the new key) is a constant.
const HEAD_DIM: u32 = 64u;
const ROT_DIMS: u32 = 64u;
const HD4: u32 = HEAD_DIM / 4u;
const ROT4: u32 = ROT_DIMS / 4u;
const HALF4: u32 = ROT4 / 2u;

@group(0) @binding(7) var<storage, read> inv_freq: array<f32>;
@group(0) @binding(8) var<storage, read> q_norm: array<f32>;
@group(0) @binding(9) var<storage, read> k_norm: array<f32>;

// ROPE: cos (x) and sin (y) of pairs p .. p + 3 at `position`, times mscale (as rope.wgsl forms them).
fn rotations4(position: u32, p: u32) -> array<vec4<f32>, 2> {
  let r0 = rotation(position, p) * params.mscale;
  let r1 = rotation(position, p + 1u) * params.mscale;
  let r2 = rotation(position, p + 2u) * params.mscale;
  let r3 = rotation(position, p + 3u) * params.mscale;
  return array<vec4<f32>, 2>(vec4<f32>(r0.x, r1.x, r2.x, r3.x), vec4<f32>(r0.y, r1.y, r2.y, r3.y));
}

// ROPE: the head at q[base] normalised (QK_NORM, with k_norm's weights if is_k, else q_norm's) and rotated at
// `position`, into *head.
fn rope_head(head: ptr<function, array<vec4<f32>, MAX_HEAD_DIM4>>, base: u32, is_k: bool, position: u32) {
  var squares = 0.0;
  // unroll
  for (var i = 0u; i < HD4; i++) {
    let v = q[base + i];
    (*head)[i] = v;
    squares += dot(v, v);
  }
  if (QK_NORM) {
    let scale = inverseSqrt(squares / f32(HEAD_DIM) + params.rope_eps);
    // unroll
    for (var i = 0u; i < HD4; i++) {
      let w = select(vec4<f32>(q_norm[4u * i], q_norm[4u * i + 1u], q_norm[4u * i + 2u], q_norm[4u * i + 3u]),
        vec4<f32>(k_norm[4u * i], k_norm[4u * i + 1u], k_norm[4u * i + 2u], k_norm[4u * i + 3u]), is_k);
      (*head)[i] = (*head)[i] * scale * w;
    }
  }
  if (NEOX) {
    // Pairs (p, p + rot_dims/2): vec4 j with vec4 j + rot_dims/8.
    // unroll
    for (var j = 0u; j < HALF4; j++) {
      let cs = rotations4(position, 4u * j);
      let a = (*head)[j];
      let b = (*head)[j + HALF4];
      (*head)[j] = a * cs[0] - b * cs[1];
      (*head)[j + HALF4] = a * cs[1] + b * cs[0];
    }
  } else {
    // Pairs (2p, 2p + 1): vec4 j holds pairs 2j (x, y) and 2j + 1 (z, w).
    // unroll
    for (var j = 0u; j < ROT4; j++) {
      let c0 = rotation(position, 2u * j) * params.mscale;
      let c1 = rotation(position, 2u * j + 1u) * params.mscale;
      let v = (*head)[j];
      let a = vec2<f32>(v.x, v.z);
      let b = vec2<f32>(v.y, v.w);
      let c = vec2<f32>(c0.x, c1.x);
      let s = vec2<f32>(c0.y, c1.y);
      let ra = a * c - b * s;
      let rb = a * s + b * c;
      (*head)[j] = vec4<f32>(ra.x, rb.x, ra.y, rb.y);
    }
  }
}

// The query head at q[q_base] into *query, rotated (ROPE) and scaled by params.scale.
fn load_query(query: ptr<function, array<vec4<f32>, MAX_HEAD_DIM4>>, q_base: u32) {
  if (ROPE) {
    rope_head(query, q_base, false, step_params.pos0);
  } else {
    // unroll
    for (var i = 0u; i < HD4; i++) {
      (*query)[i] = q[q_base + i];
    }
  }
  // unroll
  for (var i = 0u; i < HD4; i++) {
    (*query)[i] = (*query)[i] * params.scale;
  }
}

// The scores of one query head against four keys.
fn scores4(query: vec4<f32>, k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32>) -> vec4<f32> {
  return vec4<f32>(dot(query, k0), dot(query, k1), dot(query, k2), dot(query, k3));
}

fn max4(v: vec4<f32>) -> f32 {
  return max(max(v.x, v.y), max(v.z, v.w));
}

// Head `head` of query t: its result (splits 1) or this split's record (running max, denominator, then acc).
fn write_head(acc: ptr<function, array<vec4<f32>, MAX_HEAD_DIM4>>, t: u32, head: u32, split: u32, splits: u32,
    running_max: f32, denominator: f32) {
  let row = t * params.n_heads + head;
  if (splits > 1u) {
    let record = (row * splits + split) * (HD4 + 1u);
    out[record] = vec4<f32>(running_max, denominator, 0.0, 0.0);
    // unroll
    for (var i = 0u; i < HD4; i++) {
      out[record + 1u + i] = (*acc)[i];
    }
    return;
  }
  let inverse = 1.0 / denominator;
  let out_base = row * HD4;
  // unroll
  for (var i = 0u; i < HD4; i++) {
    out[out_base + i] = (*acc)[i] * inverse;
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let group = params.n_heads / params.n_kv_heads;
  let chunks = (group + HEADS - 1u) / HEADS;
  let splits = step_params.splits;
  let index = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (index >= params.m * params.n_kv_heads * chunks * splits) {
    return;
  }
  let split = index % splits;
  let r = index / splits; // (t * n_kv_heads + kv_head) * chunks + chunk
  let chunk = r % chunks;
  let t = (r / chunks) / params.n_kv_heads;
  let kv_head = (r / chunks) % params.n_kv_heads;
  // This invocation's heads: `count` (1..HEADS) of the KV head's group from head0 on; a slot past them repeats the
  // last head and is not written.
  let count = min(HEADS, group - chunk * HEADS);
  let head0 = kv_head * group + chunk * HEADS;
  let head1 = head0 + min(1u, count - 1u);
  let head2 = head0 + min(2u, count - 1u);
  let head3 = head0 + min(3u, count - 1u);
  let q_row = t * (params.q_stride / 4u);
  // Positions [begin, end) of this split; the causal limit is pos0 + t.
  let end = min(step_params.pos0 + t + 1u, select(step_params.pos0 + t + 1u, (split + 1u) * params.split_len, splits > 1u));
  // The sliding window's first position (0 without one).
  let first = select(0u, max(step_params.pos0 + t + 1u, params.window) - params.window, params.window > 0u);
  let begin = max(split * params.split_len, first);

  var query0 = array<vec4<f32>, MAX_HEAD_DIM4>();
  var query1 = array<vec4<f32>, MAX_HEAD_DIM4>();
  var query2 = array<vec4<f32>, MAX_HEAD_DIM4>();
  var query3 = array<vec4<f32>, MAX_HEAD_DIM4>();
  var acc0 = array<vec4<f32>, MAX_HEAD_DIM4>();
  var acc1 = array<vec4<f32>, MAX_HEAD_DIM4>();
  var acc2 = array<vec4<f32>, MAX_HEAD_DIM4>();
  var acc3 = array<vec4<f32>, MAX_HEAD_DIM4>();
  load_query(&query0, q_row + head0 * HD4);
  if (HEADS > 1u) {
    load_query(&query1, q_row + head1 * HD4);
  }
  if (HEADS > 2u) {
    load_query(&query2, q_row + head2 * HD4);
  }
  if (HEADS > 3u) {
    load_query(&query3, q_row + head3 * HD4);
  }
  // The online softmax's state, one component per head.
  var running_max = vec4<f32>(NEG_LARGE);
  var denominator = vec4<f32>(0.0);
  if (SINKS && split == 0u) {
    running_max = vec4<f32>(sinks[head0], sinks[head1], sinks[head2], sinks[head3]);
    denominator = vec4<f32>(1.0);
  }
  let cache_base = kv_head * params.max_seq * HD4;
  var cached_end = end;
  if (ROPE && begin <= step_params.pos0 && step_params.pos0 < end) {
    // The new position (this split's last): its key and value from the qkv row, stored by the KV head's first chunk.
    let position = step_params.pos0;
    cached_end = position;
    var key = array<vec4<f32>, MAX_HEAD_DIM4>();
    let k_base = (params.n_heads + kv_head) * HD4;
    let v_base = (params.n_heads + params.n_kv_heads + kv_head) * HD4;
    rope_head(&key, k_base, true, position);
    var scores = vec4<f32>(0.0);
    // unroll
    for (var i = 0u; i < HD4; i++) {
      let k = key[i];
      scores += vec4<f32>(dot(query0[i], k), dot(query1[i], k), dot(query2[i], k), dot(query3[i], k));
    }
    let new_max = max(running_max, scores);
    let weights = exp(scores - new_max);
    denominator = denominator * exp(running_max - new_max) + weights;
    running_max = new_max;
    let store = chunk == 0u;
    let row_at = cache_base + position * HD4;
    // unroll
    for (var i = 0u; i < HD4; i++) {
      let value = q[v_base + i];
      acc0[i] = weights.x * value;
      if (HEADS > 1u) {
        acc1[i] = weights.y * value;
      }
      if (HEADS > 2u) {
        acc2[i] = weights.z * value;
      }
      if (HEADS > 3u) {
        acc3[i] = weights.w * value;
      }
      if (store) {
        k_cache[row_at + i] = key[i];
        v_cache[row_at + i] = value;
      }
    }
  }
  // Four positions per step: one pass over the keys for every head's four scores, one rescale of each accumulator
  // per four values; each key and value is read once for the invocation's heads. Positions past the end are masked
  // to weight 0 (their rows clamped to the last one).
  for (var p0 = begin; p0 < cached_end; p0 += 4u) {
    let r0 = cache_base + p0 * HD4;
    let r1 = cache_base + min(p0 + 1u, cached_end - 1u) * HD4;
    let r2 = cache_base + min(p0 + 2u, cached_end - 1u) * HD4;
    let r3 = cache_base + min(p0 + 3u, cached_end - 1u) * HD4;
    // s_g: head g's scores of the four positions.
    var s0 = vec4<f32>(0.0);
    var s1 = vec4<f32>(0.0);
    var s2 = vec4<f32>(0.0);
    var s3 = vec4<f32>(0.0);
    // unroll
    for (var i = 0u; i < HD4; i++) {
      let k0 = k_cache[r0 + i];
      let k1 = k_cache[r1 + i];
      let k2 = k_cache[r2 + i];
      let k3 = k_cache[r3 + i];
      s0 += scores4(query0[i], k0, k1, k2, k3);
      if (HEADS > 1u) {
        s1 += scores4(query1[i], k0, k1, k2, k3);
      }
      if (HEADS > 2u) {
        s2 += scores4(query2[i], k0, k1, k2, k3);
      }
      if (HEADS > 3u) {
        s3 += scores4(query3[i], k0, k1, k2, k3);
      }
    }
    let valid = vec4<u32>(p0, p0 + 1u, p0 + 2u, p0 + 3u) < vec4<u32>(cached_end);
    s0 = select(vec4<f32>(NEG_LARGE), s0, valid);
    s1 = select(vec4<f32>(NEG_LARGE), s1, valid);
    s2 = select(vec4<f32>(NEG_LARGE), s2, valid);
    s3 = select(vec4<f32>(NEG_LARGE), s3, valid);
    let new_max = max(running_max, vec4<f32>(max4(s0), max4(s1), max4(s2), max4(s3)));
    let correction = exp(running_max - new_max);
    let w0 = exp(s0 - vec4<f32>(new_max.x));
    let w1 = exp(s1 - vec4<f32>(new_max.y));
    let w2 = exp(s2 - vec4<f32>(new_max.z));
    let w3 = exp(s3 - vec4<f32>(new_max.w));
    let ones = vec4<f32>(1.0);
    denominator = denominator * correction + vec4<f32>(dot(w0, ones), dot(w1, ones), dot(w2, ones), dot(w3, ones));
    // unroll
    for (var i = 0u; i < HD4; i++) {
      let v0 = v_cache[r0 + i];
      let v1 = v_cache[r1 + i];
      let v2 = v_cache[r2 + i];
      let v3 = v_cache[r3 + i];
      acc0[i] = acc0[i] * correction.x + w0.x * v0 + w0.y * v1 + w0.z * v2 + w0.w * v3;
      if (HEADS > 1u) {
        acc1[i] = acc1[i] * correction.y + w1.x * v0 + w1.y * v1 + w1.z * v2 + w1.w * v3;
      }
      if (HEADS > 2u) {
        acc2[i] = acc2[i] * correction.z + w2.x * v0 + w2.y * v1 + w2.z * v2 + w2.w * v3;
      }
      if (HEADS > 3u) {
        acc3[i] = acc3[i] * correction.w + w3.x * v0 + w3.y * v1 + w3.z * v2 + w3.w * v3;
      }
    }
    running_max = new_max;
  }
  write_head(&acc0, t, head0, split, splits, running_max.x, denominator.x);
  if (HEADS > 1u && count > 1u) {
    write_head(&acc1, t, head1, split, splits, running_max.y, denominator.y);
  }
  if (HEADS > 2u && count > 2u) {
    write_head(&acc2, t, head2, split, splits, running_max.z, denominator.z);
  }
  if (HEADS > 3u && count > 3u) {
    write_head(&acc3, t, head3, split, splits, running_max.w, denominator.w);
  }
}
