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
import { create, globals } from 'webgpu';
import { option, rerunOverSwiftShader } from '../support/node-dawn.mjs';

rerunOverSwiftShader();
const argv = process.argv.slice(2);
const STEPS = Number(option(argv, 'iterations', '256'));
const INVOCATIONS = Number(option(argv, 'invocations', '8192'));
const robust = !argv.includes('--no-robustness');
const WORKGROUP = 64;

Object.assign(globalThis, globals);
// Dawn's objects stay referenced from globals: Node's `webgpu` standalone scripts crash at random otherwise.
globalThis.benchGpu = create(robust ? [] : ['enable-dawn-features=disable_robustness']);
globalThis.benchAdapter = await globalThis.benchGpu.requestAdapter();
if (!globalThis.benchAdapter) throw new Error('no WebGPU adapter on Dawn (is Chromium installed?)');
const subgroups = globalThis.benchAdapter.features.has('subgroups');
globalThis.benchDevice = await globalThis.benchAdapter.requestDevice({ requiredFeatures: subgroups ? ['subgroups'] : [] });
const device = globalThis.benchDevice;

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

async function timeKernel(body) {
  const module = device.createShaderModule({ code: kernel(body) });
  const pipeline = device.createComputePipeline({ layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }), compute: { module, entryPoint: 'main' } });
  const run = async (dispatches) => {
    const encoder = device.createCommandEncoder();
    for (let d = 0; d < dispatches; d++) {
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(INVOCATIONS / WORKGROUP);
      pass.end();
    }
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
  };
  await run(2);
  const ms = [];
  for (let r = 0; r < 5; r++) {
    const start = performance.now();
    await run(4);
    ms.push((performance.now() - start) / 4);
  }
  ms.sort((a, b) => a - b);
  return (ms[2] * 1e6) / (INVOCATIONS * STEPS);
}

const perStep = {};
for (const [name, body] of Object.entries(BODIES)) perStep[name] = Number((await timeKernel(body)).toFixed(3));
const overEmpty = Object.fromEntries(Object.entries(perStep).filter(([k]) => k !== 'empty').map(([k, v]) => [k, Number((v - perStep.empty).toFixed(3))]));
console.log(JSON.stringify({
  bench: 'load-costs',
  adapter: globalThis.benchAdapter.info?.description ?? globalThis.benchAdapter.info?.vendor ?? '',
  robustness: robust,
  invocations: INVOCATIONS,
  steps: STEPS,
  ns_per_invocation_step: perStep,
  ns_over_empty_loop: overEmpty,
}, null, 2));
device.destroy();
