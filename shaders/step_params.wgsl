// step_params: the forward step's uniform, the WGSL side of src/gpu/kernel-op.ts's StepParams (packStep writes it):
// the step's token count m, its first position pos0 and the ways attention splits the positions (1: not split).
// One buffer, written once per step and bound by every op that reads it. src/gpu/shaders.ts puts this part before
// each kernel that reads it (rope, attention, attention_combine); the kernel declares the binding itself, at the
// index where its ops bind the STEP placeholder: `@group(0) @binding(N) var<uniform> step_params: StepParams;`.

struct StepParams {
  m: u32,
  pos0: u32,
  splits: u32,
}
