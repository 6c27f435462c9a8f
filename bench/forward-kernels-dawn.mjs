// Times the forward-pass kernels of shaders/ (quantized matmuls, attention, RoPE, SwiGLU, argmax) on Node's Dawn
// (the `webgpu` package) at the shapes of a ~20M-parameter decoder, decode (m = 1) and prefill (m = 64), and
// prints JSON: milliseconds per dispatch (the best of several trials; the weights are zeros, which does not change
// the work), weight GB/s and GFLOP/s. On this machine's SwiftShader:
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json \
//     node bench/forward-kernels-dawn.mjs
// Workgroup shapes are those src/gpu/forward-kernels.ts picks for a CPU adapter (set GPU_SHAPES=1 for the GPU ones).
import { readFileSync } from 'node:fs';
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);
const gpu = create([]); // keep a strong reference while the device lives
const adapter = await gpu.requestAdapter();
if (!adapter) throw new Error('No WebGPU adapter (set VK_ICD_FILENAMES, see the header)');
const device = await adapter.requestDevice({
  requiredLimits: { maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize, maxBufferSize: adapter.limits.maxBufferSize },
});

const gpuShapes = process.env.GPU_SHAPES === '1';
const QUANT = gpuShapes ? { WORKGROUP_SIZE: 64, K_SPLIT: 8, TILE_M: 4 } : { WORKGROUP_SIZE: 16, K_SPLIT: 1, TILE_M: 4 };
const ATTENTION_WG = gpuShapes ? 32 : 4;
const ELEMENTWISE_WG = gpuShapes ? 256 : 64;
const STORAGE = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

const model = { hidden: 512, ffn: 1536, heads: 8, kvHeads: 2, headDim: 64, vocab: 32000 };
const prefillTokens = 64;

function storage(bytes) {
  return device.createBuffer({ size: Math.max(16, Math.ceil(bytes / 16) * 16), usage: STORAGE });
}

function uniform(words) {
  const buffer = device.createBuffer({ size: Math.max(16, Math.ceil((words.length * 4) / 16) * 16), usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const view = new DataView(new ArrayBuffer(buffer.size));
  words.forEach((w, i) => (typeof w === 'number' ? view.setUint32(i * 4, w, true) : view.setFloat32(i * 4, w.f32, true)));
  device.queue.writeBuffer(buffer, 0, view.buffer);
  return buffer;
}

// Each format's product parts (src/common/weight-formats.ts: helpers, decoder, block body), in order.
const PRODUCT_PARTS = {
  q8_0: ['decode_q8_0', 'matmul_q8_0'], q4_0: ['decode_q4_0', 'matmul_q4_0'],
  q4_k: ['decode_kquant_scales', 'decode_q4_k', 'matmul_q4_k'], q6_k: ['decode_q6_k', 'matmul_q6_k'],
  q4_1: ['decode_q4_1', 'matmul_affine_block'], q5_0: ['decode_q5_0', 'matmul_affine_block'], q5_1: ['decode_q5_1', 'matmul_affine_block'],
  q2_k: ['decode_q2_k', 'matmul_affine_block'], q3_k: ['decode_q3_k', 'matmul_affine_block'],
  q5_k: ['decode_kquant_scales', 'decode_q5_k', 'matmul_affine_block'], iq4_nl: ['decode_iq4_values', 'decode_iq4_nl', 'matmul_affine_block'],
  iq4_xs: ['decode_iq4_values', 'decode_iq4_xs', 'matmul_affine_block'],
};

const source = (file) => readFileSync(new URL(`../shaders/${file}`, import.meta.url), 'utf8');

async function time(file, constants, bindings, workgroups, trials = 5) {
  // The products are composed as src/gpu/shaders.ts does from src/common/weight-formats.ts: the format's helpers and
  // decoder, its block body, the K_SPLIT reduction, the skeleton.
  const product = PRODUCT_PARTS[file.replace(/^matmul_|\.wgsl$/g, '')];
  const code = product ? [...product.map((p) => source(`${p}.wgsl`)), source('matmul_split_workgroup.wgsl'), source('matmul.wgsl')].join('\n') : source(file);
  const module = device.createShaderModule({ code });
  const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main', constants } });
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: bindings.map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const run = async () => {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(workgroups);
    pass.end();
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
  };
  await run();
  let best = Infinity;
  for (let i = 0; i < trials; i++) {
    const start = performance.now();
    await run();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

const results = [];
const BLOCKS = {
  q8_0: [32, 36], q4_0: [32, 20], q4_k: [256, 144], q6_k: [256, 212], q4_1: [32, 20], q5_0: [32, 24], q5_1: [32, 24],
  q2_k: [256, 84], q3_k: [256, 112], q5_k: [256, 176], iq4_nl: [32, 20], iq4_xs: [256, 136],
};
for (const [type, [blockElements, blockBytes]] of Object.entries(BLOCKS)) {
  // The MLP's up projection: n = ffn rows, k = hidden.
  const [n, k] = [model.ffn, model.hidden];
  const weightBytes = ((n * k) / blockElements) * blockBytes;
  for (const m of [1, prefillTokens]) {
    const tileM = m === 1 ? 1 : QUANT.TILE_M;
    const buffers = [storage(weightBytes), storage(m * k * 4), storage(16), storage(m * n * 4), uniform([n, k, m, 0, n])];
    const rowsPerGroup = (4 * QUANT.WORKGROUP_SIZE) / QUANT.K_SPLIT;
    const ms = await time(`matmul_${type}.wgsl`, { ...QUANT, TILE_M: tileM }, buffers, Math.ceil(n / rowsPerGroup) * Math.ceil(m / tileM), m === 1 ? 5 : 2);
    results.push({ kernel: `matmul_${type}`, m, n, k, ms: +ms.toFixed(3), weightGBps: +(weightBytes / ms / 1e6).toFixed(3), gflops: +((2 * m * n * k) / ms / 1e6).toFixed(3) });
    for (const b of buffers) b.destroy();
  }
}

const { heads, kvHeads, headDim } = model;
for (const [m, positions] of [[1, 64], [1, 512], [prefillTokens, prefillTokens]]) {
  const maxSeq = Math.max(512, positions);
  const buffers = [storage(m * heads * headDim * 4), storage(kvHeads * maxSeq * headDim * 4), storage(kvHeads * maxSeq * headDim * 4), storage(m * heads * headDim * 4)];
  const params = uniform([m, heads, kvHeads, headDim, positions - m, maxSeq, { f32: 0.125 }, 1, 0]);
  const ms = await time('attention.wgsl', { WORKGROUP_SIZE: ATTENTION_WG, HEAD_DIM: headDim }, [...buffers, params], Math.ceil((m * heads) / ATTENTION_WG), 3);
  results.push({ kernel: 'attention', m, positions, heads, kvHeads, headDim, ms: +ms.toFixed(3) });
  for (const b of [...buffers, params]) b.destroy();
}

{
  const m = prefillTokens;
  const buffers = [storage(headDim * 2), storage(m * kvHeads * headDim * 4), storage(m * heads * headDim * 4), storage(m * kvHeads * headDim * 4), storage(kvHeads * 512 * headDim * 4), storage(kvHeads * 512 * headDim * 4)];
  const params = uniform([m, heads, kvHeads, headDim, 0, 512]);
  const pairs = (m * (heads + 2 * kvHeads) * headDim) / 2;
  const ms = await time('rope.wgsl', { WORKGROUP_SIZE: ELEMENTWISE_WG, NEOX: 1, WRITE_KV_CACHE: 1 }, [...buffers, params], Math.ceil(pairs / ELEMENTWISE_WG));
  results.push({ kernel: 'rope', m, ms: +ms.toFixed(3) });
  for (const b of [...buffers, params]) b.destroy();
}

{
  const m = prefillTokens;
  const buffers = [storage(m * model.ffn * 4), storage(m * model.ffn * 4), storage(m * model.ffn * 4)];
  const params = uniform([model.ffn, m, model.ffn, model.ffn, 0]);
  const ms = await time('swiglu.wgsl', { WORKGROUP_SIZE: ELEMENTWISE_WG }, [...buffers, params], Math.ceil((m * model.ffn) / ELEMENTWISE_WG));
  results.push({ kernel: 'swiglu', m, width: model.ffn, ms: +ms.toFixed(3) });
  for (const b of [...buffers, params]) b.destroy();
}

{
  const [wg, items] = gpuShapes ? [256, 8] : [8, 128];
  const groups = Math.ceil(model.vocab / (wg * items));
  const buffers = [storage(model.vocab * 4), storage(groups * 8)];
  const params = uniform([model.vocab]);
  const ms = await time('argmax.wgsl', { WORKGROUP_SIZE: wg, ITEMS_PER_INVOCATION: items, STAGE: 0 }, [...buffers, params], groups);
  results.push({ kernel: 'argmax (stage 0)', count: model.vocab, ms: +ms.toFixed(3) });
  for (const b of [...buffers, params]) b.destroy();
}

const info = adapter.info ?? {};
console.log(JSON.stringify({ adapter: `${info.vendor ?? ''} ${info.architecture ?? ''} ${info.description ?? ''}`.trim(), gpuShapes, model, results }, null, 1));
device.destroy();
