// swiglu: out[t, i] = silu(gate[t, i]) * up[t, i], silu(g) = g / (1 + exp(-g)), for m tokens of width `width`:
// the activation of layers whose gate and up matrices are not stacked (the product kernel's GATED mode does it
// for stacked ones, shaders/matmul.wgsl). GELU: GeGLU instead, out = gelu_tanh(gate) * up (Gemma 3).
//
// Bindings (group 0):
//   0 gate    array<f32>  [m, width].
//   1 up      array<f32>  [m, width].
//   2 out     array<f32>  [m, width].
//   3 params  uniform { width, m }.
// Overrides: WORKGROUP_SIZE; GELU (the tanh-approximated GELU in place of SiLU); GELU_F16 (with GELU: as llama.cpp's
//   CPU backend computes it, from a table over f16: the gate and its GELU rounded to f16, |g| >= 10 exact; see matmul.wgsl).
// Dispatch: 1-D, ceil(m * width / WORKGROUP_SIZE) workgroups; one invocation per output element.

struct Params {
  width: u32,
  m: u32,
}

@group(0) @binding(0) var<storage, read> gate: array<f32>;
@group(0) @binding(1) var<storage, read> up: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;
override GELU: bool = false;
override GELU_F16: bool = false;

// v rounded to the nearest f16 (pack2x16float needs no f16 extension).
fn round_f16(v: f32) -> f32 {
  return unpack2x16float(pack2x16float(vec2<f32>(v, 0.0))).x;
}

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
  let g = gate[index];
  if (GELU) {
    if (GELU_F16) {
      let h = round_f16(g);
      let table = round_f16(0.5 * h * (1.0 + tanh(clamp(0.7978845608028654 * (h + 0.044715 * h * h * h), -15.0, 15.0))));
      out[index] = select(select(table, g, g >= 10.0), 0.0, g <= -10.0) * up[index];
      return;
    }
    let u = clamp(0.7978845608028654 * (g + 0.044715 * g * g * g), -15.0, 15.0);
    out[index] = 0.5 * g * (1.0 + tanh(u)) * up[index];
    return;
  }
  // For g < -88, exp(-g) overflows to +inf (or the largest float) and g / (1 + exp(-g)) goes to -0: silu's limit.
  out[index] = g / (1.0 + exp(-g)) * up[index];
}
