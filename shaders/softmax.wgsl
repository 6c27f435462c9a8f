// softmax: for each row r of X [rows, n] (row-major f32): Y[r, i] = exp(X[r, i] - max_r) / sum_i exp(X[r, i] - max_r),
// numerically stable (the row maximum is subtracted first). Masked entries should be a large negative finite
// number (e.g. -1e30), not -Infinity (WGSL does not promise IEEE infinities); they come out as 0.
// ROW_THREADS invocations share a row (each takes every ROW_THREADS-th element; maxima and sums combined in
// workgroup memory): 1 on CPU adapters, the workgroup size on GPUs. Workgroups: ceil(rows / (WORKGROUP_SIZE /
// ROW_THREADS)), 1-D, possibly split over x/y. X and Y must be different buffers.

struct Params {
  rows: u32,
  n: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;
override ROW_THREADS: u32 = 1; // a power of two dividing WORKGROUP_SIZE

const LOWEST: f32 = -0x1.fffffep+127f; // the lowest finite f32

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

  var row_max = LOWEST;
  for (var i = lane; i < n; i += ROW_THREADS) {
    row_max = max(row_max, x[base + i]);
  }
  if (ROW_THREADS > 1u) {
    partial[lid] = row_max;
    workgroupBarrier();
    for (var stride = ROW_THREADS >> 1u; stride > 0u; stride >>= 1u) {
      if (lane < stride) {
        partial[lid] = max(partial[lid], partial[lid + stride]);
      }
      workgroupBarrier();
    }
    row_max = partial[lid - lane];
    workgroupBarrier(); // everyone has read the maximum before partial is reused for sums
  }

  var sum = 0.0;
  for (var i = lane; i < n; i += ROW_THREADS) {
    sum += exp(x[base + i] - row_max);
  }
  if (ROW_THREADS > 1u) {
    partial[lid] = sum;
    workgroupBarrier();
    for (var stride = ROW_THREADS >> 1u; stride > 0u; stride >>= 1u) {
      if (lane < stride) {
        partial[lid] += partial[lid + stride];
      }
      workgroupBarrier();
    }
    sum = partial[lid - lane];
  }

  if (row < params.rows) {
    let inv = 1.0 / sum;
    for (var i = lane; i < n; i += ROW_THREADS) {
      y[base + i] = exp(x[base + i] - row_max) * inv;
    }
  }
}
