// matmul_split_workgroup: the K_SPLIT reduction of the product skeleton (shaders/matmul.wgsl) through workgroup
// memory, for every adapter (composed in src/gpu/shaders.ts).

var<workgroup> partial: array<vec4<f32>, WORKGROUP_SIZE>;

// The sum over the K_SPLIT invocations sharing these rows (uniform control flow: every invocation calls it).
fn sum_over_split(value: vec4<f32>, lid: u32, lane: u32) -> vec4<f32> {
  partial[lid] = value;
  workgroupBarrier();
  for (var stride = K_SPLIT >> 1u; stride > 0u; stride >>= 1u) {
    if (lane < stride) {
      partial[lid] += partial[lid + stride];
    }
    workgroupBarrier();
  }
  let total = partial[lid - lane];
  workgroupBarrier();
  return total;
}

// No subgroup operations here: a fused norm's producer adds its sums of squares per workgroup (shaders/matmul.wgsl).
const NORM_SUBGROUP: u32 = 0u;

fn subgroup_sum(value: vec4<f32>) -> vec4<f32> {
  return value;
}

// QUANT_OUT's reductions over a quad (invocations 4j .. 4j + 3: 16 consecutive outputs), through workgroup memory
// (uniform control flow).
var<workgroup> quad_partial: array<vec4<f32>, WORKGROUP_SIZE>;

fn quad_max(value: vec4<f32>, lid: u32) -> vec4<f32> {
  quad_partial[lid] = value;
  workgroupBarrier();
  let f = lid & ~3u;
  let total = max(max(quad_partial[f], quad_partial[f + 1u]), max(quad_partial[f + 2u], quad_partial[f + 3u]));
  workgroupBarrier();
  return total;
}

fn quad_sum(value: vec4<f32>, lid: u32) -> vec4<f32> {
  quad_partial[lid] = value;
  workgroupBarrier();
  let f = lid & ~3u;
  let total = (quad_partial[f] + quad_partial[f + 1u]) + (quad_partial[f + 2u] + quad_partial[f + 3u]);
  workgroupBarrier();
  return total;
}
