// The native `shader-f16` variant of the F16 weight products: the kernel shaders.ts composes for F16 (its decoder
// shaders/decode_f16.wgsl, the plain block body, the K_SPLIT reduction, the matmul skeleton) with `enable f16;` put
// first and the decoder's packed `halves` (unpack2x16float) swapped for shaders/decode_f16_native.wgsl's (a bitcast
// to vec2<f16>). One decoder per format: the block layout, the block loop and the f32 accumulation stay the F16
// kernel's own; only how a word becomes two weights differs. ForwardKernels picks it where the device has
// `shader-f16` (GpuFeatures.f16), the packed kernel otherwise.
import type { KernelSource } from './pipeline-cache.ts';
import type { ProductKernelSet } from './shaders.ts';
import decodeF16NativeCode from '../../shaders/decode_f16_native.wgsl?raw';

/** shaders/decode_f16.wgsl's packed `halves`, exactly as written there. */
const PACKED_HALVES = 'fn halves(word: u32) -> vec2<f32> {\n  return unpack2x16float(word);\n}';
const NATIVE_HALVES = /fn halves\(word: u32\) -> vec2<f32> \{[\s\S]*?\n\}/.exec(decodeF16NativeCode)?.[0];

/** The native form of a kernel that composes shaders/decode_f16.wgsl (throws if that file's `halves` changed). */
export function nativeF16Kernel(kernel: KernelSource): KernelSource {
  const parts = kernel.code.split(PACKED_HALVES);
  if (parts.length !== 2 || !NATIVE_HALVES) {
    throw new Error(`${kernel.name}: shaders/decode_f16.wgsl's packed halves() not found once (${parts.length - 1} times); keep it as src/gpu/shaders-native-f16.ts expects`);
  }
  return { name: `${kernel.name} (shader-f16)`, code: `enable f16;\n${parts.join(NATIVE_HALVES)}` };
}

const nativeSets = new WeakMap<ProductKernelSet, ProductKernelSet>();

/** `set` with its F16 product in the native form (made once per set). */
export function withNativeF16Products(set: ProductKernelSet): ProductKernelSet {
  let native = nativeSets.get(set);
  if (!native) {
    native = { ...set, F16: nativeF16Kernel(set.F16) };
    nativeSets.set(set, native);
  }
  return native;
}
