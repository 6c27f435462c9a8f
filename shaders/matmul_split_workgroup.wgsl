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

// Activations (shaders/matmul_activations.wgsl): never shared here, each read where it is used; the exchange is
// never reached.
const SHARED_X: bool = false;

fn x_mine(i: u32) -> vec4<f32> {
  return vec4<f32>(0.0);
}

fn x_lane0(v: vec4<f32>) -> vec4<f32> {
  return v;
}

fn x_lane1(v: vec4<f32>) -> vec4<f32> {
  return v;
}

fn x_lane2(v: vec4<f32>) -> vec4<f32> {
  return v;
}

fn x_lane3(v: vec4<f32>) -> vec4<f32> {
  return v;
}
