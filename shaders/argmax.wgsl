// argmax: the index of the largest value, ties to the lowest index, in two passes of this one kernel:
//   STAGE 0 over the f32 values: workgroup g reduces values [g*CHUNK, (g+1)*CHUNK), CHUNK = WORKGROUP_SIZE *
//     ITEMS_PER_INVOCATION, and writes the pair (index, value bits) at out[2g], out[2g + 1];
//   STAGE 1 over those pairs (one workgroup): writes the winning pair at out[0], out[1].
// So the token id ends up in out[0] (a u32), its logit's bits in out[1]. When count <= CHUNK, STAGE 0 with one
// workgroup alone gives the answer. NaN values are never chosen unless every value is NaN (then out[0] = 0xFFFFFFFF).
// (-inf values, e.g. masked logits, are ordinary values.)
//
// Bindings (group 0):
//   0 input   array<u32>  STAGE 0: the f32 values' bits [count] (a logits row, bound at its offset);
//                         STAGE 1: count (index, value bits) pairs from STAGE 0.
//   1 out     array<u32>  STAGE 0: 2 * workgroups u32; STAGE 1: 2 u32.
//   2 params  uniform { count }.
// Overrides: WORKGROUP_SIZE (a power of two), ITEMS_PER_INVOCATION, STAGE.
// Dispatch: STAGE 0: ceil(count / CHUNK) workgroups, 1-D (the x/y split is fine); STAGE 1: exactly 1 workgroup.

struct Params {
  count: u32,
}

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;
override ITEMS_PER_INVOCATION: u32 = 16;
override STAGE: u32 = 0;

const NONE: u32 = 0xffffffffu;

var<workgroup> best_index: array<u32, WORKGROUP_SIZE>;
var<workgroup> best_value: array<f32, WORKGROUP_SIZE>;

// Whether candidate (value, index) beats (best, best_i): larger, or equal with a lower index; NaN never wins.
fn beats(value: f32, index: u32, best: f32, best_i: u32) -> bool {
  if (index == NONE) {
    return false;
  }
  if (best_i == NONE) {
    return value == value;
  }
  return value > best || (value == best && index < best_i);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let count = params.count;
  var mine_i = NONE;
  var mine = 0.0;
  if (STAGE == 0u) {
    let chunk = WORKGROUP_SIZE * ITEMS_PER_INVOCATION;
    let start = (wid.x + wid.y * nwg.x) * chunk;
    for (var j = 0u; j < ITEMS_PER_INVOCATION; j++) {
      let i = start + j * WORKGROUP_SIZE + lid;
      if (i < count) {
        let value = bitcast<f32>(input[i]);
        if (beats(value, i, mine, mine_i)) {
          mine = value;
          mine_i = i;
        }
      }
    }
  } else {
    for (var j = lid; j < count; j += WORKGROUP_SIZE) {
      let index = input[2u * j];
      let value = bitcast<f32>(input[2u * j + 1u]);
      if (beats(value, index, mine, mine_i)) {
        mine = value;
        mine_i = index;
      }
    }
  }
  best_index[lid] = mine_i;
  best_value[lid] = mine;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE >> 1u; stride > 0u; stride >>= 1u) {
    if (lid < stride) {
      let other_i = best_index[lid + stride];
      let other = best_value[lid + stride];
      if (beats(other, other_i, best_value[lid], best_index[lid])) {
        best_index[lid] = other_i;
        best_value[lid] = other;
      }
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    let slot = select(0u, 2u * (wid.x + wid.y * nwg.x), STAGE == 0u);
    out[slot] = best_index[0];
    out[slot + 1u] = bitcast<u32>(best_value[0]);
  }
}
