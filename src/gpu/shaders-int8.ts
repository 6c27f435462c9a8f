// The int8-activation kernels (issue 19): the activation quantizer (shaders/quantize_activations.wgsl, llama.cpp's
// q8_0 blocks) and the Q8_0 and Q4_0 products whose block bodies multiply int8 by int8 with WGSL's dot4I8Packed
// (shaders/matmul_q8_0_int8.wgsl, matmul_q4_0_int8.wgsl), composed as shaders.ts composes every product: the
// format's one block decoder (the same decode_*.wgsl), the body, the K_SPLIT reduction, the shaders/matmul.wgsl
// skeleton. Their own module only because dot4I8Packed needs the `packed_4x8_integer_dot_product` language feature:
// nothing here is compiled on an adapter without it (forward-kernels.ts asks). To fold into shaders.ts.
import type { KernelSource } from './pipeline-cache.ts';
import matmulCode from '../../shaders/matmul.wgsl?raw';
import matmulSplitWorkgroupCode from '../../shaders/matmul_split_workgroup.wgsl?raw';
import matmulSplitSubgroupCode from '../../shaders/matmul_split_subgroup.wgsl?raw';
import decodeQ8_0Code from '../../shaders/decode_q8_0.wgsl?raw';
import decodeQ4_0Code from '../../shaders/decode_q4_0.wgsl?raw';
import dotI8PackedCode from '../../shaders/dot_i8_packed.wgsl?raw';
import matmulQ8_0Int8Code from '../../shaders/matmul_q8_0_int8.wgsl?raw';
import matmulQ4_0Int8Code from '../../shaders/matmul_q4_0_int8.wgsl?raw';
import quantizeActivationsCode from '../../shaders/quantize_activations.wgsl?raw';

/** The weight formats with an int8-activation product. */
export const INT8_PRODUCT_FORMATS = ['Q8_0', 'Q4_0'] as const;
export type Int8ProductFormat = (typeof INT8_PRODUCT_FORMATS)[number];

export const quantizeActivations: KernelSource = { name: 'quantize_activations', code: quantizeActivationsCode };

const PARTS: Readonly<Record<Int8ProductFormat, readonly [decoder: string, body: string]>> = {
  Q8_0: [decodeQ8_0Code, matmulQ8_0Int8Code],
  Q4_0: [decodeQ4_0Code, matmulQ4_0Int8Code],
};

function int8ProductKernels(split: 'workgroup' | 'subgroup'): Readonly<Record<Int8ProductFormat, KernelSource>> {
  const make = (format: Int8ProductFormat): KernelSource => {
    const [decoder, body] = PARTS[format];
    const name = `matmul_${format.toLowerCase()}_int8`;
    return split === 'workgroup'
      ? { name, code: [decoder, dotI8PackedCode, body, matmulSplitWorkgroupCode, matmulCode].join('\n') }
      : { name: `${name} (subgroups)`, code: ['enable subgroups;', decoder, dotI8PackedCode, body, matmulSplitSubgroupCode, matmulCode].join('\n') };
  };
  return { Q8_0: make('Q8_0'), Q4_0: make('Q4_0') };
}
export const int8ProductKernelsWorkgroupSplit = int8ProductKernels('workgroup');
export const int8ProductKernelsSubgroupSplit = int8ProductKernels('subgroup');
