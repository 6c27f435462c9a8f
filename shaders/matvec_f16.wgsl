// matvec_f16: y[N] = W·x[K], W f16 [N rows, K cols] row-major, packed two halves per u32 (element e in word e>>1,
// low half for even e), unpacked to f32 with unpack2x16float: the path for adapters without `shader-f16`.
// Buffer padded to 16 bytes. Register-tiled like matvec_f32: each invocation accumulates 4 rows; when K is a
// multiple of 8 every row starts on a 16-byte boundary and the loop reads vec4<u32> (8 halves) per row per step,
// else it reads element by element. K_SPLIT invocations may share one group of rows (see matvec_f32.wgsl).
// Workgroups: ceil(N / (4 * WORKGROUP_SIZE / K_SPLIT)), 1-D, possibly split over x/y.

struct Params {
  n: u32, // rows of W = length of y
  k: u32, // columns of W = length of x
}

@group(0) @binding(0) var<storage, read> w: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;
override K_SPLIT: u32 = 1; // a power of two dividing WORKGROUP_SIZE
const ROWS: u32 = 4u;

var<workgroup> partial: array<vec4<f32>, WORKGROUP_SIZE>;

fn w_at(e: u32) -> f32 {
  let word = e >> 1u;
  return unpack2x16float(w[word >> 2u][word & 3u])[e & 1u];
}

// dot of 8 packed halves with 8 activations.
fn dot8(q: vec4<u32>, xa: vec4<f32>, xb: vec4<f32>) -> f32 {
  return dot(vec4<f32>(unpack2x16float(q.x), unpack2x16float(q.y)), xa)
       + dot(vec4<f32>(unpack2x16float(q.z), unpack2x16float(q.w)), xb);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = params.n;
  let k = params.k;
  let wg = wid.x + wid.y * nwg.x;
  let lane = lid % K_SPLIT;
  let row0 = (wg * (WORKGROUP_SIZE / K_SPLIT) + lid / K_SPLIT) * ROWS;
  let last = n - 1u;
  let r0 = min(row0, last);
  let r1 = min(row0 + 1u, last);
  let r2 = min(row0 + 2u, last);
  let r3 = min(row0 + 3u, last);

  var acc = vec4<f32>(0.0);
  if ((k & 7u) == 0u) {
    let k8 = k >> 3u;
    let b0 = r0 * k8;
    let b1 = r1 * k8;
    let b2 = r2 * k8;
    let b3 = r3 * k8;
    for (var i = lane; i < k8; i += K_SPLIT) {
      let j = i << 3u;
      let xa = vec4<f32>(x[j], x[j + 1u], x[j + 2u], x[j + 3u]);
      let xb = vec4<f32>(x[j + 4u], x[j + 5u], x[j + 6u], x[j + 7u]);
      acc += vec4<f32>(dot8(w[b0 + i], xa, xb), dot8(w[b1 + i], xa, xb), dot8(w[b2 + i], xa, xb), dot8(w[b3 + i], xa, xb));
    }
  } else {
    let b0 = r0 * k;
    let b1 = r1 * k;
    let b2 = r2 * k;
    let b3 = r3 * k;
    for (var j = lane; j < k; j += K_SPLIT) {
      let xj = x[j];
      acc += vec4<f32>(w_at(b0 + j), w_at(b1 + j), w_at(b2 + j), w_at(b3 + j)) * xj;
    }
  }

  if (K_SPLIT > 1u) {
    partial[lid] = acc;
    workgroupBarrier();
    for (var stride = K_SPLIT >> 1u; stride > 0u; stride >>= 1u) {
      if (lane < stride) {
        partial[lid] += partial[lid + stride];
      }
      workgroupBarrier();
    }
    acc = partial[lid];
  }

  if (lane == 0u && row0 < n) {
    y[row0] = acc.x;
    if (row0 + 1u < n) { y[row0 + 1u] = acc.y; }
    if (row0 + 2u < n) { y[row0 + 2u] = acc.z; }
    if (row0 + 3u < n) { y[row0 + 3u] = acc.w; }
  }
}
