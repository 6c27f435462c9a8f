// matmul_f16: Y[M,N] = X[M,K]·Wᵀ, W f16 [N rows, K cols] row-major packed two halves per u32 (element e in word
// e>>1, low half for even e; buffer padded to 16 bytes), unpacked to f32; X and Y f32 row-major (M tokens).
// Register-tiled like matmul_f32: each invocation computes a 4x4 tile of Y. When K is a multiple of 8 each
// step reads one vec4<u32> (8 halves) per W row, else element by element. Tile t covers tokens 4*(t / tilesN)
// and W rows 4*(t % tilesN). Workgroups: ceil(ceil(M/4) * ceil(N/4) / WORKGROUP_SIZE), 1-D, maybe split over x/y.

struct Params {
  m: u32, // tokens: rows of X and Y
  n: u32, // rows of W: columns of Y
  k: u32, // columns of W and X
}

@group(0) @binding(0) var<storage, read> w: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;

fn w_at(e: u32) -> f32 {
  let word = e >> 1u;
  return unpack2x16float(w[word >> 2u][word & 3u])[e & 1u];
}

// The 8 halves of a packed vec4<u32> as two vec4<f32>.
fn lo4(q: vec4<u32>) -> vec4<f32> {
  return vec4<f32>(unpack2x16float(q.x), unpack2x16float(q.y));
}

fn hi4(q: vec4<u32>) -> vec4<f32> {
  return vec4<f32>(unpack2x16float(q.z), unpack2x16float(q.w));
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
  if ((k & 7u) == 0u) {
    let k8 = k >> 3u;
    for (var i = 0u; i < k8; i++) {
      let q0 = w[wr0 * k8 + i];
      let q1 = w[wr1 * k8 + i];
      let q2 = w[wr2 * k8 + i];
      let q3 = w[wr3 * k8 + i];
      let w0a = lo4(q0);
      let w0b = hi4(q0);
      let w1a = lo4(q1);
      let w1b = hi4(q1);
      let w2a = lo4(q2);
      let w2b = hi4(q2);
      let w3a = lo4(q3);
      let w3b = hi4(q3);
      let j = i << 3u;
      let a0 = x4(xr0 * k + j);
      let b0 = x4(xr0 * k + j + 4u);
      let a1 = x4(xr1 * k + j);
      let b1 = x4(xr1 * k + j + 4u);
      let a2 = x4(xr2 * k + j);
      let b2 = x4(xr2 * k + j + 4u);
      let a3 = x4(xr3 * k + j);
      let b3 = x4(xr3 * k + j + 4u);
      acc0 += vec4<f32>(dot(a0, w0a) + dot(b0, w0b), dot(a0, w1a) + dot(b0, w1b), dot(a0, w2a) + dot(b0, w2b), dot(a0, w3a) + dot(b0, w3b));
      acc1 += vec4<f32>(dot(a1, w0a) + dot(b1, w0b), dot(a1, w1a) + dot(b1, w1b), dot(a1, w2a) + dot(b1, w2b), dot(a1, w3a) + dot(b1, w3b));
      acc2 += vec4<f32>(dot(a2, w0a) + dot(b2, w0b), dot(a2, w1a) + dot(b2, w1b), dot(a2, w2a) + dot(b2, w2b), dot(a2, w3a) + dot(b2, w3b));
      acc3 += vec4<f32>(dot(a3, w0a) + dot(b3, w0b), dot(a3, w1a) + dot(b3, w1b), dot(a3, w2a) + dot(b3, w2b), dot(a3, w3a) + dot(b3, w3b));
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
