// Every WGSL kernel's source, imported with Vite's `?raw`: one named export per kernel, so that other modules
// import shader code from this one place. Add new kernels to this list (name = file name without .wgsl).
import type { KernelSource } from './pipeline-cache.ts';
import { GPU_WEIGHT_FORMAT_NAMES, WEIGHT_FORMAT, type GpuWeightFormatName } from '../common/weight-formats.ts';
import rmsnormCode from '../../shaders/rmsnorm.wgsl?raw';
import readRooflineCode from '../../shaders/read_roofline.wgsl?raw';
import matmulSkeletonCode from '../../shaders/matmul.wgsl?raw';
import normScaleCode from '../../shaders/norm_scale.wgsl?raw';
import matmulCommonCode from '../../shaders/matmul_common.wgsl?raw';
import matmulTiledCode from '../../shaders/matmul_tiled.wgsl?raw';
import matmulSplitWorkgroupCode from '../../shaders/matmul_split_workgroup.wgsl?raw';
import matmulSplitSubgroupCode from '../../shaders/matmul_split_subgroup.wgsl?raw';
import matmulActivationsCode from '../../shaders/matmul_activations.wgsl?raw';
import matmulPlainBlockCode from '../../shaders/matmul_plain_block.wgsl?raw';
import matmulAffineBlockCode from '../../shaders/matmul_affine_block.wgsl?raw';
import matmulQ8_0Code from '../../shaders/matmul_q8_0.wgsl?raw';
import matmulQ4Code from '../../shaders/matmul_q4.wgsl?raw';
import matmulQ5Code from '../../shaders/matmul_q5.wgsl?raw';
import matmulQ4KCode from '../../shaders/matmul_q4_k.wgsl?raw';
import matmulQ5KCode from '../../shaders/matmul_q5_k.wgsl?raw';
import matmulQ2Q3KCode from '../../shaders/matmul_q2_q3_k.wgsl?raw';
import matmulIq4Code from '../../shaders/matmul_iq4.wgsl?raw';
import matmulQ6KCode from '../../shaders/matmul_q6_k.wgsl?raw';
import decodeF32Code from '../../shaders/decode_f32.wgsl?raw';
import decodeF16Code from '../../shaders/decode_f16.wgsl?raw';
import decodeQ8_0Code from '../../shaders/decode_q8_0.wgsl?raw';
import decodeQ4_0Code from '../../shaders/decode_q4_0.wgsl?raw';
import decodeQ4_1Code from '../../shaders/decode_q4_1.wgsl?raw';
import decodeQ5_0Code from '../../shaders/decode_q5_0.wgsl?raw';
import decodeQ5_1Code from '../../shaders/decode_q5_1.wgsl?raw';
import decodeQ2KCode from '../../shaders/decode_q2_k.wgsl?raw';
import decodeQ3KCode from '../../shaders/decode_q3_k.wgsl?raw';
import decodeQ4KCode from '../../shaders/decode_q4_k.wgsl?raw';
import decodeQ5KCode from '../../shaders/decode_q5_k.wgsl?raw';
import decodeQ6KCode from '../../shaders/decode_q6_k.wgsl?raw';
import decodeIq4NlCode from '../../shaders/decode_iq4_nl.wgsl?raw';
import decodeIq4XsCode from '../../shaders/decode_iq4_xs.wgsl?raw';
import decodeMxfp4Code from '../../shaders/decode_mxfp4.wgsl?raw';
import decodeKquantScalesCode from '../../shaders/decode_kquant_scales.wgsl?raw';
import decodeIq4ValuesCode from '../../shaders/decode_iq4_values.wgsl?raw';
import decodeUnitsCode from '../../shaders/decode_units.wgsl?raw';
import embeddingCode from '../../shaders/embedding.wgsl?raw';
import stepParamsCode from '../../shaders/step_params.wgsl?raw';
import ropeCode from '../../shaders/rope.wgsl?raw';
import ropeRotationCode from '../../shaders/rope_rotation.wgsl?raw';
import attentionCommonCode from '../../shaders/attention_common.wgsl?raw';
import attentionCode from '../../shaders/attention.wgsl?raw';
import matmulExpertsCode from '../../shaders/matmul_experts.wgsl?raw';
import moeRouteCode from '../../shaders/moe_route.wgsl?raw';
import attentionCombineCode from '../../shaders/attention_combine.wgsl?raw';
import attentionDecodeCode from '../../shaders/attention_decode.wgsl?raw';
import attentionRopeCode from '../../shaders/attention_rope.wgsl?raw';
import attentionPrefillCode from '../../shaders/attention_prefill.wgsl?raw';
import swigluCode from '../../shaders/swiglu.wgsl?raw';
import argmaxCode from '../../shaders/argmax.wgsl?raw';
import logitsProcessCode from '../../shaders/logits_process.wgsl?raw';
import logitsBiasCode from '../../shaders/logits_bias.wgsl?raw';
import sampleCommonCode from '../../shaders/sample_common.wgsl?raw';
import samplePartialsCode from '../../shaders/sample_partials.wgsl?raw';
import sampleReduceCode from '../../shaders/sample_reduce.wgsl?raw';
import sampleLevelsCode from '../../shaders/sample_levels.wgsl?raw';
import sampleSelectCode from '../../shaders/sample_select.wgsl?raw';
import sampleCompactCode from '../../shaders/sample_compact.wgsl?raw';
import sampleTokenCode from '../../shaders/sample_token.wgsl?raw';
import sampleDrawCode from '../../shaders/sample_draw.wgsl?raw';
import decodeF16NativeCode from '../../shaders/decode_f16_native.wgsl?raw';

// The product skeleton with what it shares with the tiled one (bindings, params, epilogue) and the fused norm's
// scale it reads (NORMED).
const matmulCode = composeWgsl(normScaleCode, matmulCommonCode, matmulSkeletonCode);

export const rmsnorm: KernelSource = { name: 'rmsnorm', code: rmsnormCode };
export const readRoofline: KernelSource = { name: 'read_roofline', code: readRooflineCode };
// The weight product kernels share one skeleton (shaders/matmul.wgsl: bindings, tiling, reduction, output) and
// the embedding lookup one kernel (shaders/embedding.wgsl); both compose the table format's block decoder
// (src/common/weight-formats.ts: its `decoder` and `helpers` name the files), and the products a block body (the
// row's `product`: matmul_plain_block, matmul_affine_block or a tuned matmul_<format>.wgsl). WGSL has no #include,
// so each kernel is composed here and nowhere else; the rest of the code sees one ordinary kernel source per
// weight format (and K_SPLIT reduction).
/** Every shader part the table of weight formats names, by file name (without .wgsl). */
const WEIGHT_FORMAT_PARTS: Readonly<Record<string, string>> = {
  decode_f32: decodeF32Code,
  decode_f16: decodeF16Code,
  decode_q8_0: decodeQ8_0Code,
  decode_q4_0: decodeQ4_0Code,
  decode_q4_1: decodeQ4_1Code,
  decode_q5_0: decodeQ5_0Code,
  decode_q5_1: decodeQ5_1Code,
  decode_q2_k: decodeQ2KCode,
  decode_q3_k: decodeQ3KCode,
  decode_q4_k: decodeQ4KCode,
  decode_q5_k: decodeQ5KCode,
  decode_q6_k: decodeQ6KCode,
  decode_iq4_nl: decodeIq4NlCode,
  decode_iq4_xs: decodeIq4XsCode,
  decode_mxfp4: decodeMxfp4Code,
  decode_kquant_scales: decodeKquantScalesCode,
  decode_iq4_values: decodeIq4ValuesCode,
  plain: matmulPlainBlockCode,
  affine: matmulAffineBlockCode,
  matmul_q8_0: matmulQ8_0Code,
  matmul_q4: matmulQ4Code,
  matmul_q5: matmulQ5Code,
  matmul_q4_k: matmulQ4KCode,
  matmul_q5_k: matmulQ5KCode,
  matmul_q2_q3_k: matmulQ2Q3KCode,
  matmul_iq4: matmulIq4Code,
  matmul_q6_k: matmulQ6KCode,
};

function part(name: string): string {
  const code = WEIGHT_FORMAT_PARTS[name];
  if (code === undefined) throw new Error(`src/common/weight-formats.ts names shader part ${name}, which shaders.ts does not import`);
  return code;
}

/**
 * A GPU format's decoder with its helpers (module-scope declarations for any kernel that binds `w`), after the units
 * helpers every decoder and product body may use (shaders/decode_units.wgsl).
 */
function decoderCode(format: GpuWeightFormatName): string {
  const row = WEIGHT_FORMAT[format];
  return composeWgsl(decodeUnitsCode, ...(row.helpers ?? []).map(part), part(row.decoder!));
}

/** The product kernel of each GPU weight format, with its K_SPLIT reduction through workgroup memory (any adapter) or subgroup shuffles. */
export type ProductKernelSet = Readonly<Record<GpuWeightFormatName, KernelSource>>;

function productKernels(split: 'workgroup' | 'subgroup'): ProductKernelSet {
  const make = (format: GpuWeightFormatName): KernelSource => {
    const name = `matmul_${format.toLowerCase()}`;
    const typeCode = composeWgsl(decoderCode(format), part(WEIGHT_FORMAT[format].product!));
    return split === 'workgroup'
      ? { name, code: composeWgsl(typeCode, matmulActivationsCode, matmulSplitWorkgroupCode, matmulCode) }
      : { name: `${name} (subgroups)`, code: composeWgsl('enable subgroups;', typeCode, matmulActivationsCode, matmulSplitSubgroupCode, matmulCode) };
  };
  return Object.fromEntries(GPU_WEIGHT_FORMAT_NAMES.map((f) => [f, make(f)])) as Record<GpuWeightFormatName, KernelSource>;
}
export const productKernelsWorkgroupSplit = productKernels('workgroup');
export const productKernelsSubgroupSplit = productKernels('subgroup');

/**
 * The tiled prefill product of each GPU weight format (shaders/matmul_tiled.wgsl: workgroup-memory tiles of W,
 * dequantized by the format's decoder, and of X; GPUs' prefill where the shape asks for it).
 */
export const productKernelsTiled: ProductKernelSet = Object.fromEntries(
  GPU_WEIGHT_FORMAT_NAMES.map((f) => [f, { name: `matmul_tiled_${f.toLowerCase()}`, code: composeWgsl(decoderCode(f), normScaleCode, matmulCommonCode, matmulTiledCode) }]),
) as Record<GpuWeightFormatName, KernelSource>;

/** The mixture-of-experts products of each GPU weight format (shaders/matmul_experts.wgsl as the skeleton). */
function expertKernels(split: 'workgroup' | 'subgroup'): ProductKernelSet {
  const make = (format: GpuWeightFormatName): KernelSource => {
    const name = `matmul_experts_${format.toLowerCase()}`;
    const typeCode = composeWgsl(decoderCode(format), part(WEIGHT_FORMAT[format].product!));
    return split === 'workgroup'
      ? { name, code: composeWgsl(typeCode, matmulActivationsCode, matmulSplitWorkgroupCode, matmulExpertsCode) }
      : { name: `${name} (subgroups)`, code: composeWgsl('enable subgroups;', typeCode, matmulActivationsCode, matmulSplitSubgroupCode, matmulExpertsCode) };
  };
  return Object.fromEntries(GPU_WEIGHT_FORMAT_NAMES.map((f) => [f, make(f)])) as Record<GpuWeightFormatName, KernelSource>;
}
export const expertKernelsWorkgroupSplit = expertKernels('workgroup');
export const expertKernelsSubgroupSplit = expertKernels('subgroup');
export const moeRoute: KernelSource = { name: 'moe_route', code: moeRouteCode };
/** The embedding lookup of each GPU weight format. */
export const embeddingKernels: Readonly<Record<GpuWeightFormatName, KernelSource>> = Object.fromEntries(
  GPU_WEIGHT_FORMAT_NAMES.map((f) => [f, { name: `embedding_${f.toLowerCase()}`, code: composeWgsl(decoderCode(f), embeddingCode) }]),
) as Record<GpuWeightFormatName, KernelSource>;
// The kernels that read the forward step's uniform follow its struct (shaders/step_params.wgsl); attention also
// follows the bindings and constants of the attention kernels (attention_common.wgsl).
export const rope: KernelSource = { name: 'rope', code: composeWgsl(stepParamsCode, ropeRotationCode, ropeCode) };
export const attention: KernelSource = { name: 'attention', code: composeWgsl(stepParamsCode, attentionCommonCode, ropeRotationCode, attentionRopeCode, attentionCode) };
export const attentionDecode: KernelSource = { name: 'attention_decode', code: composeWgsl(stepParamsCode, attentionCommonCode, ropeRotationCode, attentionRopeCode, attentionDecodeCode) };
export const attentionCombine: KernelSource = { name: 'attention_combine', code: composeWgsl(stepParamsCode, attentionCombineCode) };
export const attentionPrefill: KernelSource = { name: 'attention_prefill', code: composeWgsl(stepParamsCode, attentionCommonCode, attentionPrefillCode) };
export const swiglu: KernelSource = { name: 'swiglu', code: swigluCode };
export const argmax: KernelSource = { name: 'argmax', code: argmaxCode };
export const logitsProcess: KernelSource = { name: 'logits_process', code: logitsProcessCode };
export const logitsBias: KernelSource = { name: 'logits_bias', code: logitsBiasCode };
// The sampler's seven kernels each follow the part they share (shaders/sample_common.wgsl: params, keys, levels).
export const samplePartials: KernelSource = { name: 'sample_partials', code: `${sampleCommonCode}\n${samplePartialsCode}` };
export const sampleReduce: KernelSource = { name: 'sample_reduce', code: `${sampleCommonCode}\n${sampleReduceCode}` };
export const sampleLevels: KernelSource = { name: 'sample_levels', code: `${sampleCommonCode}\n${sampleLevelsCode}` };
export const sampleSelect: KernelSource = { name: 'sample_select', code: `${sampleCommonCode}\n${sampleSelectCode}` };
export const sampleCompact: KernelSource = { name: 'sample_compact', code: `${sampleCommonCode}\n${sampleCompactCode}` };
export const sampleToken: KernelSource = { name: 'sample_token', code: `${sampleCommonCode}\n${sampleTokenCode}` };
export const sampleDraw: KernelSource = { name: 'sample_draw', code: `${sampleCommonCode}\n${sampleDrawCode}` };

/**
 * One WGSL module from parts, in order: WGSL module-scope declarations may use each other in any order, so
 * concatenation is enough (an `enable` directive goes first).
 */
function composeWgsl(...parts: string[]): string {
  return parts.join('\n');
}

// The native `shader-f16` variant of the F16 weight products: the kernel composed above for F16 (its decoder
// shaders/decode_f16.wgsl, the plain block body, the K_SPLIT reduction, the matmul skeleton) with `enable f16;` put
// first and the decoder's packed `halves` (unpack2x16float) swapped for shaders/decode_f16_native.wgsl's (a bitcast
// to vec2<f16>). One decoder per format: the block layout, the block loop and the f32 accumulation stay the F16
// kernel's own; only how a word becomes two weights differs. ForwardKernels picks it where the device has
// `shader-f16` (GpuFeatures.f16), the packed kernel otherwise.
/** shaders/decode_f16.wgsl's packed `halves`, exactly as written there. */
const PACKED_HALVES = 'fn halves(word: u32) -> vec2<f32> {\n  return unpack2x16float(word);\n}';
const NATIVE_HALVES = /fn halves\(word: u32\) -> vec2<f32> \{[\s\S]*?\n\}/.exec(decodeF16NativeCode)?.[0];

/** The native form of a kernel that composes shaders/decode_f16.wgsl (throws if that file's `halves` changed). */
export function nativeF16Kernel(kernel: KernelSource): KernelSource {
  const parts = kernel.code.split(PACKED_HALVES);
  if (parts.length !== 2 || !NATIVE_HALVES) {
    throw new Error(`${kernel.name}: shaders/decode_f16.wgsl's packed halves() not found once (${parts.length - 1} times); keep it as src/gpu/shaders.ts nativeF16Kernel expects`);
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
