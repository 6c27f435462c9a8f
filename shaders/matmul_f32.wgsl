// matmul_f32: Y[M,N] = X[M,K]·Wᵀ, W f32 [N rows, K cols] row-major (K contiguous, buffer padded to 16 bytes),
// X and Y f32 row-major (M tokens). Register-tiled: each invocation computes a 4x4 tile of Y (4 tokens x 4
// rows of W) in four vec4 accumulators, so every W value read serves 4 tokens and every X value 4 rows.
// When K is a multiple of 4 the loop reads W as vec4, else element by element. Tiles past the edges read
// clamped rows and write nothing. Tile t (linear over invocations) covers tokens 4*(t / tilesN) and W rows
// 4*(t % tilesN). Workgroups: ceil(ceil(M/4) * ceil(N/4) / WORKGROUP_SIZE), 1-D, possibly split over x/y.

struct Params {
  m: u32, // tokens: rows of X and Y
  n: u32, // rows of W: columns of Y
  k: u32, // columns of W and X
}

@group(0) @binding(0) var<storage, read> w: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;

fn w_at(e: u32) -> f32 {
  return w[e >> 2u][e & 3u];
}

fn x4(base: u32) -> vec4<f32> {
  return vec4<f32>(x[base], x[base + 1u], x[base + 2u], x[base + 3u]);
}

fn store_row(token: u32, n0: u32, v: vec4<f32>) {
  let n = params.n;
  let base = token * n;
  y[base + n0] = v.x;
  if (n0 + 1u < n) { y[base + n0 + 1u] = v.y; }
  if (n0 + 2u < n) { y[base + n0 + 2u] = v.z; }
  if (n0 + 3u < n) { y[base + n0 + 3u] = v.w; }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let m = params.m;
  let n = params.n;
  let k = params.k;
  let tiles_n = (n + 3u) >> 2u;
  let tile = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  let m0 = (tile / tiles_n) * 4u;
  let n0 = (tile % tiles_n) * 4u;
  if (m0 >= m) {
    return;
  }
  let last_n = n - 1u;
  let last_m = m - 1u;
  let wr0 = min(n0, last_n);
  let wr1 = min(n0 + 1u, last_n);
  let wr2 = min(n0 + 2u, last_n);
  let wr3 = min(n0 + 3u, last_n);
  let xr0 = min(m0, last_m);
  let xr1 = min(m0 + 1u, last_m);
  let xr2 = min(m0 + 2u, last_m);
  let xr3 = min(m0 + 3u, last_m);

  // acc_t[j]: token m0 + t, W row n0 + j.
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  if ((k & 3u) == 0u) {
    let k4 = k >> 2u;
    for (var i = 0u; i < k4; i++) {
      let w0 = w[wr0 * k4 + i];
      let w1 = w[wr1 * k4 + i];
      let w2 = w[wr2 * k4 + i];
      let w3 = w[wr3 * k4 + i];
      let j = i << 2u;
      let a0 = x4(xr0 * k + j);
      let a1 = x4(xr1 * k + j);
      let a2 = x4(xr2 * k + j);
      let a3 = x4(xr3 * k + j);
      acc0 += vec4<f32>(dot(a0, w0), dot(a0, w1), dot(a0, w2), dot(a0, w3));
      acc1 += vec4<f32>(dot(a1, w0), dot(a1, w1), dot(a1, w2), dot(a1, w3));
      acc2 += vec4<f32>(dot(a2, w0), dot(a2, w1), dot(a2, w2), dot(a2, w3));
      acc3 += vec4<f32>(dot(a3, w0), dot(a3, w1), dot(a3, w2), dot(a3, w3));
    }
  } else {
    for (var j = 0u; j < k; j++) {
      let wv = vec4<f32>(w_at(wr0 * k + j), w_at(wr1 * k + j), w_at(wr2 * k + j), w_at(wr3 * k + j));
      acc0 += wv * x[xr0 * k + j];
      acc1 += wv * x[xr1 * k + j];
      acc2 += wv * x[xr2 * k + j];
      acc3 += wv * x[xr3 * k + j];
    }
  }

  store_row(m0, n0, acc0);
  if (m0 + 1u < m) { store_row(m0 + 1u, n0, acc1); }
  if (m0 + 2u < m) { store_row(m0 + 2u, n0, acc2); }
  if (m0 + 3u < m) { store_row(m0 + 3u, n0, acc3); }
}
