// What load-costs.mjs and op-costs.mjs share: a Dawn device in Node (the `webgpu` package over the Vulkan driver
// node-dawn.mjs's rerunOverSwiftShader chose) and the timing of one kernel's loop per invocation and step.
import { create, globals } from 'webgpu';

/**
 * The adapter and a device of Node's Dawn, with Dawn's `disable_robustness` where `robust` is false and the
 * `subgroups` feature where the adapter has it. Dawn's objects stay referenced from globals: Node's `webgpu`
 * standalone scripts crash at random otherwise.
 */
export async function dawnDevice({ robust }) {
  Object.assign(globalThis, globals);
  globalThis.benchGpu = create(robust ? [] : ['enable-dawn-features=disable_robustness']);
  globalThis.benchAdapter = await globalThis.benchGpu.requestAdapter();
  if (!globalThis.benchAdapter) throw new Error('no WebGPU adapter on Dawn (is Chromium installed?)');
  const subgroups = globalThis.benchAdapter.features.has('subgroups');
  globalThis.benchDevice = await globalThis.benchAdapter.requestDevice({ requiredFeatures: subgroups ? ['subgroups'] : [] });
  return { adapter: globalThis.benchAdapter, device: globalThis.benchDevice, subgroups };
}

/** The adapter's name as the JSON reports it. */
export function adapterName(adapter) {
  return adapter.info?.description ?? adapter.info?.vendor ?? '';
}

/**
 * ns per invocation and loop step of `code` (entry point main): `warmup` dispatches, then the median over `runs` of
 * the wall time of 4 dispatches (one compute pass each, or all in one where `onePass`), divided by
 * invocations x steps.
 */
export async function nsPerInvocationStep(device, layout, bindGroup, code, { workgroups, invocations, steps, warmup, runs, onePass }) {
  const module = device.createShaderModule({ code });
  const pipeline = device.createComputePipeline({ layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }), compute: { module, entryPoint: 'main' } });
  const run = async (dispatches) => {
    const encoder = device.createCommandEncoder();
    let pass = null;
    for (let d = 0; d < dispatches; d++) {
      if (!pass) {
        pass = encoder.beginComputePass();
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bindGroup);
      }
      pass.dispatchWorkgroups(workgroups);
      if (!onePass) {
        pass.end();
        pass = null;
      }
    }
    pass?.end();
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
  };
  await run(warmup);
  const ms = [];
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    await run(4);
    ms.push((performance.now() - start) / 4);
  }
  ms.sort((a, b) => a - b);
  return (ms[Math.floor(runs / 2)] * 1e6) / (invocations * steps);
}
