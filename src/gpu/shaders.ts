// Every WGSL kernel's source, imported with Vite's `?raw`: one named export per kernel, so that other modules
// import shader code from this one place. Add new kernels to this list (name = file name without .wgsl).
import type { KernelSource } from './pipeline-cache.ts';
import matvecF32Code from '../../shaders/matvec_f32.wgsl?raw';
import matvecF16Code from '../../shaders/matvec_f16.wgsl?raw';
import matvecF16NativeCode from '../../shaders/matvec_f16_native.wgsl?raw';
import matmulF32Code from '../../shaders/matmul_f32.wgsl?raw';
import matmulF16Code from '../../shaders/matmul_f16.wgsl?raw';
import rmsnormCode from '../../shaders/rmsnorm.wgsl?raw';
import softmaxCode from '../../shaders/softmax.wgsl?raw';
import readRooflineCode from '../../shaders/read_roofline.wgsl?raw';

export const matvecF32: KernelSource = { name: 'matvec_f32', code: matvecF32Code };
export const matvecF16: KernelSource = { name: 'matvec_f16', code: matvecF16Code };
export const matvecF16Native: KernelSource = { name: 'matvec_f16_native', code: matvecF16NativeCode };
export const matmulF32: KernelSource = { name: 'matmul_f32', code: matmulF32Code };
export const matmulF16: KernelSource = { name: 'matmul_f16', code: matmulF16Code };
export const rmsnorm: KernelSource = { name: 'rmsnorm', code: rmsnormCode };
export const softmax: KernelSource = { name: 'softmax', code: softmaxCode };
export const readRoofline: KernelSource = { name: 'read_roofline', code: readRooflineCode };
