// The weight formats this runtime loads: one row per format, from which every type list in the code is derived
// (tensor types at load, the GPU layout conversion, the product and embedding kernels, the CPU dequantizer).
// A leaf module: it imports nothing. Adding a format is one row here, one WGSL block decoder
// (shaders/decode_<name>.wgsl) and its reference in src/model/dequantize.ts.
//
// GPU layout (what the WGSL decoders read): a matrix of R rows x K columns is stored row after row; K is a
// multiple of the block size, so a row is whole blocks and a block never straddles two rows. Each block is
// the file's block with its fields moved so that they start on u32 boundaries (`repack`; the lone f16 scale of a
// 32-weight block widened to an f32 word), zero-padded to gpuBlockBytes (a multiple of 4); the words are read
// little-endian (byte 0 of a block is the low byte of its word 0). F16 rows are raw halves (2 per u32, the
// lower-indexed weight in the low half; a buffer is padded to whole words), or F32 where the loader widens them
// (CPU adapters without shader-f16: src/gpu/kernel-shapes.ts widenF16Weights); BF16 is widened to F32 at load.
//
// Every decoder file defines, for the block whose words start at w[o] (w: the kernel's weight binding):
//   const BLOCK_WORDS, BLOCK_ELEMENTS  (u32 words and weights per block);
//   const SUB_ELEMENTS                 weights sharing one affine pair (a multiple of 4 dividing BLOCK_ELEMENTS);
//   const HAS_OFFSET: bool             whether any sub-block's offset can be non-zero;
//   fn sub_affine(o, s) -> vec2<f32>   (scale, offset) of sub-block s: weight = scale * code + offset;
//   fn group_codes(o, g) -> vec4<f32>  the codes of weights 4g .. 4g + 3 of the block;
// and those composed with the 'affine' body also:
//   const UNIT_SCALE, UNIT_BIAS: f32, fn group_units(o, g) -> vec4<f32>   the same codes as the body reads them,
//                                      code = UNIT_SCALE * unit - UNIT_BIAS (most: the codes over 255 from one
//                                      unpack4x8unorm a word, the fast form on CPU adapters; else the codes, 1, 0).
// Every decoder comes after shaders/decode_units.wgsl (dot4; placed_fields, placed_codes, row_nibbles, row_fields,
// row_joined, PLACES: codes left in their places for the tuned bodies). The embedding lookup composes
// the decoder alone; the products compose it with a block body: 'plain' (F32/F16: shaders/matmul_plain_block.wgsl, 4
// weights a block), 'affine' (shaders/matmul_affine_block.wgsl: per sub-block Σ code·x and Σ x, scaled once:
// MXFP4), or a tuned body (shaders/matmul_<name>.wgsl, built on the decoder's helpers, codes left in their
// places: Q8_0, Q4_0/Q4_1 (matmul_q4, the decoders' code_affine), Q5_0/Q5_1 (matmul_q5, code_affine), Q2_K/Q3_K
// (matmul_q2_q3_k, the decoders' K2_* and k2_*), Q4_K, Q5_K, Q6_K, IQ4_NL/IQ4_XS (matmul_iq4, the decoders'
// IQ4_QS_WORD)).

/**
 * How a file block's fields move into the GPU block: bytes [from, from + length) go to `to`, or, with 'f16 to f32',
 * the f16 at `from` (length 2) is written as the f32 of the same value at `to` (4 bytes). A 32-weight block's scale
 * is widened so: the products read it once per block and row, and on CPU adapters a word's bitcast costs nothing
 * where unpack2x16float costs several SIMD ops (bench/README.md, "Shifts"). With 'qh by byte', the u32 of fifth
 * bits at `from` (length 4; bit j: weight j's) is written with its bits transposed (bit 4g + i to bit 8i + g): byte i
 * holds the fifth bits of weights i, 4 + i, .., 28 + i, each in the byte of the qs word that holds its nibble, so a
 * multiply moves it next to the nibble (shaders/matmul_q5.wgsl; Q5_K's file layout is already so).
 */
export type BlockRepack = readonly (readonly [from: number, length: number, to: number, convert?: 'f16 to f32' | 'qh by byte'])[];

/** The 'qh by byte' transposition of a Q5_0/Q5_1 block's fifth bits (bit 4g + i to bit 8i + g), and its inverse. */
export function qhByByte(qh: number): number {
  // Byte k of qh holds weights 8k + t (t = 0..7), whose bits go to 8(t % 4) + 2k + t / 4: the byte's table entry
  // (its bits at 8(t % 4) + t / 4) moved up 2k. Four lookups a block: the loader runs this on every Q5_0/Q5_1 block.
  const table = (QH_BYTE_TABLE ??= Uint32Array.from({ length: 256 }, (_, byte) => {
    let out = 0;
    for (let t = 0; t < 8; t++) if ((byte >> t) & 1) out |= 1 << (8 * (t & 3) + (t >> 2));
    return out;
  }));
  return (table[qh & 0xff] | (table[(qh >>> 8) & 0xff] << 2) | (table[(qh >>> 16) & 0xff] << 4) | (table[qh >>> 24] << 6)) >>> 0;
}
let QH_BYTE_TABLE: Uint32Array | undefined;

export function qhFromByByte(bits: number): number {
  let out = 0;
  for (let j = 0; j < 32; j++) if ((bits >>> (8 * (j & 3) + (j >> 2))) & 1) out |= 1 << j;
  return out >>> 0;
}

export interface WeightFormat {
  /** The format's name as GGUF/ggml spells it (upper case). */
  readonly name: string;
  /** ggml's type id (GGUF tensor info type). */
  readonly ggmlType: number;
  /** Weights per block (1 for plain types). */
  readonly blockElements: number;
  /** Bytes per block in the file. */
  readonly fileBlockBytes: number;
  /** Bytes per block in the GPU buffer (a multiple of 4 for block types; F16 is 2, padded per buffer). */
  readonly gpuBlockBytes: number;
  /** The format the GPU buffer holds (BF16 becomes F32). */
  readonly gpuFormat: string;
  /** File block to GPU block (block types): empty when the bytes stay as they are (then only padded). */
  readonly repack: BlockRepack;
  /** Byte offsets of the f16 fields of a file block (tests that make random blocks keep these finite). */
  readonly halfFields: readonly number[];
  /** Byte offsets of E8M0 exponent fields (MXFP4's scale; tests that make random blocks keep these moderate). */
  readonly e8m0Fields?: readonly number[];
  /** The WGSL block decoder, shaders/<decoder>.wgsl (null: the GPU holds gpuFormat's). */
  readonly decoder: string | null;
  /** Helper files (shaders/<helper>.wgsl) composed before the decoder: fields that formats share. */
  readonly helpers?: readonly string[];
  /** The product's block body: 'plain', 'affine', or the name of a tuned body file (shaders/<product>.wgsl). */
  readonly product: string | null;
  /** How the GPU block is packed into u32 words. */
  readonly gpuLayout: string;
}

const KQ_DM = 'word 0 = f16 d | f16 dmin << 16';

/** Every supported format. The order is the order of type lists everywhere (plain types first). */
export const WEIGHT_FORMATS = [
  { name: 'F32', ggmlType: 0, blockElements: 1, fileBlockBytes: 4, gpuBlockBytes: 4, gpuFormat: 'F32', repack: [], halfFields: [], decoder: 'decode_f32', product: 'plain', gpuLayout: 'one weight per word (its f32 bits)' },
  { name: 'F16', ggmlType: 1, blockElements: 1, fileBlockBytes: 2, gpuBlockBytes: 2, gpuFormat: 'F16', repack: [], halfFields: [0], decoder: 'decode_f16', product: 'plain', gpuLayout: 'two halves per word, the lower-indexed weight low' },
  { name: 'BF16', ggmlType: 30, blockElements: 1, fileBlockBytes: 2, gpuBlockBytes: 4, gpuFormat: 'F32', repack: [], halfFields: [], decoder: null, product: null, gpuLayout: 'widened to F32 at load' },
  {
    name: 'Q8_0', ggmlType: 8, blockElements: 32, fileBlockBytes: 34, gpuBlockBytes: 36, gpuFormat: 'Q8_0', repack: [[0, 2, 0, 'f16 to f32'], [2, 32, 4]], halfFields: [0],
    decoder: 'decode_q8_0', product: 'matmul_q8_0', gpuLayout: '9 words: f32 d (word 0, the file\'s f16 widened), int8 qs[32] (words 1..8); w = d*q',
  },
  {
    name: 'Q4_0', ggmlType: 2, blockElements: 32, fileBlockBytes: 18, gpuBlockBytes: 20, gpuFormat: 'Q4_0', repack: [[0, 2, 0, 'f16 to f32'], [2, 16, 4]], halfFields: [0],
    decoder: 'decode_q4_0', product: 'matmul_q4', gpuLayout: '5 words: f32 d (word 0, the file\'s f16 widened), qs[16] (words 1..4); w[j] = d*(lo(qs[j]) - 8), w[j+16] = d*(hi(qs[j]) - 8)',
  },
  {
    name: 'Q4_1', ggmlType: 3, blockElements: 32, fileBlockBytes: 20, gpuBlockBytes: 20, gpuFormat: 'Q4_1', repack: [], halfFields: [0, 2],
    decoder: 'decode_q4_1', product: 'matmul_q4', gpuLayout: '5 words: f16 d | f16 m << 16 (word 0), qs[16] (words 1..4); w[j] = d*lo(qs[j]) + m, w[j+16] = d*hi(qs[j]) + m',
  },
  {
    name: 'Q5_0', ggmlType: 6, blockElements: 32, fileBlockBytes: 22, gpuBlockBytes: 24, gpuFormat: 'Q5_0', repack: [[0, 2, 0, 'f16 to f32'], [2, 4, 4, 'qh by byte'], [6, 16, 8]], halfFields: [0],
    decoder: 'decode_q5_0', product: 'matmul_q5', gpuLayout: '6 words: f32 d (word 0, the file\'s f16 widened), qh by byte (word 1: bit 8i + g = 5th bit of weight 4g + i), qs[16] (words 2..5); w = d*(q - 16)',
  },
  {
    name: 'Q5_1', ggmlType: 7, blockElements: 32, fileBlockBytes: 24, gpuBlockBytes: 24, gpuFormat: 'Q5_1', repack: [[0, 4, 0], [4, 4, 4, 'qh by byte'], [8, 16, 8]], halfFields: [0, 2],
    decoder: 'decode_q5_1', product: 'matmul_q5', gpuLayout: '6 words: f16 d | f16 m << 16 (word 0), qh by byte (word 1, as Q5_0\'s), qs[16] (words 2..5); w = d*q + m',
  },
  {
    name: 'Q2_K', ggmlType: 10, blockElements: 256, fileBlockBytes: 84, gpuBlockBytes: 84, gpuFormat: 'Q2_K', repack: [], halfFields: [80, 82],
    decoder: 'decode_q2_k', product: 'matmul_q2_q3_k',
    gpuLayout: '21 words: scales[16] (words 0..3: low nibble scale, high nibble min of sub-block s = weight/16), qs[64] (words 4..19: 2 bits a weight), word 20 = f16 d | f16 dmin << 16',
  },
  {
    name: 'Q3_K', ggmlType: 11, blockElements: 256, fileBlockBytes: 110, gpuBlockBytes: 112, gpuFormat: 'Q3_K', repack: [[0, 110, 0]], halfFields: [108],
    decoder: 'decode_q3_k', product: 'matmul_q2_q3_k',
    gpuLayout: '28 words: hmask[32] (words 0..7), qs[64] (words 8..23), scales[12] (words 24..26: sixteen 6-bit scales, bias 32), f16 d (word 27 low half)',
  },
  {
    name: 'Q4_K', ggmlType: 12, blockElements: 256, fileBlockBytes: 144, gpuBlockBytes: 144, gpuFormat: 'Q4_K', repack: [], halfFields: [0, 2],
    decoder: 'decode_q4_k', helpers: ['decode_kquant_scales'], product: 'matmul_q4_k', gpuLayout: `36 words: ${KQ_DM}, scales[12] (words 1..3: 8 six-bit scale/min pairs), qs[128] (words 4..35)`,
  },
  {
    name: 'Q5_K', ggmlType: 13, blockElements: 256, fileBlockBytes: 176, gpuBlockBytes: 176, gpuFormat: 'Q5_K', repack: [], halfFields: [0, 2],
    decoder: 'decode_q5_k', helpers: ['decode_kquant_scales'], product: 'matmul_q5_k', gpuLayout: `44 words: ${KQ_DM}, scales[12] (words 1..3), qh[32] (words 4..11), qs[128] (words 12..43)`,
  },
  {
    name: 'Q6_K', ggmlType: 14, blockElements: 256, fileBlockBytes: 210, gpuBlockBytes: 212, gpuFormat: 'Q6_K', repack: [[0, 210, 0]], halfFields: [208],
    decoder: 'decode_q6_k', product: 'matmul_q6_k', gpuLayout: '53 words: ql[128] (words 0..31), qh[64] (words 32..47), int8 scales[16] (words 48..51), f16 d (word 52 low half)',
  },
  {
    name: 'IQ4_NL', ggmlType: 20, blockElements: 32, fileBlockBytes: 18, gpuBlockBytes: 20, gpuFormat: 'IQ4_NL', repack: [[0, 2, 0, 'f16 to f32'], [2, 16, 4]], halfFields: [0],
    decoder: 'decode_iq4_nl', helpers: ['decode_iq4_values'], product: 'matmul_iq4', gpuLayout: '5 words: f32 d (word 0, the file\'s f16 widened), qs[16] (words 1..4); w = d*IQ4_VALUES[nibble], nibbles as Q4_0',
  },
  {
    name: 'IQ4_XS', ggmlType: 23, blockElements: 256, fileBlockBytes: 136, gpuBlockBytes: 136, gpuFormat: 'IQ4_XS', repack: [], halfFields: [0],
    decoder: 'decode_iq4_xs', helpers: ['decode_iq4_values'], product: 'matmul_iq4',
    gpuLayout: '34 words: f16 d | scales_h << 16 (word 0), scales_l[4] (word 1), qs[128] (words 2..33); sub-block s of 32: 6-bit scale, bias 32; nibbles as IQ4_NL per 16 bytes',
  },
  {
    name: 'MXFP4', ggmlType: 39, blockElements: 32, fileBlockBytes: 17, gpuBlockBytes: 20, gpuFormat: 'MXFP4', repack: [[0, 1, 0], [1, 16, 4]], halfFields: [], e8m0Fields: [0],
    decoder: 'decode_mxfp4', product: 'affine',
    gpuLayout: '5 words: u8 e (E8M0 scale, word 0 low byte), qs[16] (words 1..4); w = 2^(e - 128) * MXFP4_VALUES[nibble], nibbles as Q4_0',
  },
] as const satisfies readonly WeightFormat[];

/** A supported format's name. */
export type WeightFormatName = (typeof WEIGHT_FORMATS)[number]['name'];

/** Formats a GPU buffer holds (every format but those widened at load). */
export type GpuWeightFormatName = Extract<(typeof WEIGHT_FORMATS)[number], { decoder: string }>['name'];

/** The row of each format. */
export const WEIGHT_FORMAT: Readonly<Record<WeightFormatName, WeightFormat & { name: WeightFormatName; gpuFormat: GpuWeightFormatName }>> =
  Object.fromEntries(WEIGHT_FORMATS.map((f) => [f.name, f])) as never;

/** Every supported format's name, in table order. */
export const WEIGHT_FORMAT_NAMES: readonly WeightFormatName[] = WEIGHT_FORMATS.map((f) => f.name);

/** The formats GPU buffers hold (each has a WGSL decoder), in table order. */
export const GPU_WEIGHT_FORMAT_NAMES: readonly GpuWeightFormatName[] = WEIGHT_FORMATS.filter((f) => f.decoder !== null).map((f) => f.name as GpuWeightFormatName);

/** The codebook of IQ4_NL and IQ4_XS: a 4-bit code's value (times the block scale). */
export const IQ4_VALUES: readonly number[] = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113];

/** MXFP4's 4-bit codes (E2M1: sign, 2 exponent bits, 1 mantissa bit) times 2, as ggml's kvalues_mxfp4; the block scale is halved to match. */
export const MXFP4_VALUES: readonly number[] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/** ggml's names of every type id it has had, for messages about types this runtime does not load. */
export const GGML_TYPE_NAMES: Readonly<Record<number, string>> = {
  0: 'F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 6: 'Q5_0', 7: 'Q5_1', 8: 'Q8_0', 9: 'Q8_1', 10: 'Q2_K', 11: 'Q3_K', 12: 'Q4_K',
  13: 'Q5_K', 14: 'Q6_K', 15: 'Q8_K', 16: 'IQ2_XXS', 17: 'IQ2_XS', 18: 'IQ3_XXS', 19: 'IQ1_S', 20: 'IQ4_NL', 21: 'IQ3_S',
  22: 'IQ2_S', 23: 'IQ4_XS', 24: 'I8', 25: 'I16', 26: 'I32', 27: 'I64', 28: 'F64', 29: 'IQ1_M', 30: 'BF16', 31: 'Q4_0_4_4',
  32: 'Q4_0_4_8', 33: 'Q4_0_8_8', 34: 'TQ1_0', 35: 'TQ2_0', 36: 'IQ4_NL_4_4', 37: 'IQ4_NL_4_8', 38: 'IQ4_NL_8_8', 39: 'MXFP4',
};

/** The supported format of a ggml type id, or undefined. */
export function weightFormatOfGgmlType(ggmlType: number): (typeof WEIGHT_FORMAT)[WeightFormatName] | undefined {
  const row = WEIGHT_FORMATS.find((f) => f.ggmlType === ggmlType);
  return row ? WEIGHT_FORMAT[row.name] : undefined;
}
