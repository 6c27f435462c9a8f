// matmul_split_subgroup: the K_SPLIT reduction of the product skeleton (shaders/matmul.wgsl) with subgroup
// shuffles: no workgroup memory, no barriers. Composed (src/gpu/shaders.ts) after `enable subgroups;` and only
// for adapters whose smallest subgroup holds at least K_SPLIT invocations, so that the K_SPLIT lanes of a row
// group (consecutive invocation indices, K_SPLIT a power of two) share a subgroup and an XOR butterfly over
// lane bits below K_SPLIT stays inside the group.

// The sum over the K_SPLIT invocations sharing these rows (every one gets it).
fn sum_over_split(value: vec4<f32>, lid: u32, lane: u32) -> vec4<f32> {
  var total = value;
  for (var mask = K_SPLIT >> 1u; mask > 0u; mask >>= 1u) {
    total += subgroupShuffleXor(total, mask);
  }
  return total;
}

// NORM_SUBGROUP: the exact size of every subgroup where the adapter's subgroups are invocations
// NORM_SUBGROUP·i .. NORM_SUBGROUP·i + NORM_SUBGROUP - 1 (CPU adapters' SIMD lanes: SwiftShader's 4): a fused
// norm's producer then adds its sums of squares per subgroup with subgroup_sum (shaders/matmul.wgsl), without the
// barrier of the per-workgroup sums. 0: per workgroup.
override NORM_SUBGROUP: u32 = 0;

fn subgroup_sum(value: vec4<f32>) -> vec4<f32> {
  return subgroupAdd(value);
}

// Activations in quads (see shaders/matmul.wgsl, "Activations"). SHARED_X (decode products with K_SPLIT 1, set by
// src/gpu/kernels/products.ts): each invocation of a quad loads one of the 4 vec4s and quadBroadcast (a constant lane:
// a swizzle on CPU adapters) gives it to the other three. Else each is loaded where it is used. x_lane: the
// invocation's place in its quad (consecutive invocations, as the K_SPLIT butterfly above assumes), set by the
// kernel's entry point. The uniformity analysis cannot see that the quad's invocations run the same blocks (K_SPLIT is
// an override): the diagnostic is off on these functions, and only SHARED_X callers reach the broadcasts.
override SHARED_X: bool = false;

// The vec4s x[index], x[index + step], x[index + gap], x[index + gap + step]; mine: this lane's of them (SHARED_X).
struct XQuad {
  index: u32,
  step: u32,
  gap: u32,
  mine: vec4<f32>,
}

var<private> x_lane: u32;

// The 4 vec4s x[i .. i + 3].
fn x_quad(i: u32) -> XQuad {
  return x_group(i, 1u, 2u);
}

// The 4 vec4s x[i], x[i + step], x[i + gap], x[i + gap + step]: e.g. two words' low and high codes' activations
// (step 1), or four fields of one word (Q6_K: step 8, gap 16).
@diagnostic(off, subgroup_uniformity)
fn x_group(i: u32, step: u32, gap: u32) -> XQuad {
  if (SHARED_X) {
    return XQuad(i, step, gap, x[i + select(0u, step, (x_lane & 1u) == 1u) + select(0u, gap, x_lane >= 2u)]);
  }
  return XQuad(i, step, gap, vec4<f32>(0.0));
}

@diagnostic(off, subgroup_uniformity)
fn x_q0(q: XQuad) -> vec4<f32> {
  if (SHARED_X) {
    return quadBroadcast(q.mine, 0u);
  }
  return x[q.index];
}

@diagnostic(off, subgroup_uniformity)
fn x_q1(q: XQuad) -> vec4<f32> {
  if (SHARED_X) {
    return quadBroadcast(q.mine, 1u);
  }
  return x[q.index + q.step];
}

@diagnostic(off, subgroup_uniformity)
fn x_q2(q: XQuad) -> vec4<f32> {
  if (SHARED_X) {
    return quadBroadcast(q.mine, 2u);
  }
  return x[q.index + q.gap];
}

@diagnostic(off, subgroup_uniformity)
fn x_q3(q: XQuad) -> vec4<f32> {
  if (SHARED_X) {
    return quadBroadcast(q.mine, 3u);
  }
  return x[q.index + q.gap + q.step];
}
