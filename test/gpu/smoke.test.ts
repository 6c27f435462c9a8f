import { expect, test } from 'vitest';
test('adapter', async () => {
  const a = await navigator.gpu.requestAdapter();
  expect(a).toBeTruthy();
  const d = await a!.requestDevice();
  const m = d.createShaderModule({ code: '@group(0) @binding(0) var<storage, read_write> o: array<u32>; @compute @workgroup_size(1) fn main() { o[0] = 42u; }' });
  const p = d.createComputePipeline({ layout: 'auto', compute: { module: m, entryPoint: 'main' } });
  const b = d.createBuffer({ size: 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const r = d.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const e = d.createCommandEncoder(); const pass = e.beginComputePass(); pass.setPipeline(p);
  pass.setBindGroup(0, d.createBindGroup({ layout: p.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: b } }] }));
  pass.dispatchWorkgroups(1); pass.end(); e.copyBufferToBuffer(b, 0, r, 0, 4); d.queue.submit([e.finish()]);
  await r.mapAsync(GPUMapMode.READ); expect(new Uint32Array(r.getMappedRange())[0]).toBe(42);
});
