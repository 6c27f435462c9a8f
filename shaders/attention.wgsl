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
//   4 params   uniform { m, n_heads, n_kv_heads, head_dim, max_seq, scale: f32, q_stride, window, ... }
//              (q_stride a multiple of 4; window 0: none, else query t attends to its last `window` positions
//              [pos0 + t + 1 - window, pos0 + t], llama.cpp's standard sliding window (gpt-oss)).
//   5 sinks    array<f32>  [n_heads] (read when SINKS): a learned logit per head that joins the softmax's
//              denominator with no value (gpt-oss's attention sinks): out = Σ_p e^(s_p) V_p / (e^(sink) + Σ_p e^(s_p)).
//              Split 0 starts its online softmax from it, so split attention and attention_combine need nothing more.
//              With splits > 1 (m = 1) split s covers positions [s*split_len, min((s+1)*split_len, pos0 + 1)),
//              split_len = ceil((pos0 + 1) / splits) (the step's splits: src/gpu/kernels/attention.ts chooses them).
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
// The bindings and the constant NEG_LARGE are declared in attention_common.wgsl, StepParams in step_params.wgsl,
// Params, the overrides but WORKGROUP_SIZE, the composed consts (HEAD_DIM, ROT_DIMS, HEADS) and the RoPE helpers in
// attention_rope.wgsl: src/gpu/shaders.ts puts them before this file.
// head_dim a multiple of 4, at most 256; n_heads a multiple of n_kv_heads; pos0 + m <= max_seq.
// Overrides: WORKGROUP_SIZE; SINKS: read `sinks` (else bind any buffer). Composed: HEADS (1..8)
//   query heads per invocation, all of one KV head, so that each key and value read serves HEADS heads (grouped-query
//   attention's whole point; on CPU adapters, where every load is a per-lane gather, the reads are most of the work).
// Dispatch: 1-D, ceil(m * n_kv_heads * chunks * splits / WORKGROUP_SIZE) workgroups, chunks = ceil((n_heads /
//   n_kv_heads) / HEADS); one invocation per (query, KV head, chunk of up to HEADS of its query heads, split), which
//   keeps its queries and output accumulators (HEAD_DIM floats each) in private memory and walks its positions once,
//   four at a time. Split records and results are per query head, as attention_combine.wgsl reads them.

override WORKGROUP_SIZE: u32 = 64;

// The head at q[base], normalised (QK_NORM, with k_norm's weights if is_k, else q_norm's) and rotated at `position`
// where ROPE, else as it is. Once an invocation and head: its loops stay loops (written out, the rotations' code for
// every head of an invocation took most of the kernel's compile time on SwiftShader); its own array takes the
// non-constant indices, and the caller's arrays get it whole.
fn head_at(base: u32, is_k: bool, position: u32) -> array<vec4<f32>, HD4> {
  var head: array<vec4<f32>, HD4>;
  var squares = 0.0;
  for (var i = 0u; i < HD4; i++) {
    let v = q[base + i];
    head[i] = v;
    squares += dot(v, v);
  }
  if (!ROPE) {
    return head;
  }
  if (QK_NORM) {
    let scale = inverseSqrt(squares / f32(HEAD_DIM) + params.rope_eps);
    for (var i = 0u; i < HD4; i++) {
      head[i] = head[i] * scale * norm_weights(is_k, i);
    }
  }
  if (NEOX) {
    // Pairs (p, p + rot_dims/2): vec4 j with vec4 j + rot_dims/8.
    for (var j = 0u; j < HALF4; j++) {
      let rotated = rotate_neox4(head[j], head[j + HALF4], position, j);
      head[j] = rotated[0];
      head[j + HALF4] = rotated[1];
    }
  } else {
    // Pairs (2p, 2p + 1): vec4 j holds pairs 2j (x, y) and 2j + 1 (z, w).
    for (var j = 0u; j < ROT4; j++) {
      head[j] = rotate_interleaved4(head[j], position, j);
    }
  }
  return head;
}

// The scores of one query head against four keys.
fn scores4(query: vec4<f32>, k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32>) -> vec4<f32> {
  return vec4<f32>(dot(query, k0), dot(query, k1), dot(query, k2), dot(query, k3));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let splits = step_params.splits;
  let index = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (index >= units(splits)) {
    return;
  }
  let unit = unit_of(index, splits);
  let split = unit.split;
  let chunk = unit.chunk;
  let t = unit.t;
  let kv_head = unit.kv_head;
  let count = unit.count;
  let q_row = t * (params.q_stride / 4u);
  let end = unit.end;
  let begin = unit.begin;

  // Per slot g: its head, query (rotated where ROPE, scaled), accumulator and online softmax state.
  var head: array<u32, HEADS>;
  var query: array<array<vec4<f32>, HD4>, HEADS>;
  var acc = array<array<vec4<f32>, HD4>, HEADS>();
  var running_max: array<f32, HEADS>;
  var denominator: array<f32, HEADS>;
  // unroll
  for (var g = 0u; g < HEADS; g++) {
    head[g] = unit.first_head + min(g, count - 1u);
    var h = head_at(q_row + head[g] * HD4, false, step_params.pos0);
    // unroll
    for (var i = 0u; i < HD4; i++) {
      h[i] = h[i] * params.scale;
    }
    query[g] = h;
    running_max[g] = NEG_LARGE;
    denominator[g] = 0.0;
    if (SINKS && split == 0u) {
      running_max[g] = sinks[head[g]];
      denominator[g] = 1.0;
    }
  }
  let cache_base = kv_head * params.max_seq * HD4;
  var cached_end = end;
  if (ROPE && begin <= step_params.pos0 && step_params.pos0 < end) {
    // The new position (this split's last): its key and value from the qkv row, stored by the KV head's first chunk.
    let position = step_params.pos0;
    cached_end = position;
    let k_base = (params.n_heads + kv_head) * HD4;
    let v_base = (params.n_heads + params.n_kv_heads + kv_head) * HD4;
    let key = head_at(k_base, true, position);
    var weight: array<f32, HEADS>;
    // unroll
    for (var g = 0u; g < HEADS; g++) {
      var score = 0.0;
      // unroll
      for (var i = 0u; i < HD4; i++) {
        score += dot(query[g][i], key[i]);
      }
      let new_max = max(running_max[g], score);
      weight[g] = exp(score - new_max);
      denominator[g] = denominator[g] * exp(running_max[g] - new_max) + weight[g];
      running_max[g] = new_max;
    }
    let store = chunk == 0u;
    let row_at = cache_base + position * HD4;
    // unroll
    for (var i = 0u; i < HD4; i++) {
      let value = q[v_base + i];
      // unroll
      for (var g = 0u; g < HEADS; g++) {
        acc[g][i] = weight[g] * value;
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
    // s[g]: head g's scores of the four positions.
    var s = array<vec4<f32>, HEADS>();
    // unroll
    for (var i = 0u; i < HD4; i++) {
      let k0 = k_cache[r0 + i];
      let k1 = k_cache[r1 + i];
      let k2 = k_cache[r2 + i];
      let k3 = k_cache[r3 + i];
      // unroll
      for (var g = 0u; g < HEADS; g++) {
        s[g] += scores4(query[g][i], k0, k1, k2, k3);
      }
    }
    let valid = vec4<u32>(p0, p0 + 1u, p0 + 2u, p0 + 3u) < vec4<u32>(cached_end);
    var w: array<vec4<f32>, HEADS>;
    var correction: array<f32, HEADS>;
    // unroll
    for (var g = 0u; g < HEADS; g++) {
      let sg = select(vec4<f32>(NEG_LARGE), s[g], valid);
      let new_max = max(running_max[g], max(max(sg.x, sg.y), max(sg.z, sg.w)));
      correction[g] = exp(running_max[g] - new_max);
      w[g] = exp(sg - vec4<f32>(new_max));
      denominator[g] = denominator[g] * correction[g] + dot(w[g], vec4<f32>(1.0));
      running_max[g] = new_max;
    }
    // unroll
    for (var i = 0u; i < HD4; i++) {
      let v0 = v_cache[r0 + i];
      let v1 = v_cache[r1 + i];
      let v2 = v_cache[r2 + i];
      let v3 = v_cache[r3 + i];
      // unroll
      for (var g = 0u; g < HEADS; g++) {
        acc[g][i] = acc[g][i] * correction[g] + w[g].x * v0 + w[g].y * v1 + w[g].z * v2 + w[g].w * v3;
      }
    }
  }
  // Each head's result (splits 1) or this split's record (running max, denominator, then acc).
  // unroll
  for (var g = 0u; g < HEADS; g++) {
    if (g < count) {
      let row = t * params.n_heads + head[g];
      if (splits > 1u) {
        let record = (row * splits + split) * (HD4 + 1u);
        out[record] = vec4<f32>(running_max[g], denominator[g], 0.0, 0.0);
        // unroll
        for (var i = 0u; i < HD4; i++) {
          out[record + 1u + i] = acc[g][i];
        }
      } else {
        let inverse = 1.0 / denominator[g];
        // unroll
        for (var i = 0u; i < HD4; i++) {
          out[row * HD4 + i] = acc[g][i] * inverse;
        }
      }
    }
  }
}
