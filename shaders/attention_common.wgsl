// attention_common: what the attention kernels over the KV cache share, put before attention.wgsl by
// src/gpu/shaders.ts (after step_params.wgsl): their bindings and constants. The bindings' layouts are in
// attention.wgsl's header; each kernel declares its own `Params` struct (binding 4).

@group(0) @binding(0) var<storage, read> q: array<vec4<f32>>;
// read_write: attention.wgsl's ROPE path stores the decode step's new key and value (the prefill kernel only reads).
@group(0) @binding(1) var<storage, read_write> k_cache: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> v_cache: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> sinks: array<f32>;
@group(0) @binding(6) var<uniform> step_params: StepParams;

// Finite stand-in for -infinity (WGSL need not support infinities): exp(NEG_LARGE - s) is 0 for any score s.
const NEG_LARGE: f32 = -3.0e38;
