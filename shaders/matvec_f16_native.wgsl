// matvec_f16_native: y[N] = W·x[K], W f16 [N rows, K cols] row-major (the same bytes as matvec_f16's packed
// layout), read natively as vec4<f16> with `enable f16;`: chosen when the adapter has `shader-f16`.
// Products and sums in f32. Buffer padded to 16 bytes. When K is a multiple of 4 every row starts on an 8-byte
// boundary and the loop reads vec4<f16> per row per step, else element by element. K_SPLIT as in matvec_f32.
// Workgroups: ceil(N / (4 * WORKGROUP_SIZE / K_SPLIT)), 1-D, possibly split over x/y.
enable f16;

struct Params {
  n: u32, // rows of W = length of y
  k: u32, // columns of W = length of x
}

@group(0) @binding(0) var<storage, read> w: array<vec4<f16>>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;
override K_SPLIT: u32 = 1; // a power of two dividing WORKGROUP_SIZE
const ROWS: u32 = 4u;

var<workgroup> partial: array<vec4<f32>, WORKGROUP_SIZE>;

fn w_at(e: u32) -> f32 {
  return f32(w[e >> 2u][e & 3u]);
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
  if ((k & 3u) == 0u) {
    let k4 = k >> 2u;
    let b0 = r0 * k4;
    let b1 = r1 * k4;
    let b2 = r2 * k4;
    let b3 = r3 * k4;
    for (var i = lane; i < k4; i += K_SPLIT) {
      let j = i << 2u;
      let xv = vec4<f32>(x[j], x[j + 1u], x[j + 2u], x[j + 3u]);
      acc += vec4<f32>(
        dot(vec4<f32>(w[b0 + i]), xv),
        dot(vec4<f32>(w[b1 + i]), xv),
        dot(vec4<f32>(w[b2 + i]), xv),
        dot(vec4<f32>(w[b3 + i]), xv),
      );
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
