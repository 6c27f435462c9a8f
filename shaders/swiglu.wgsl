// swiglu: out[t, i] = silu(gate[t, i]) * up[t, i], silu(g) = g / (1 + exp(-g)), for m tokens of width `width`.
// Gate and up may be separate buffers ([m, width] each: strides = width, up_offset = 0) or one fused [m, 2*width]
// projection output bound to both bindings (gate first: strides = 2*width, up_offset = width).
//
// Bindings (group 0):
//   0 gate    array<f32>  gate of token t at t*gate_stride + i.
//   1 up      array<f32>  up of token t at up_offset + t*up_stride + i.
//   2 out     array<f32>  [m, width].
//   3 params  uniform { width, m, gate_stride, up_stride, up_offset }.
// Overrides: WORKGROUP_SIZE.
// Dispatch: 1-D, ceil(m * width / WORKGROUP_SIZE) workgroups; one invocation per output element.

struct Params {
  width: u32,
  m: u32,
  gate_stride: u32,
  up_stride: u32,
  up_offset: u32,
}

@group(0) @binding(0) var<storage, read> gate: array<f32>;
@group(0) @binding(1) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let index = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (index >= params.m * params.width) {
    return;
  }
  let t = index / params.width;
  let i = index % params.width;
  let g = gate[t * params.gate_stride + i];
  // For g < -88, exp(-g) overflows to +inf (or the largest float) and g / (1 + exp(-g)) goes to -0: silu's limit.
  out[index] = g / (1.0 + exp(-g)) * up[params.up_offset + t * params.up_stride + i];
}
