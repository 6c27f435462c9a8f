// Measures loading a generated model from a local file into GPU buffers on Dawn (the `webgpu` package):
// load time and peak JS memory (heap and ArrayBuffers) while loading. Prints JSON.
//   LD_LIBRARY_PATH=/usr/lib/chromium VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json \
//     npx tsx tools/make-test-model/measure-load.ts <model.gguf>
// Make a ~100 MB model first, e.g.: npx tsx tools/make-test-model/cli.ts --arch llama --type F32
//   --hidden 1024 --intermediate 3072 --heads 16 --kv-heads 4 --layers 2 --out /tmp/model-100mb

import { openAsBlob, statSync } from 'node:fs';
import { create, globals } from 'webgpu';
import { BlobSource } from '../../src/model/byte-source.ts';
import { readGguf } from '../../src/model/gguf.ts';
import { ggufTensorSources, loadTensorsToGpu } from '../../src/model/weight-loader.ts';

const path = process.argv[2];
if (!path) {
  console.error('usage: measure-load.ts <model.gguf>');
  process.exit(2);
}
Object.assign(globalThis, globals);
const gpu = create([]);
const adapter = await gpu.requestAdapter();
if (!adapter) throw new Error('No WebGPU adapter (set VK_ICD_FILENAMES to a Vulkan driver)');
const device = await adapter.requestDevice({
  requiredLimits: { maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize, maxBufferSize: adapter.limits.maxBufferSize },
});

const baseline = process.memoryUsage();
let peakHeap = baseline.heapUsed;
let peakArrayBuffers = baseline.arrayBuffers;
let peakRss = baseline.rss;
const sample = () => {
  const m = process.memoryUsage();
  peakHeap = Math.max(peakHeap, m.heapUsed);
  peakArrayBuffers = Math.max(peakArrayBuffers, m.arrayBuffers);
  peakRss = Math.max(peakRss, m.rss);
};
const forceGc = (globalThis as { gc?: () => void }).gc;
const timer = setInterval(sample, 5);
const started = performance.now();
const gguf = await readGguf(new BlobSource(await openAsBlob(path), path));
const loaded = await loadTensorsToGpu(device, ggufTensorSources(gguf), { onProgress: () => { forceGc?.(); sample(); } });
const seconds = (performance.now() - started) / 1000;
clearInterval(timer);
sample();
const mib = (n: number) => Math.round((n / 2 ** 20) * 10) / 10;
const fileBytes = statSync(path).size;
console.log(
  JSON.stringify(
    {
      file: path,
      fileMiB: mib(fileBytes),
      tensors: loaded.tensors.size,
      gpuMiB: mib(loaded.gpuBytes),
      loadSeconds: Math.round(seconds * 1000) / 1000,
      MiBPerSecond: Math.round(fileBytes / 2 ** 20 / seconds),
      baselineHeapMiB: mib(baseline.heapUsed),
      peakHeapMiB: mib(peakHeap),
      peakHeapAboveBaselineMiB: mib(peakHeap - baseline.heapUsed),
      peakArrayBuffersMiB: mib(peakArrayBuffers),
      peakRssAboveBaselineMiB: mib(peakRss - baseline.rss),
      adapter: adapter.info?.description ?? adapter.info?.device ?? 'unknown',
    },
    null,
    2,
  ),
);
loaded.destroy();
device.destroy();
void gpu;
process.exit(0);
