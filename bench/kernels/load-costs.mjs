// What a storage load costs a CPU adapter, per invocation, against an empty loop: Node's Dawn (the `webgpu`
// package) over Chromium's SwiftShader (rerun with it when no Vulkan driver is named). Each kernel runs a loop of
// --iterations steps in --invocations invocations (workgroups of 64) and does one kind of load a step; prints JSON:
// ns per invocation and step for each kind (median of 5 timed batches of 4 dispatches, wall time) and the same less
// the empty loop's. Dawn's robustness (Tint's index clamps, the driver's bounds checks) is on by default, as in
// users' Chromium; --no-robustness turns it off as the page benches do (disable_robustness).
// Kinds: empty (the loop alone); uniform_f32 / uniform_vec4 (every lane the same index: an activation load);
// broadcast_vec4 (lane l loads component l, subgroupBroadcast gives each lane all four: where the subgroup is 4
// lanes, SwiftShader's); divergent_f32 / divergent_vec4 (each lane its own row: a weight load).
// Why (bench/README.md, "What a load costs"): SwiftShader takes its one-load path only when the four lanes'
// offsets are compile-time constants, so every run-time index is a lane-by-lane gather, equal or not.
import { option, rerunOverSwiftShader } from '../support/node-dawn.mjs';
import { adapterName, dawnDevice, nsPerInvocationStep } from './cost-harness.mjs';

rerunOverSwiftShader();
const argv = process.argv.slice(2);
const STEPS = Number(option(argv, 'iterations', '256'));
const INVOCATIONS = Number(option(argv, 'invocations', '8192'));
const robust = !argv.includes('--no-robustness');
const WORKGROUP = 64;

const { adapter, device, subgroups } = await dawnDevice({ robust });

const BODIES = {
  empty: 'acc += vec4<f32>(f32(i));',
  uniform_f32: 'acc.x += xs[i];',
  uniform_vec4: 'acc += x[i];',
  ...(subgroups ? { broadcast_vec4: 'let s = xs[4u * i + (lid & 3u)]; acc += vec4<f32>(subgroupBroadcast(s, 0u), subgroupBroadcast(s, 1u), subgroupBroadcast(s, 2u), subgroupBroadcast(s, 3u));' } : {}),
  divergent_f32: 'acc.x += bitcast<f32>(w[row + i]);',
  divergent_vec4: 'acc += bitcast<vec4<f32>>(vec4<u32>(w[row + 4u * i], w[row + 4u * i + 1u], w[row + 4u * i + 2u], w[row + 4u * i + 3u]));',
};

function kernel(body) {
  return `${subgroups ? 'enable subgroups;' : ''}
@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> xs: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<vec4<f32>>;
@compute @workgroup_size(${WORKGROUP}) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  var acc = vec4<f32>(0.0);
  let row = g.x * ${4 * STEPS}u;
  for (var i = 0u; i < ${STEPS}u; i++) {
    ${body}
  }
  out[g.x] = acc;
}`;
}

const storage = (size) => device.createBuffer({ size, usage: GPUBufferUsage.STORAGE });
const buffers = [storage(STEPS * 16), storage(STEPS * 16), storage(INVOCATIONS * STEPS * 16), storage(INVOCATIONS * 16)];
const layout = device.createBindGroupLayout({
  entries: buffers.map((_, binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: binding === 3 ? 'storage' : 'read-only-storage' } })),
});
const bindGroup = device.createBindGroup({ layout, entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })) });

const timeKernel = (body) =>
  nsPerInvocationStep(device, layout, bindGroup, kernel(body), { workgroups: INVOCATIONS / WORKGROUP, invocations: INVOCATIONS, steps: STEPS, warmup: 2, runs: 5, onePass: false });

const perStep = {};
for (const [name, body] of Object.entries(BODIES)) perStep[name] = Number((await timeKernel(body)).toFixed(3));
const overEmpty = Object.fromEntries(Object.entries(perStep).filter(([k]) => k !== 'empty').map(([k, v]) => [k, Number((v - perStep.empty).toFixed(3))]));
console.log(JSON.stringify({
  bench: 'load-costs',
  adapter: adapterName(adapter),
  robustness: robust,
  invocations: INVOCATIONS,
  steps: STEPS,
  ns_per_invocation_step: perStep,
  ns_over_empty_loop: overEmpty,
}, null, 2));
device.destroy();
