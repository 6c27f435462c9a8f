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
//   query head, and the one whose split holds the new position pos0 does the same to its KV head's new key and takes
//   it and the new value from the row, not from the cache; the first query head of each KV head also stores them in
//   the caches at pos0. Pairs as rope.wgsl's (NEOX or interleaved), four at a time: rot_dims a multiple of 8 (NEOX)
//   or 4; the values past rot_dims are only normalised. Params: rope_eps (QK_NORM), rot_dims, mscale (rope.wgsl's).
// The bindings and the constants MAX_HEAD_DIM4 and NEG_LARGE are declared in attention_common.wgsl, StepParams in
// step_params.wgsl: src/gpu/shaders.ts puts both before this file.
// head_dim a multiple of 4, at most 256; n_heads a multiple of n_kv_heads; pos0 + m <= max_seq.
// Overrides: WORKGROUP_SIZE; HEAD_DIM: 0 = take params.head_dim, else the head dim as a constant (must equal
//   params.head_dim), so that the loops over the head have a fixed trip count: faster where the compiler can
//   then keep the query and the accumulator in registers; SINKS: read `sinks` (else bind any buffer).
// Dispatch: 1-D, ceil(m * n_heads * splits / WORKGROUP_SIZE) workgroups; one invocation per (query, head,
//   split), which keeps its query and its output accumulator (HEAD_DIM floats each) in private memory and walks
//   its positions once, four at a time.

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
override HEAD_DIM: u32 = 0;
override SINKS: bool = false;
override ROPE: bool = false;
override NEOX: bool = false;
override QK_NORM: bool = false;

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

// ROPE: the head of hd4 vec4 at q[base] normalised (QK_NORM, with k_norm's weights if is_k, else q_norm's) and
// rotated at `position`, into *head.
fn rope_head(head: ptr<function, array<vec4<f32>, MAX_HEAD_DIM4>>, base: u32, hd4: u32, is_k: bool, position: u32) {
  var squares = 0.0;
  for (var i = 0u; i < hd4; i++) {
    let v = q[base + i];
    (*head)[i] = v;
    squares += dot(v, v);
  }
  if (QK_NORM) {
    let scale = inverseSqrt(squares / f32(hd4 * 4u) + params.rope_eps);
    for (var i = 0u; i < hd4; i++) {
      let w = select(vec4<f32>(q_norm[4u * i], q_norm[4u * i + 1u], q_norm[4u * i + 2u], q_norm[4u * i + 3u]),
        vec4<f32>(k_norm[4u * i], k_norm[4u * i + 1u], k_norm[4u * i + 2u], k_norm[4u * i + 3u]), is_k);
      (*head)[i] = (*head)[i] * scale * w;
    }
  }
  let rot4 = params.rot_dims / 4u;
  if (NEOX) {
    // Pairs (p, p + rot_dims/2): vec4 j with vec4 j + rot_dims/8.
    let half4 = rot4 / 2u;
    for (var j = 0u; j < half4; j++) {
      let cs = rotations4(position, 4u * j);
      let a = (*head)[j];
      let b = (*head)[j + half4];
      (*head)[j] = a * cs[0] - b * cs[1];
      (*head)[j + half4] = a * cs[1] + b * cs[0];
    }
  } else {
    // Pairs (2p, 2p + 1): vec4 j holds pairs 2j (x, y) and 2j + 1 (z, w).
    for (var j = 0u; j < rot4; j++) {
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

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let n_heads = params.n_heads;
  let splits = step_params.splits;
  let index = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (index >= params.m * n_heads * splits) {
    return;
  }
  let split = index % splits;
  let row = index / splits; // t * n_heads + head
  let t = row / n_heads;
  let head = row % n_heads;
  let kv_head = head / (n_heads / params.n_kv_heads);
  let hd4 = select(params.head_dim, HEAD_DIM, HEAD_DIM > 0u) / 4u;
  let q_base = t * (params.q_stride / 4u) + head * hd4;
  // Positions [begin, end) of this split; the causal limit is pos0 + t.
  let end = min(step_params.pos0 + t + 1u, select(step_params.pos0 + t + 1u, (split + 1u) * params.split_len, splits > 1u));
  // The sliding window's first position (0 without one).
  let first = select(0u, max(step_params.pos0 + t + 1u, params.window) - params.window, params.window > 0u);
  let begin = max(split * params.split_len, first);

  var query = array<vec4<f32>, MAX_HEAD_DIM4>();
  var acc = array<vec4<f32>, MAX_HEAD_DIM4>();
  if (ROPE) {
    rope_head(&query, q_base, hd4, false, step_params.pos0);
  } else {
    for (var i = 0u; i < hd4; i++) {
      query[i] = q[q_base + i];
    }
  }
  for (var i = 0u; i < hd4; i++) {
    query[i] = query[i] * params.scale;
  }
  var running_max = NEG_LARGE;
  var denominator = 0.0;
  if (SINKS && split == 0u) {
    running_max = sinks[head];
    denominator = 1.0;
  }
  let cache_base = kv_head * params.max_seq * hd4;
  var cached_end = end;
  if (ROPE && begin <= step_params.pos0 && step_params.pos0 < end) {
    // The new position (this split's last): its key and value from the qkv row, stored by one query head per KV head.
    let position = step_params.pos0;
    cached_end = position;
    var key = array<vec4<f32>, MAX_HEAD_DIM4>();
    let k_base = (params.n_heads + kv_head) * hd4;
    let v_base = (params.n_heads + params.n_kv_heads + kv_head) * hd4;
    rope_head(&key, k_base, hd4, true, position);
    var score = 0.0;
    for (var i = 0u; i < hd4; i++) {
      score += dot(query[i], key[i]);
    }
    let new_max = max(running_max, score);
    let correction = exp(running_max - new_max);
    let weight = exp(score - new_max);
    denominator = denominator * correction + weight;
    running_max = new_max;
    let store = head % (n_heads / params.n_kv_heads) == 0u;
    let row_at = cache_base + position * hd4;
    for (var i = 0u; i < hd4; i++) {
      let value = q[v_base + i];
      acc[i] = weight * value;
      if (store) {
        k_cache[row_at + i] = key[i];
        v_cache[row_at + i] = value;
      }
    }
  }
  // Four positions per step: one pass over the query for four scores, one rescale of the accumulator per four
  // values. Positions past the end are masked to weight 0 (their rows clamped to the last one).
  for (var p0 = begin; p0 < cached_end; p0 += 4u) {
    let r0 = cache_base + p0 * hd4;
    let r1 = cache_base + min(p0 + 1u, cached_end - 1u) * hd4;
    let r2 = cache_base + min(p0 + 2u, cached_end - 1u) * hd4;
    let r3 = cache_base + min(p0 + 3u, cached_end - 1u) * hd4;
    var scores = vec4<f32>(0.0);
    for (var i = 0u; i < hd4; i++) {
      let qi = query[i];
      scores += vec4<f32>(dot(qi, k_cache[r0 + i]), dot(qi, k_cache[r1 + i]), dot(qi, k_cache[r2 + i]), dot(qi, k_cache[r3 + i]));
    }
    let valid = vec4<u32>(p0, p0 + 1u, p0 + 2u, p0 + 3u) < vec4<u32>(cached_end);
    scores = select(vec4<f32>(NEG_LARGE), scores, valid);
    let new_max = max(running_max, max(max(scores.x, scores.y), max(scores.z, scores.w)));
    let correction = exp(running_max - new_max);
    let weights = exp(scores - vec4<f32>(new_max));
    denominator = denominator * correction + dot(weights, vec4<f32>(1.0));
    for (var i = 0u; i < hd4; i++) {
      acc[i] = acc[i] * correction + weights.x * v_cache[r0 + i] + weights.y * v_cache[r1 + i] + weights.z * v_cache[r2 + i] + weights.w * v_cache[r3 + i];
    }
    running_max = new_max;
  }
  if (splits > 1u) {
    let record = index * (hd4 + 1u);
    out[record] = vec4<f32>(running_max, denominator, 0.0, 0.0);
    for (var i = 0u; i < hd4; i++) {
      out[record + 1u + i] = acc[i];
    }
    return;
  }
  let inverse = 1.0 / denominator;
  let out_base = row * hd4;
  for (var i = 0u; i < hd4; i++) {
    out[out_base + i] = acc[i] * inverse;
  }
}
