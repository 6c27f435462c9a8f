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
