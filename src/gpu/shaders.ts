// Every WGSL kernel's source, imported with Vite's `?raw`: one named export per kernel, so that other modules
// import shader code from this one place. Add new kernels to this list (name = file name without .wgsl).
import type { KernelSource } from './pipeline-cache.ts';
import matvecF32Code from '../../shaders/matvec_f32.wgsl?raw';
import matvecF16Code from '../../shaders/matvec_f16.wgsl?raw';
import matvecF16NativeCode from '../../shaders/matvec_f16_native.wgsl?raw';

export const matvecF32: KernelSource = { name: 'matvec_f32', code: matvecF32Code };
export const matvecF16: KernelSource = { name: 'matvec_f16', code: matvecF16Code };
export const matvecF16Native: KernelSource = { name: 'matvec_f16_native', code: matvecF16NativeCode };
