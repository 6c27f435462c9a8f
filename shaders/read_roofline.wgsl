// read_roofline: reads every 16-byte word of a buffer exactly once and writes one u32 per invocation (a XOR of
// what it read, so the reads cannot be optimised away): the memory-read roofline that the matvec benchmarks are
// measured against. Invocation g of T reads CHUNK words: g*CHUNK .. g*CHUNK+CHUNK-1 (contiguous per invocation,
// like a matvec row on CPU adapters) or, with INTERLEAVED, g, g+T, g+2T, ... (neighbouring lanes read
// neighbouring words, the GPU pattern). Workgroups: ceil(ceil(words / CHUNK) / WORKGROUP_SIZE), 1-D, maybe split.

struct Params {
  words: u32, // 16-byte words in `data`
  invocations: u32, // T: ceil(words / CHUNK)
}

@group(0) @binding(0) var<storage, read> data: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> sink: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

override WORKGROUP_SIZE: u32 = 64;
override CHUNK: u32 = 256;
override INTERLEAVED: bool = false;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let g = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE + lid;
  if (g >= params.invocations) {
    return;
  }
  var acc = vec4<u32>(0u);
  for (var j = 0u; j < CHUNK; j++) {
    let index = select(g * CHUNK + j, j * params.invocations + g, INTERLEAVED);
    if (index < params.words) {
      acc ^= data[index];
    }
  }
  sink[g] = acc.x ^ acc.y ^ acc.z ^ acc.w;
}
