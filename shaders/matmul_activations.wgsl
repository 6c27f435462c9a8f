// matmul_activations: how a product body reads its activations in fours (see shaders/matmul.wgsl, "Activations").
// Composed (src/gpu/shaders.ts) into the products and the expert products with the K_SPLIT reduction part, which
// defines SHARED_X and the quad's exchange: x_mine (the lane's own of the 4 vec4s where SHARED_X, else unused) and
// x_lane0 .. x_lane3 (the value a lane of the quad holds, handed to all four; identities never reached where nothing
// is shared).

// The vec4s x[index], x[index + step], x[index + gap], x[index + gap + step]; mine: this lane's of them (SHARED_X).
struct XQuad {
  index: u32,
  step: u32,
  gap: u32,
  mine: vec4<f32>,
}

// The invocation's place in its quad (consecutive invocations), set by shaders/matmul.wgsl's entry point (the expert
// products never share, so theirs leaves it unset).
var<private> x_lane: u32;

// The 4 vec4s x[i], x[i + step], x[i + gap], x[i + gap + step]: e.g. two words' low and high codes' activations
// (step 1), or four fields of one word (Q6_K: step 8, gap 16).
fn x_group(i: u32, step: u32, gap: u32) -> XQuad {
  return XQuad(i, step, gap, x_mine(i + select(0u, step, (x_lane & 1u) == 1u) + select(0u, gap, x_lane >= 2u)));
}

// The 4 vec4s x[i .. i + 3].
fn x_quad(i: u32) -> XQuad {
  return x_group(i, 1u, 2u);
}

fn x_q0(q: XQuad) -> vec4<f32> {
  if (SHARED_X) {
    return x_lane0(q.mine);
  }
  return x[q.index];
}

fn x_q1(q: XQuad) -> vec4<f32> {
  if (SHARED_X) {
    return x_lane1(q.mine);
  }
  return x[q.index + q.step];
}

fn x_q2(q: XQuad) -> vec4<f32> {
  if (SHARED_X) {
    return x_lane2(q.mine);
  }
  return x[q.index + q.gap];
}

fn x_q3(q: XQuad) -> vec4<f32> {
  if (SHARED_X) {
    return x_lane3(q.mine);
  }
  return x[q.index + q.gap + q.step];
}
