// Every WGSL kernel's source, imported with Vite's `?raw`: one named export per kernel, so that other modules
// import shader code from this one place. Add new kernels to this list (name = file name without .wgsl).
import type { KernelSource } from './pipeline-cache.ts';
import matmulF32Code from '../../shaders/matmul_f32.wgsl?raw';
import matmulF16Code from '../../shaders/matmul_f16.wgsl?raw';
import rmsnormCode from '../../shaders/rmsnorm.wgsl?raw';
import softmaxCode from '../../shaders/softmax.wgsl?raw';
import readRooflineCode from '../../shaders/read_roofline.wgsl?raw';
import matmulCode from '../../shaders/matmul.wgsl?raw';
import matmulSplitWorkgroupCode from '../../shaders/matmul_split_workgroup.wgsl?raw';
import matmulSplitSubgroupCode from '../../shaders/matmul_split_subgroup.wgsl?raw';
import matmulPlainBlockCode from '../../shaders/matmul_plain_block.wgsl?raw';
import matmulQ8_0Code from '../../shaders/matmul_q8_0.wgsl?raw';
import matmulQ4_0Code from '../../shaders/matmul_q4_0.wgsl?raw';
import matmulQ4KCode from '../../shaders/matmul_q4_k.wgsl?raw';
import matmulQ6KCode from '../../shaders/matmul_q6_k.wgsl?raw';
import embeddingCode from '../../shaders/embedding.wgsl?raw';
import ropeCode from '../../shaders/rope.wgsl?raw';
import attentionCode from '../../shaders/attention.wgsl?raw';
import attentionCombineCode from '../../shaders/attention_combine.wgsl?raw';
import swigluCode from '../../shaders/swiglu.wgsl?raw';
import argmaxCode from '../../shaders/argmax.wgsl?raw';
import logitsProcessCode from '../../shaders/logits_process.wgsl?raw';
import logitsBiasCode from '../../shaders/logits_bias.wgsl?raw';
import sampleTokenCode from '../../shaders/sample_token.wgsl?raw';

export const rmsnorm: KernelSource = { name: 'rmsnorm', code: rmsnormCode };
export const softmax: KernelSource = { name: 'softmax', code: softmaxCode };
export const readRoofline: KernelSource = { name: 'read_roofline', code: readRooflineCode };
// The weight product kernels share one skeleton (shaders/matmul.wgsl: bindings, tiling, reduction, output) and
// differ only in block decoding (shaders/matmul_<type>.wgsl defines BLOCK_WORDS, BLOCK_ELEMENTS and
// accumulate_block, which the skeleton calls; F32 and F16 share one accumulate_block, shaders/matmul_plain_block.wgsl,
// and define only how 4 weights are read). WGSL has no #include, so each kernel is composed here and
// nowhere else; the rest of the code sees one ordinary kernel source per weight type and K_SPLIT reduction.
/** The product kernel of each weight type, with its K_SPLIT reduction through workgroup memory (any adapter) or subgroup shuffles. */
export type ProductKernelSet = Readonly<Record<'F32' | 'F16' | 'Q8_0' | 'Q4_0' | 'Q4_K' | 'Q6_K', KernelSource>>;

function productKernels(split: 'workgroup' | 'subgroup'): ProductKernelSet {
  const make = (name: string, typeCode: string): KernelSource =>
    split === 'workgroup'
      ? { name, code: composeWgsl(typeCode, matmulSplitWorkgroupCode, matmulCode) }
      : { name: `${name} (subgroups)`, code: composeWgsl('enable subgroups;', typeCode, matmulSplitSubgroupCode, matmulCode) };
  return {
    F32: make('matmul_f32', composeWgsl(matmulF32Code, matmulPlainBlockCode)),
    F16: make('matmul_f16', composeWgsl(matmulF16Code, matmulPlainBlockCode)),
    Q8_0: make('matmul_q8_0', matmulQ8_0Code),
    Q4_0: make('matmul_q4_0', matmulQ4_0Code),
    Q4_K: make('matmul_q4_k', matmulQ4KCode),
    Q6_K: make('matmul_q6_k', matmulQ6KCode),
  };
}
export const productKernelsWorkgroupSplit = productKernels('workgroup');
export const productKernelsSubgroupSplit = productKernels('subgroup');
export const embedding: KernelSource = { name: 'embedding', code: embeddingCode };
export const rope: KernelSource = { name: 'rope', code: ropeCode };
export const attention: KernelSource = { name: 'attention', code: attentionCode };
export const attentionCombine: KernelSource = { name: 'attention_combine', code: attentionCombineCode };
export const swiglu: KernelSource = { name: 'swiglu', code: swigluCode };
export const argmax: KernelSource = { name: 'argmax', code: argmaxCode };
export const logitsProcess: KernelSource = { name: 'logits_process', code: logitsProcessCode };
export const logitsBias: KernelSource = { name: 'logits_bias', code: logitsBiasCode };
export const sampleToken: KernelSource = { name: 'sample_token', code: sampleTokenCode };

/**
 * One WGSL module from parts, in order: WGSL module-scope declarations may use each other in any order, so
 * concatenation is enough (an `enable` directive goes first).
 */
function composeWgsl(...parts: string[]): string {
  return parts.join('\n');
}
