// rope: rotary position embedding, in place on the q and k heads for the m tokens at positions pos0 .. pos0 + m - 1, and
// (WRITE_KV_CACHE) the rotated k and the v of those tokens stored into the KV cache at their positions. With
// QK_NORM (Qwen3) each q and k head is first RMS-normalised with its weights (q_norm / k_norm), so the
// per-head norm costs no dispatch of its own.
//
// Rotation of pair (i0, i1) with frequency index p (0 .. head_dim/2 - 1), angle = position * inv_freq[p]:
//   x[i0]' = x[i0] cos - x[i1] sin,  x[i1]' = x[i0] sin + x[i1] cos.
//   NEOX = false: pairs (2p, 2p + 1) (GGUF `llama`, whose converter permuted q/k rows);
//   NEOX = true:  pairs (p, p + head_dim/2) (Qwen2/Qwen3, and every Hugging Face layout).
// Partial rotary (rot_dims < head_dim, phi3): only the first rot_dims values of a head rotate, pairs taken within
// them (NEOX: (p, p + rot_dims/2)); the rest pass through (normalised with QK_NORM, and copied to the cache).
// inv_freq[p] = theta^(-2p/rot_dims) / freq_factor[p] (and any linear scaling) is computed on the CPU once per
// model (src/model/rope-frequencies.ts: plain theta, Llama-3 scaling, GGUF rope_freqs), so every variant is one
// kernel. cos/sin are computed to f32 accuracy by rope_rotation.wgsl's rotation(), which src/gpu/shaders.ts puts
// before this file (decode steps rotate inside attention.wgsl with the same function).
//
// Bindings (group 0):
//   0 inv_freq array<f32>  [head_dim / 2].
//   1 qkv      array<f32>  [m, n_heads + 2 * n_kv_heads, head_dim]: each token's q heads, k heads, v heads (the
//                          q/k/v products' output); q and k heads rotated in place, v only read.
//   2 k_cache  array<f32>  this layer's K cache [n_kv_heads, max_seq, head_dim]: rotated k of token t goes to
//                          position pos0 + t (when WRITE_KV_CACHE; bind any buffer otherwise).
//   3 v_cache  array<f32>  this layer's V cache, same layout (when WRITE_KV_CACHE).
//   4 q_norm   array<f32>  [head_dim] RMSNorm weights of q heads (read only when QK_NORM; bind any buffer otherwise).
//   5 k_norm   array<f32>  [head_dim] of k heads (likewise).
//   6 params   uniform { m, n_heads, n_kv_heads, head_dim, max_seq, eps: f32, rot_dims, mscale: f32 } (rot_dims
//              0: head_dim; mscale: the rotated values' magnitude, LongRoPE's attention factor, as ggml's rope applies it).
//   7 step_params uniform StepParams { m, pos0, splits }: the forward step's params (one buffer written once per step
//              and bound by every layer's dispatch; the struct is shaders/step_params.wgsl, which src/gpu/shaders.ts
//              puts before this file); read here: pos0.
// Overrides: WORKGROUP_SIZE; NEOX; WRITE_KV_CACHE; QK_NORM. head_dim must be even; pos0 + m <= max_seq.
// Dispatch: 1-D, ceil(m * (n_heads + 2 * n_kv_heads) / WORKGROUP_SIZE) workgroups; one invocation per head of a
//   token (q heads, then k heads, then v heads for the cache copy), which owns its head: it may read the whole
//   head (the norm) before writing it in place.

struct Params {
  m: u32,
  n_heads: u32,
  n_kv_heads: u32,
  head_dim: u32,
  max_seq: u32,
  eps: f32,
  rot_dims: u32,
  mscale: f32,
}

@group(0) @binding(0) var<storage, read> inv_freq: array<f32>;
@group(0) @binding(1) var<storage, read_write> qkv: array<f32>;
@group(0) @binding(2) var<storage, read_write> k_cache: array<f32>;
@group(0) @binding(3) var<storage, read_write> v_cache: array<f32>;
@group(0) @binding(4) var<storage, read> q_norm: array<f32>;
@group(0) @binding(5) var<storage, read> k_norm: array<f32>;
@group(0) @binding(6) var<uniform> params: Params;
@group(0) @binding(7) var<uniform> step_params: StepParams;

override WORKGROUP_SIZE: u32 = 64;
override NEOX: bool = false;
override WRITE_KV_CACHE: bool = true;
override QK_NORM: bool = false;

// 1 / sqrt(mean of squares + eps) of the head_dim values from base (as rmsnorm.wgsl forms it).
fn rms_scale(base: u32) -> f32 {
  var sum = 0.0;
  for (var i = 0u; i < params.head_dim; i++) {
    sum += qkv[base + i] * qkv[base + i];
  }
  return inverseSqrt(sum / f32(params.head_dim) + params.eps);
}

// Element indices of rotation pair p.
fn pair_indices(p: u32, pairs: u32) -> vec2<u32> {
  if (NEOX) {
    return vec2<u32>(p, p + pairs);
  }
  return vec2<u32>(2u * p, 2u * p + 1u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let head_dim = params.head_dim;
  let n_heads = params.n_heads;
  let n_kv = params.n_kv_heads;
  let rot_dims = select(head_dim, params.rot_dims, params.rot_dims > 0u && params.rot_dims < head_dim);
  let pairs = rot_dims / 2u;
  let slots = n_heads + 2u * n_kv;
  let index = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (index >= params.m * slots) {
    return;
  }
  let t = index / slots;
  let slot = index % slots;
  let position = step_params.pos0 + t;
  // Every slot is a head of head_dim values: q heads, then k heads, then v heads of token t.
  let base = (t * slots + slot) * head_dim;

  if (slot < n_heads + n_kv) {
    let is_q = slot < n_heads;
    var scale = 1.0;
    if (QK_NORM) {
      scale = rms_scale(base);
    }
    let head = slot - n_heads; // the KV head, for k slots
    let cache = (head * params.max_seq + position) * head_dim;
    for (var p = 0u; p < pairs; p++) {
      let i = pair_indices(p, pairs);
      let cs = rotation(position, p) * params.mscale;
      var a = qkv[base + i.x];
      var b = qkv[base + i.y];
      if (QK_NORM) {
        a = a * scale * select(k_norm[i.x], q_norm[i.x], is_q);
        b = b * scale * select(k_norm[i.y], q_norm[i.y], is_q);
      }
      let a_rotated = a * cs.x - b * cs.y;
      let b_rotated = a * cs.y + b * cs.x;
      qkv[base + i.x] = a_rotated;
      qkv[base + i.y] = b_rotated;
      if (WRITE_KV_CACHE && !is_q) {
        k_cache[cache + i.x] = a_rotated;
        k_cache[cache + i.y] = b_rotated;
      }
    }
    // Past the rotary dimensions: unrotated.
    for (var i = rot_dims; i < head_dim; i++) {
      var a = qkv[base + i];
      if (QK_NORM) {
        a = a * scale * select(k_norm[i], q_norm[i], is_q);
        qkv[base + i] = a;
      }
      if (WRITE_KV_CACHE && !is_q) {
        k_cache[cache + i] = a;
      }
    }
  } else if (WRITE_KV_CACHE) {
    let head = slot - n_heads - n_kv;
    let cache = (head * params.max_seq + position) * head_dim;
    for (var i = 0u; i < head_dim; i++) {
      v_cache[cache + i] = qkv[base + i];
    }
  }
}
