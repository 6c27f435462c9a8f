// lavapipe (test/support/lavapipe.ts), optionally with NVIDIA's subgroups of 32 lanes: LAVAPIPE_LANES=32 (or 16) sets
// llvmpipe's native vector width (LP_NATIVE_VECTOR_WIDTH, bits: 32 lanes of 32 bits), read when the driver loads,
// emulated where the CPU's vectors are narrower; its default on this machine is 8 lanes (256 bits). Opt-in: at 1024
// bits Mesa compiled the GPU-shapes test's pipelines for 414 s on a cold cache (8 lanes: ~85 s). Import it first,
// before anything that imports 'webgpu'.
const lanes = Number(process.env.LAVAPIPE_LANES ?? 0);
if (lanes === 16 || lanes === 32) process.env.LP_NATIVE_VECTOR_WIDTH = String(lanes * 32);
export * from './lavapipe.ts';
