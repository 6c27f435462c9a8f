// rmsnorm: for each row r of X [rows, n] (row-major f32): Y[r, i] = X[r, i] / sqrt(mean_i(X[r, i]²) + eps) * weight[i].
// weight is f32 [n] shared by all rows (so per-head q/k norms are rows = heads, n = head size).
// ROW_THREADS invocations share a row (each takes every ROW_THREADS-th element; sums added in workgroup memory):
// 1 on CPU adapters, the workgroup size on GPUs. Workgroups: ceil(rows / (WORKGROUP_SIZE / ROW_THREADS)), 1-D,
// possibly split over x/y. X and Y must be different buffers. ACCUMULATE: Y[r, i] += the normalised value (a
// norm on a branch's output before its residual add: Gemma 3's post-attention and post-feed-forward norms).

struct Params {
  rows: u32,
  n: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;
override ROW_THREADS: u32 = 1; // a power of two dividing WORKGROUP_SIZE
override ACCUMULATE: bool = false;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = params.n;
  let lane = lid % ROW_THREADS;
  let row = (wid.x + wid.y * nwg.x) * (WORKGROUP_SIZE / ROW_THREADS) + lid / ROW_THREADS;
  let base = min(row, params.rows - 1u) * n;

  var squares = 0.0;
  for (var i = lane; i < n; i += ROW_THREADS) {
    let v = x[base + i];
    squares += v * v;
  }
  if (ROW_THREADS > 1u) {
    partial[lid] = squares;
    workgroupBarrier();
    for (var stride = ROW_THREADS >> 1u; stride > 0u; stride >>= 1u) {
      if (lane < stride) {
        partial[lid] += partial[lid + stride];
      }
      workgroupBarrier();
    }
    squares = partial[lid - lane];
  }

  if (row < params.rows) {
    let scale = inverseSqrt(squares / f32(n) + params.eps);
    for (var i = lane; i < n; i += ROW_THREADS) {
      let value = x[base + i] * scale * weight[i];
      if (ACCUMULATE) {
        y[base + i] += value;
      } else {
        y[base + i] = value;
      }
    }
  }
}
