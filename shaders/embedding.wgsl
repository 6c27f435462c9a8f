// embedding: out[t, :] = row tokens[t] of the token-embedding table, dequantized to f32.
// One file for every table type (override TABLE_TYPE): a lookup reads one row per token, so the kernel is
// bandwidth-trivial and one contract for all types beats six near-identical files; the per-element decoders
// below follow the weight layouts of src/model/tensor-types.ts.
//
// Bindings (group 0):
//   0 table   array<u32>  rows [row_offset, row_offset + row_count) of the table [vocab, dim] in the GPU layout of
//                         TABLE_TYPE (a table split by rows binds each range and dispatches once per range; an F16
//                         range must start on a whole u32, i.e. row_offset * dim even).
//   1 tokens  array<u32>  token ids [token_count].
//   2 out     array<f32>  [token_count, dim]; rows whose token is outside this range are not written.
//   3 params  uniform { dim, token_count, row_offset, row_count }.
// Overrides: WORKGROUP_SIZE; TABLE_TYPE: 0 F32, 1 F16, 2 Q8_0, 3 Q4_0, 4 Q4_K, 5 Q6_K
//   (dim a multiple of 32 for Q8_0/Q4_0, of 256 for Q4_K/Q6_K).
// Dispatch: 1-D, ceil(token_count * dim / WORKGROUP_SIZE) workgroups (may arrive split over x, y); one
//   invocation per output element.

struct Params {
  dim: u32,
  token_count: u32,
  row_offset: u32,
  row_count: u32,
}

@group(0) @binding(0) var<storage, read> table: array<u32>;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;
override TABLE_TYPE: u32 = 0;

const TYPE_F32: u32 = 0u;
const TYPE_F16: u32 = 1u;
const TYPE_Q8_0: u32 = 2u;
const TYPE_Q4_0: u32 = 3u;
const TYPE_Q4_K: u32 = 4u;
const TYPE_Q6_K: u32 = 5u;

// Byte i of the table, counted from word `base`.
fn byte_at(base: u32, i: u32) -> u32 {
  return (table[base + (i >> 2u)] >> ((i & 3u) * 8u)) & 255u;
}

fn signed_byte(byte: u32) -> f32 {
  return f32(bitcast<i32>(byte << 24u) >> 24u);
}

// Element e of row `row` (counted within this range) of a table with `dim` columns.
fn element(row: u32, e: u32, dim: u32) -> f32 {
  switch (TABLE_TYPE) {
    case TYPE_F16: {
      let i = row * dim + e;
      return unpack2x16float(table[i >> 1u])[i & 1u];
    }
    case TYPE_Q8_0: {
      let base = (row * (dim / 32u) + e / 32u) * 9u;
      let d = unpack2x16float(table[base]).x;
      return d * signed_byte(byte_at(base + 1u, e % 32u));
    }
    case TYPE_Q4_0: {
      let base = (row * (dim / 32u) + e / 32u) * 5u;
      let d = unpack2x16float(table[base]).x;
      let j = e % 32u;
      let byte = byte_at(base + 1u, j % 16u);
      let q = select(byte & 15u, byte >> 4u, j >= 16u);
      return d * (f32(q) - 8.0);
    }
    case TYPE_Q4_K: {
      let base = (row * (dim / 256u) + e / 256u) * 36u;
      let dm = unpack2x16float(table[base]);
      let j = e % 256u;
      let chunk = j / 64u;
      let high = (j % 64u) >= 32u;
      let sub = 2u * chunk + select(0u, 1u, high);
      let byte = byte_at(base + 4u, 32u * chunk + j % 32u);
      let q = select(byte & 15u, byte >> 4u, high);
      // 6-bit scale and min of sub-block `sub` from the 12 packed bytes at words 1..3.
      var scale: u32;
      var minimum: u32;
      if (sub < 4u) {
        scale = byte_at(base + 1u, sub) & 63u;
        minimum = byte_at(base + 1u, sub + 4u) & 63u;
      } else {
        scale = (byte_at(base + 1u, sub + 4u) & 15u) | ((byte_at(base + 1u, sub - 4u) >> 6u) << 4u);
        minimum = (byte_at(base + 1u, sub + 4u) >> 4u) | ((byte_at(base + 1u, sub) >> 6u) << 4u);
      }
      return dm.x * f32(scale) * f32(q) - dm.y * f32(minimum);
    }
    case TYPE_Q6_K: {
      let base = (row * (dim / 256u) + e / 256u) * 53u;
      let d = unpack2x16float(table[base + 52u]).x;
      let j = e % 256u;
      let h = j / 128u;
      let g = (j % 128u) / 32u;
      let l = j % 32u;
      let low_byte = byte_at(base, 64u * h + 32u * (g & 1u) + l);
      let low = select(low_byte & 15u, low_byte >> 4u, g >= 2u);
      let high = (byte_at(base + 32u, 32u * h + l) >> (2u * g)) & 3u;
      let scale = signed_byte(byte_at(base + 48u, 8u * h + 2u * g + l / 16u));
      return d * scale * (f32(low | (high << 4u)) - 32.0);
    }
    default: {
      return bitcast<f32>(table[row * dim + e]);
    }
  }
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
  out[index] = element(token - params.row_offset, e, dim);
}
