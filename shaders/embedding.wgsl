// embedding: out[t, :] = row tokens[t] of the token-embedding table, dequantized to f32.
// Not a kernel by itself: src/gpu/shaders.ts composes it with the table format's block decoder
// (shaders/decode_<format>.wgsl, the same decoder the products use; src/common/weight-formats.ts lists them),
// which defines BLOCK_WORDS, BLOCK_ELEMENTS, SUB_ELEMENTS, sub_affine and group_codes on the binding `w`.
//
// Bindings (group 0):
//   0 w       array<u32>  rows [row_offset, row_offset + row_count) of the table [vocab, dim] in the format's GPU
//                         layout (a table split by rows binds each range and dispatches once per range).
//   1 tokens  array<u32>  token ids [token_count].
//   2 out     array<f32>  [token_count, dim]; rows whose token is outside this range are not written.
//   3 params  uniform { dim, token_count, row_offset, row_count, scale }: each value is multiplied by scale (Gemma's
//             sqrt(hidden) on the looked-up row; 1 otherwise).
// Overrides: WORKGROUP_SIZE. dim is a multiple of the format's block (any dim for F32/F16; an F16 range must
//   start on a whole u32, i.e. row_offset * dim even).
// Dispatch: 1-D, ceil(token_count * dim / WORKGROUP_SIZE) workgroups (may arrive split over x, y); one
//   invocation per output element.

struct Params {
  dim: u32,
  token_count: u32,
  row_offset: u32,
  row_count: u32,
  scale: f32,
}

@group(0) @binding(0) var<storage, read> w: array<u32>;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;

// Element e of row `row` (counted within this range) of a table with `dim` columns. Rows are whole blocks, so
// the range's blocks are one stream: element i of the range is weight i % BLOCK_ELEMENTS of block i / BLOCK_ELEMENTS
// (which for F32 and F16 also holds when dim is not a multiple of 4).
fn element(row: u32, e: u32, dim: u32) -> f32 {
  let i = row * dim + e;
  let o = (i / BLOCK_ELEMENTS) * BLOCK_WORDS;
  let j = i % BLOCK_ELEMENTS;
  let affine = sub_affine(o, j / SUB_ELEMENTS);
  let code = group_codes(o, j / 4u)[j & 3u];
  if (HAS_OFFSET) {
    return affine.x * code + affine.y;
  }
  return affine.x * code;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let dim = params.dim;
  let index = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (index >= params.token_count * dim) {
    return;
  }
  let t = index / dim;
  let e = index % dim;
  let token = tokens[t];
  if (token < params.row_offset || token - params.row_offset >= params.row_count) {
    return;
  }
  out[index] = element(token - params.row_offset, e, dim) * params.scale;
}
