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

// Activations in quads (see shaders/matmul.wgsl, "Activations"): never shared here, each read where it is used.
const SHARED_X: bool = false;

// The vec4s x[index], x[index + step], x[index + gap], x[index + gap + step]; mine: this lane's of them (SHARED_X).
struct XQuad {
  index: u32,
  step: u32,
  gap: u32,
  mine: vec4<f32>,
}

var<private> x_lane: u32;

fn x_quad(i: u32) -> XQuad {
  return x_group(i, 1u, 2u);
}

fn x_group(i: u32, step: u32, gap: u32) -> XQuad {
  return XQuad(i, step, gap, vec4<f32>(0.0));
}

fn x_q0(q: XQuad) -> vec4<f32> {
  return x[q.index];
}

fn x_q1(q: XQuad) -> vec4<f32> {
  return x[q.index + q.step];
}

fn x_q2(q: XQuad) -> vec4<f32> {
  return x[q.index + q.gap];
}

fn x_q3(q: XQuad) -> vec4<f32> {
  return x[q.index + q.gap + q.step];
}
