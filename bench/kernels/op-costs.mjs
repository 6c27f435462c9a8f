// What a shader op costs a CPU adapter, per invocation: Node's Dawn (the `webgpu` package) over Chromium's
// SwiftShader, robustness off as the page benches run it. Each kernel runs a loop of 256 steps in 16384 invocations;
// a step makes a new u32 v (an LCG, so nothing folds) and does one kind of work on it, four values wide; prints JSON:
// ns per invocation and step (median of 7 timed batches of 4 dispatches, wall time) and the same less the `base`
// step's (the LCG and four xors). Why (bench/README.md, "Shifts"): SwiftShader's Subzero JIT runs a WGSL shift (a
// per-lane shift amount) lane by lane, an integer division as a `div` a lane, and the pack built-ins as several
// SIMD ops each; masks, adds, multiplies and i32 -> f32 conversions are one SIMD op each.
// Kinds: base; shr (four `>> 8u`); mul (four `* 256u`); and (four masks); float_shift (a right shift by 8 done as
// mask, u32 -> f32, * 2^-8, f32 -> u32); unpack4x8unorm (one, four values); unpack2x16float (two, four values);
// placed_bytes (four bytes masked in place and converted i32 -> f32: shaders/decode_q8_0.wgsl placed_codes);
// cvt_u32_f32 / cvt_i32_f32 (four conversions); div (four `/ 8u`); dot (one vec4 dot).
import { rerunOverSwiftShader } from '../support/node-dawn.mjs';
import { adapterName, dawnDevice, nsPerInvocationStep } from './cost-harness.mjs';

rerunOverSwiftShader();
const STEPS = 256;
const INVOCATIONS = 16384;
const WORKGROUP = 64;

const { adapter, device } = await dawnDevice({ robust: false });

const FOUR = 'vec4<u32>(v, v ^ 1u, v ^ 2u, v ^ 3u)';
const BODIES = {
  base: `iacc += ${FOUR};`,
  shr: `iacc += ${FOUR} >> vec4<u32>(8u);`,
  mul: `iacc += ${FOUR} * 256u;`,
  and: `iacc += ${FOUR} & vec4<u32>(0x0F0F0F0Fu);`,
  float_shift: `iacc += vec4<u32>(vec4<f32>(${FOUR} & vec4<u32>(0x0F000F00u)) * (1.0 / 256.0));`,
  unpack4x8unorm: 'acc += unpack4x8unorm(v);',
  unpack2x16float: 'acc += vec4<f32>(unpack2x16float(v), unpack2x16float(v ^ 1u));',
  placed_bytes: 'acc += vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(v ^ 0x00808080u) & vec4<u32>(0xFFu, 0xFF00u, 0xFF0000u, 0xFF000000u)));',
  cvt_u32_f32: `acc += vec4<f32>(${FOUR});`,
  cvt_i32_f32: `acc += vec4<f32>(bitcast<vec4<i32>>(${FOUR}));`,
  div: `iacc += ${FOUR} / vec4<u32>(8u);`,
  dot: `acc.x += dot(bitcast<vec4<f32>>(${FOUR} & vec4<u32>(0x3FFFFFFFu)), acc);`,
};

function kernel(body) {
  return `@group(0) @binding(0) var<storage, read> seed: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
@compute @workgroup_size(${WORKGROUP}) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  var acc = vec4<f32>(0.0);
  var iacc = vec4<u32>(0u);
  var v = seed[gid.x & 63u];
  for (var i = 0u; i < ${STEPS}u; i++) {
    v = v * 1664525u + 1013904223u;
    ${body}
  }
  out[gid.x] = acc + bitcast<vec4<f32>>(iacc);
}`;
}

const buffers = [256, INVOCATIONS * 16].map((size) => device.createBuffer({ size, usage: GPUBufferUsage.STORAGE }));
const layout = device.createBindGroupLayout({
  entries: [0, 1].map((binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: binding === 1 ? 'storage' : 'read-only-storage' } })),
});
const bindGroup = device.createBindGroup({ layout, entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })) });

const timeKernel = (body) =>
  nsPerInvocationStep(device, layout, bindGroup, kernel(body), { workgroups: INVOCATIONS / WORKGROUP, invocations: INVOCATIONS, steps: STEPS, warmup: 1, runs: 7, onePass: true });

const perStep = {};
for (const [name, body] of Object.entries(BODIES)) perStep[name] = Number((await timeKernel(body)).toFixed(3));
const overBase = Object.fromEntries(Object.entries(perStep).filter(([k]) => k !== 'base').map(([k, v]) => [k, Number((v - perStep.base).toFixed(3))]));
console.log(JSON.stringify({
  bench: 'op-costs',
  adapter: adapterName(adapter),
  robustness: false,
  invocations: INVOCATIONS,
  steps: STEPS,
  ns_per_invocation_step: perStep,
  ns_over_base: overBase,
}, null, 2));
device.destroy();
