// matmul_common: what the two product skeletons share (shaders/matmul.wgsl, an invocation per 4 rows x TILE_M tokens;
// shaders/matmul_tiled.wgsl, a workgroup per tile through workgroup memory, GPUs' prefill): the bindings, params and
// epilogue overrides (matmul.wgsl's header says what each is), the activations (SwiGLU, GeGLU) and the store of a
// token's results for 4 rows. src/gpu/shaders.ts puts it (after norm_scale.wgsl) before either skeleton.

struct Params {
  n: u32,
  k: u32,
  m: u32,
  y_offset: u32,
  y_stride: u32,
  norm_groups: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read_write> norm_sums: array<f32>;
@group(0) @binding(6) var<storage, read> norm_weight: array<f32>;
@group(0) @binding(7) var<storage, read_write> normed: array<f32>;

override HAS_BIAS: bool = false;
override ACCUMULATE: bool = false;
override GATED: bool = false;
override GELU: bool = false;
override GELU_F16: bool = false;
override NORM_OUT: bool = false;
override NORMED: bool = false;

// silu(gate) · up, the SwiGLU activation (for gate < -88, exp(-gate) overflows and the quotient goes to -0: silu's limit).
fn swiglu(gate: vec4<f32>, up: vec4<f32>) -> vec4<f32> {
  if (GELU) {
    return gelu_tanh(gate) * up;
  }
  return gate / (1.0 + exp(-gate)) * up;
}

// GELU, tanh approximation (ggml_gelu, PyTorch's gelu 'tanh'): 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))).
// The tanh argument is clamped (tanh is +-1 to f32 precision well before 15) so no implementation overflows.
fn gelu_tanh(g: vec4<f32>) -> vec4<f32> {
  if (GELU_F16) {
    let h = round_f16(g);
    let table = round_f16(0.5 * h * (1.0 + tanh(clamp(0.7978845608028654 * (h + 0.044715 * h * h * h), vec4<f32>(-15.0), vec4<f32>(15.0)))));
    return select(select(table, g, g >= vec4<f32>(10.0)), vec4<f32>(0.0), g <= vec4<f32>(-10.0));
  }
  let u = clamp(0.7978845608028654 * (g + 0.044715 * g * g * g), vec4<f32>(-15.0), vec4<f32>(15.0));
  return 0.5 * g * (1.0 + tanh(u));
}

// v rounded to the nearest f16 (pack2x16float needs no f16 extension).
fn round_f16(v: vec4<f32>) -> vec4<f32> {
  return vec4<f32>(unpack2x16float(pack2x16float(v.xy)), unpack2x16float(pack2x16float(v.zw)));
}

// Writes token t's results for rows row0 .. row0 + 3 (those below n), adding the bias and the old Y if asked;
// returns the sum of the written values' squares (for NORM_OUT; 0 past m).
fn store(token: u32, row0: u32, value: vec4<f32>) -> f32 {
  var squares = 0.0;
  if (token >= params.m) {
    return squares;
  }
  for (var i = 0u; i < 4u; i++) {
    let row = row0 + i;
    if (row < params.n) {
      let column = params.y_offset + row;
      let index = token * params.y_stride + column;
      var result = value[i];
      if (HAS_BIAS) {
        result += bias[column];
      }
      if (ACCUMULATE) {
        result += y[index];
      }
      y[index] = result;
      if (NORM_OUT) {
        normed[index] = result * norm_weight[column];
        squares += result * result;
      }
    }
  }
  return squares;
}
