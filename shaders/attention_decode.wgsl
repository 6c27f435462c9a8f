// attention_decode: attention.wgsl's computation (causal grouped-query attention of m queries over the KV cache,
// online softmax, splits into flash-decoding records, sliding window, sinks, and for decode steps RoPE, the q/k norm
// and the new key's and value's store) laid out for GPUs: one *workgroup* per (query, KV head, chunk of up to HEADS
// of its query heads, split), whose invocations share the work. attention.wgsl gives each (head, split) a single
// invocation that walks its positions alone: a decode step of Qwen2.5-0.5B (2 KV heads) at 600 positions ran 140
// invocations on a GPU of thousands of lanes and held its queries and accumulators in (spilled) private arrays
// (H200: 1.9 of a 4.2 ms step; Qwen3-1.7B, head dim 128: 14.7 of 18.7 ms).
// Per tile of WG positions:
//   scores: invocation i takes position tile + i: its key read once for the chunk's heads, the queries from
//           workgroup memory (every invocation reads the same word: a broadcast);
//   softmax: the tile's maximum and the sum of its weights per head by tree reductions in workgroup memory; every
//           invocation keeps the same running maximum and denominator;
//   values:  invocation i takes vec4 i % HD4 of the head dim for positions i / HD4, i / HD4 + RG, ... (RG = WG / HD4
//           groups): neighbouring invocations read neighbouring words of a value row; the groups' sums are added
//           through workgroup memory at the end.
// Bindings, params, records and the dispatch's meaning are attention.wgsl's (see its header; src/gpu/shaders.ts puts
// step_params.wgsl, attention_common.wgsl, rope_rotation.wgsl and attention_rope.wgsl before this file), except that
// the dispatch counts workgroups: m * n_kv_heads * chunks * splits of them, 1-D or split over x and y.
// The new position (ROPE, m = 1): its key, normalised and rotated here, and its value are stored in the caches at
// pos0 by every workgroup whose split holds it (the same bits from each chunk), then read back like any other
// position after a storage barrier.
// Set by the composer (src/gpu/attention-compose.ts attentionDecodeSource): HEAD_DIM, ROT_DIMS, HEADS (1..8) and WG
// (the workgroup size and positions per tile: a power of two, at least HD4); every loop marked `// unroll` (trip
// count HEADS) is written out there so that each index into the private arrays is a constant.
// Overrides: SINKS, ROPE, NEOX, QK_NORM (attention_rope.wgsl's, as attention.wgsl reads them).

const WG: u32 = 64u;
// Value groups: invocations [0, RG * HD4) take the values, HD4 lanes a group.
const RG: u32 = WG / HD4;

// The chunk's queries (rotated, scaled) [HEADS][HD4], then the new key [HD4]; at the end the value groups' sums.
var<workgroup> heads_sh: array<vec4<f32>, (HEADS + 1u) * HD4>;
// Per head [HEADS][WG]: the tile's scores, then its weights.
var<workgroup> weights_sh: array<f32, HEADS * WG>;
// Per head [HEADS][WG]: the tree reductions (maximum, then sum).
var<workgroup> reduce_sh: array<f32, HEADS * WG>;
// QK_NORM: each slot's RMS scale.
var<workgroup> norm_sh: array<f32, HEADS + 1u>;

// vec4 j of slot s as loaded, normalised where QK_NORM.
fn normed(s: u32, j: u32) -> vec4<f32> {
  let v = heads_sh[s * HD4 + j];
  if (!QK_NORM) {
    return v;
  }
  return v * norm_sh[s] * norm_weights(s == HEADS, j);
}

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let splits = step_params.splits;
  let index = wid.x + wid.y * nwg.x;
  if (index >= units(splits)) {
    return;
  }
  let unit = unit_of(index, splits);
  let split = unit.split;
  let t = unit.t;
  let kv_head = unit.kv_head;
  let count = unit.count;
  let first_head = unit.first_head;
  let q_row = t * (params.q_stride / 4u);
  let position = step_params.pos0 + t;
  let end = unit.end;
  let begin = unit.begin;
  let cache_base = kv_head * params.max_seq * HD4;
  let has_new = ROPE && begin <= position && position < end;
  let slots = select(HEADS, HEADS + 1u, has_new);

  // The heads: slot s < HEADS query head first_head + s (a slot past `count` repeats the last and is not written),
  // slot HEADS the new key.
  for (var i = lid; i < slots * HD4; i += WG) {
    let s = i / HD4;
    let j = i % HD4;
    let head = select(params.n_heads + kv_head, first_head + min(s, count - 1u), s < HEADS);
    let v = q[q_row + head * HD4 + j];
    heads_sh[i] = select(v, v * params.scale, !ROPE && s < HEADS);
  }
  workgroupBarrier();
  if (ROPE) {
    if (QK_NORM) {
      if (lid < slots) {
        var squares = 0.0;
        for (var j = 0u; j < HD4; j++) {
          let v = heads_sh[lid * HD4 + j];
          squares += dot(v, v);
        }
        norm_sh[lid] = inverseSqrt(squares / f32(HEAD_DIM) + params.rope_eps);
      }
      workgroupBarrier();
    }
    // Rotation work items per head: NEOX pairs (vec4 u with vec4 u + HALF4) then the unrotated vec4s; interleaved
    // vec4s hold whole pairs, one item each. Each item reads and writes only its own vec4s: no barrier between.
    let items = select(HD4, HALF4 + HD4 - ROT4, NEOX);
    for (var i = lid; i < slots * items; i += WG) {
      let s = i / items;
      let u = i % items;
      let scale = select(params.scale, 1.0, s == HEADS);
      if (NEOX) {
        if (u < HALF4) {
          let rotated = rotate_neox4(normed(s, u), normed(s, u + HALF4), position, u);
          heads_sh[s * HD4 + u] = rotated[0] * scale;
          heads_sh[s * HD4 + u + HALF4] = rotated[1] * scale;
        } else {
          let j = ROT4 + u - HALF4;
          heads_sh[s * HD4 + j] = normed(s, j) * scale;
        }
      } else {
        var v = normed(s, u);
        if (u < ROT4) {
          v = rotate_interleaved4(v, position, u);
        }
        heads_sh[s * HD4 + u] = v * scale;
      }
    }
    workgroupBarrier();
    if (has_new && lid < HD4) {
      let at = cache_base + position * HD4 + lid;
      k_cache[at] = heads_sh[HEADS * HD4 + lid];
      v_cache[at] = q[q_row + (params.n_heads + params.n_kv_heads + kv_head) * HD4 + lid];
    }
    storageBarrier();
  }

  var running_max: array<f32, HEADS>;
  var denominator: array<f32, HEADS>;
  var acc: array<vec4<f32>, HEADS>;
  // unroll
  for (var g = 0u; g < HEADS; g++) {
    running_max[g] = NEG_LARGE;
    denominator[g] = 0.0;
    acc[g] = vec4<f32>(0.0);
    if (SINKS && split == 0u) {
      running_max[g] = sinks[first_head + min(g, count - 1u)];
      denominator[g] = 1.0;
    }
  }
  let lane = lid % HD4;
  let value_group = lid / HD4;
  for (var tile = begin; tile < end; tile += WG) {
    // Scores of position tile + lid (a position past the end: its row clamped, its score masked).
    let p = tile + lid;
    let key_row = cache_base + min(p, end - 1u) * HD4;
    var s = array<f32, HEADS>();
    for (var j = 0u; j < HD4; j++) {
      let k = k_cache[key_row + j];
      // unroll
      for (var g = 0u; g < HEADS; g++) {
        s[g] += dot(heads_sh[g * HD4 + j], k);
      }
    }
    // unroll
    for (var g = 0u; g < HEADS; g++) {
      let score = select(NEG_LARGE, s[g], p < end);
      weights_sh[g * WG + lid] = score;
      reduce_sh[g * WG + lid] = score;
    }
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
      if (lid < stride) {
        // unroll
        for (var g = 0u; g < HEADS; g++) {
          reduce_sh[g * WG + lid] = max(reduce_sh[g * WG + lid], reduce_sh[g * WG + lid + stride]);
        }
      }
      workgroupBarrier();
    }
    var correction: array<f32, HEADS>;
    var weight: array<f32, HEADS>;
    // unroll
    for (var g = 0u; g < HEADS; g++) {
      let new_max = max(running_max[g], reduce_sh[g * WG]);
      correction[g] = exp(running_max[g] - new_max);
      running_max[g] = new_max;
      weight[g] = exp(weights_sh[g * WG + lid] - new_max);
    }
    workgroupBarrier();
    // unroll
    for (var g = 0u; g < HEADS; g++) {
      weights_sh[g * WG + lid] = weight[g];
      reduce_sh[g * WG + lid] = weight[g];
    }
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
      if (lid < stride) {
        // unroll
        for (var g = 0u; g < HEADS; g++) {
          reduce_sh[g * WG + lid] += reduce_sh[g * WG + lid + stride];
        }
      }
      workgroupBarrier();
    }
    // unroll
    for (var g = 0u; g < HEADS; g++) {
      denominator[g] = denominator[g] * correction[g] + reduce_sh[g * WG];
      acc[g] *= correction[g];
    }
    if (value_group < RG) {
      let n = min(WG, end - tile);
      for (var at = value_group; at < n; at += RG) {
        let v = v_cache[cache_base + (tile + at) * HD4 + lane];
        // unroll
        for (var g = 0u; g < HEADS; g++) {
          acc[g] += weights_sh[g * WG + at] * v;
        }
      }
    }
    workgroupBarrier();
  }
  // The value groups' sums into group 0, one group at a time through heads_sh (the queries are no longer read).
  for (var sender = 1u; sender < RG; sender++) {
    if (value_group == sender) {
      // unroll
      for (var g = 0u; g < HEADS; g++) {
        heads_sh[g * HD4 + lane] = acc[g];
      }
    }
    workgroupBarrier();
    if (value_group == 0u) {
      // unroll
      for (var g = 0u; g < HEADS; g++) {
        acc[g] += heads_sh[g * HD4 + lane];
      }
    }
    workgroupBarrier();
  }
  if (value_group == 0u) {
    // unroll
    for (var g = 0u; g < HEADS; g++) {
      if (g < count) {
        let row = t * params.n_heads + first_head + g;
        if (splits > 1u) {
          let record = (row * splits + split) * (HD4 + 1u);
          if (lane == 0u) {
            out[record] = vec4<f32>(running_max[g], denominator[g], 0.0, 0.0);
          }
          out[record + 1u + lane] = acc[g];
        } else {
          out[row * HD4 + lane] = acc[g] / denominator[g];
        }
      }
    }
  }
}
