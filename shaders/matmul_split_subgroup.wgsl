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

// Activations (shaders/matmul_activations.wgsl, shaders/matmul.wgsl "Activations"). SHARED_X (decode products with
// K_SPLIT 1, set by src/gpu/kernels/products.ts): each invocation of a quad loads one of the 4 vec4s (x_mine) and
// quadBroadcast (a constant lane: a swizzle on CPU adapters) gives it to the other three (x_lane0 .. x_lane3). The
// uniformity analysis cannot see that the quad's invocations run the same blocks (K_SPLIT is an override): the
// diagnostic is off on these functions, and only SHARED_X callers reach the broadcasts.
override SHARED_X: bool = false;

fn x_mine(i: u32) -> vec4<f32> {
  if (SHARED_X) {
    return x[i];
  }
  return vec4<f32>(0.0);
}

@diagnostic(off, subgroup_uniformity)
fn x_lane0(v: vec4<f32>) -> vec4<f32> {
  return quadBroadcast(v, 0u);
}

@diagnostic(off, subgroup_uniformity)
fn x_lane1(v: vec4<f32>) -> vec4<f32> {
  return quadBroadcast(v, 1u);
}

@diagnostic(off, subgroup_uniformity)
fn x_lane2(v: vec4<f32>) -> vec4<f32> {
  return quadBroadcast(v, 2u);
}

@diagnostic(off, subgroup_uniformity)
fn x_lane3(v: vec4<f32>) -> vec4<f32> {
  return quadBroadcast(v, 3u);
}
