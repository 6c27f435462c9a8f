// matmul_tiled: the weight products of prefill (m > 1) on GPUs, Y[M, N] (+)= X[M, K] · Wᵀ (+ bias), through
// workgroup memory: each workgroup takes a tile of TR output rows (W rows) x 64 tokens, and for every 32 elements
// of K it dequantizes the tile's W values once into workgroup memory (the format's block decoder, shaders/decode_*.wgsl:
// group_codes and sub_affine, as the embedding reads a table), stages the 64 tokens' X values beside them, and each
// of its 256 invocations multiplies 4 rows by 4 tokens out of them (16 products for 8 loads). matmul.wgsl's tiles
// (4 rows x 4 tokens an invocation, its weights read per invocation) were made for CPU adapters, where workgroup
// memory and barriers cost; on a GPU each W value fetched serves 64 tokens here against 4 there.
// Bindings, params and the epilogue (HAS_BIAS, ACCUMULATE, GATED + GELU + GELU_F16, NORM_OUT, NORMED) are
// matmul.wgsl's (shaders/matmul_common.wgsl; norm_scale.wgsl before it), with:
//   GATED: a tile holds 32 gate rows and the same 32 up rows (n rows further on); TR = 32, else 64.
//   NORM_OUT: the sums of squares per token over each NORM_ROWS consecutive rows (a multiple of 4 dividing 64), so
//   the count per token is what matmul.wgsl's shape writes for decode (src/gpu/kernels/products.ts normGroups).
// k is a multiple of 32 and of the format's block, or the block a multiple of 32 (src/gpu/kernels/products.ts
// takes this kernel only then). Dispatch: 1-D, ceil(n / TR) * ceil(m / 64) workgroups (may arrive split over x, y).

override NORM_ROWS: u32 = 32;

const TOKENS: u32 = 64u;
const K_STEP: u32 = 32u;
// W tile rows: 64 (GATED: 32 gate + 32 up).
const TILE_ROWS: u32 = 64u;

// [K_STEP][TILE_ROWS] and [K_STEP][TOKENS]: element kk of every row (token) side by side, so that an invocation's 4
// rows (tokens) are 4 neighbouring words and neighbouring invocations read neighbouring vec4s. Row (token) r of
// element kk sits at column r ^ swizzle(kk): the 8 invocations that fill one row's 32 elements write 8 different
// banks instead of one (columns 64 words apart), and a group of 4 columns stays together for the reads.
var<workgroup> w_tile: array<f32, K_STEP * TILE_ROWS>;
var<workgroup> x_tile: array<f32, K_STEP * TOKENS>;

// The column offset of element kk's row: its group of 4 (kk / 4) times 4, a multiple of 4 below 32.
fn swizzle(kk: u32) -> u32 {
  return ((kk / 4u) % 8u) * 4u;
}
// After the loop x_tile carries the epilogue's exchanges (16 KiB in all, WebGPU's least limit): NORM_OUT the squares
// [16 row slots][TOKENS], GATED the up rows' results [8 row slots][16 token slots][16].

// The 4 weights of row `row`, elements k .. k + 3 (k a multiple of 4).
fn weights4(row: u32, k: u32) -> vec4<f32> {
  let blocks = params.k / BLOCK_ELEMENTS;
  let o = (row * blocks + k / BLOCK_ELEMENTS) * BLOCK_WORDS;
  let j = k % BLOCK_ELEMENTS;
  let affine = sub_affine(o, j / SUB_ELEMENTS);
  let codes = group_codes(o, j / 4u);
  if (HAS_OFFSET) {
    return affine.x * codes + affine.y;
  }
  return affine.x * codes;
}

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = params.n;
  let m = params.m;
  let rows = select(TILE_ROWS, TILE_ROWS / 2u, GATED); // output rows a tile
  let row_tiles = (n + rows - 1u) / rows;
  let wg = wid.x + wid.y * nwg.x;
  let t0 = (wg / row_tiles) * TOKENS;
  if (t0 >= m) {
    return;
  }
  let r0 = (wg % row_tiles) * rows;
  // This invocation: tile rows 4·rs .. 4·rs + 3 (GATED: rs < 8 gate rows, else the up rows of slot rs - 8), tokens
  // 4·ts .. 4·ts + 3.
  let rs = lid % 16u;
  let ts = lid / 16u;
  let k4 = params.k / 4u;
  let last_row = n - 1u;
  let last_token = m - 1u;

  var acc0 = vec4<f32>(0.0); // token 4·ts, rows 4·rs .. + 3
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  for (var k0 = 0u; k0 < params.k; k0 += K_STEP) {
    // W: TILE_ROWS rows x 8 groups of 4 = 512 groups, 2 an invocation. Rows past n read the last one (not written).
    for (var i = lid; i < TILE_ROWS * (K_STEP / 4u); i += 256u) {
      let tr = i / (K_STEP / 4u);
      let g = i % (K_STEP / 4u);
      var row = min(r0 + tr, last_row);
      if (GATED) {
        row = min(r0 + tr % 32u, last_row) + select(0u, n, tr >= 32u);
      }
      let v = weights4(row, k0 + 4u * g);
      let at = 4u * g * TILE_ROWS + (tr ^ swizzle(4u * g));
      w_tile[at] = v.x;
      w_tile[at + TILE_ROWS] = v.y;
      w_tile[at + 2u * TILE_ROWS] = v.z;
      w_tile[at + 3u * TILE_ROWS] = v.w;
    }
    // X: TOKENS tokens x 8 vec4s = 512, 2 an invocation. Tokens past m read the last one.
    for (var i = lid; i < TOKENS * (K_STEP / 4u); i += 256u) {
      let tt = i / (K_STEP / 4u);
      let g = i % (K_STEP / 4u);
      let v = x[min(t0 + tt, last_token) * k4 + k0 / 4u + g];
      let at = 4u * g * TOKENS + (tt ^ swizzle(4u * g));
      x_tile[at] = v.x;
      x_tile[at + TOKENS] = v.y;
      x_tile[at + 2u * TOKENS] = v.z;
      x_tile[at + 3u * TOKENS] = v.w;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < K_STEP; kk++) {
      let wb = kk * TILE_ROWS + ((4u * rs) ^ swizzle(kk));
      let xb = kk * TOKENS + ((4u * ts) ^ swizzle(kk));
      let wv = vec4<f32>(w_tile[wb], w_tile[wb + 1u], w_tile[wb + 2u], w_tile[wb + 3u]);
      let xv = vec4<f32>(x_tile[xb], x_tile[xb + 1u], x_tile[xb + 2u], x_tile[xb + 3u]);
      acc0 += wv * xv.x;
      acc1 += wv * xv.y;
      acc2 += wv * xv.z;
      acc3 += wv * xv.w;
    }
    workgroupBarrier();
  }

  let token0 = t0 + 4u * ts;
  if (NORMED) {
    acc0 *= norm_scale(token0);
    acc1 *= norm_scale(token0 + 1u);
    acc2 *= norm_scale(token0 + 2u);
    acc3 *= norm_scale(token0 + 3u);
  }
  if (GATED) {
    // The up slots hand their results to the gate slots of the same rows.
    if (rs >= 8u) {
      let at = ((rs - 8u) * 16u + ts) * 16u;
      for (var i = 0u; i < 4u; i++) {
        x_tile[at + i] = acc0[i];
        x_tile[at + 4u + i] = acc1[i];
        x_tile[at + 8u + i] = acc2[i];
        x_tile[at + 12u + i] = acc3[i];
      }
    }
    workgroupBarrier();
    if (rs < 8u) {
      let at = (rs * 16u + ts) * 16u;
      let up0 = vec4<f32>(x_tile[at], x_tile[at + 1u], x_tile[at + 2u], x_tile[at + 3u]);
      let up1 = vec4<f32>(x_tile[at + 4u], x_tile[at + 5u], x_tile[at + 6u], x_tile[at + 7u]);
      let up2 = vec4<f32>(x_tile[at + 8u], x_tile[at + 9u], x_tile[at + 10u], x_tile[at + 11u]);
      let up3 = vec4<f32>(x_tile[at + 12u], x_tile[at + 13u], x_tile[at + 14u], x_tile[at + 15u]);
      let row = r0 + 4u * rs;
      store(token0, row, swiglu(acc0, up0));
      store(token0 + 1u, row, swiglu(acc1, up1));
      store(token0 + 2u, row, swiglu(acc2, up2));
      store(token0 + 3u, row, swiglu(acc3, up3));
    }
    return;
  }
  let row = r0 + 4u * rs;
  let squares = vec4<f32>(store(token0, row, acc0), store(token0 + 1u, row, acc1), store(token0 + 2u, row, acc2), store(token0 + 3u, row, acc3));
  if (NORM_OUT) {
    // Each NORM_ROWS rows' sums per token: the row slots' squares side by side, then one invocation a (group, token).
    x_tile[rs * TOKENS + 4u * ts] = squares.x;
    x_tile[rs * TOKENS + 4u * ts + 1u] = squares.y;
    x_tile[rs * TOKENS + 4u * ts + 2u] = squares.z;
    x_tile[rs * TOKENS + 4u * ts + 3u] = squares.w;
    workgroupBarrier();
    let slots = NORM_ROWS / 4u;
    let groups = TILE_ROWS / NORM_ROWS;
    for (var i = lid; i < groups * TOKENS; i += 256u) {
      let group = i / TOKENS;
      let t = i % TOKENS;
      var total = 0.0;
      for (var s = 0u; s < slots; s++) {
        total += x_tile[(group * slots + s) * TOKENS + t];
      }
      let global_group = r0 / NORM_ROWS + group;
      if (t0 + t < m && global_group * NORM_ROWS < n) {
        norm_sums[(t0 + t) * params.norm_groups + global_group] = total;
      }
    }
  }
}
