// The one way kernels are dispatched: `dispatch()` binds buffers (bind groups built from a plain array, cached)
// and splits a 1-D workgroup count over x and y when it is larger than maxComputeWorkgroupsPerDimension;
// `ComputeBatch` records many dispatches (and copies between them) into one command buffer, submitted once.
//
// CONVENTIONS (every kernel and every caller follows these; see also shaders/*.wgsl headers)
// - Bindings: all in @group(0), numbered in the order of the `bindings` array: inputs first, then outputs,
//   then the kernel's uniform `params` struct (last, except that attention's sinks and, where a kernel reads
//   the forward step's position, the step uniform `step_params` follow it: kernel-op.ts). A binding is a GPUBuffer (whole buffer) or
//   { buffer, offset?, size? } (offset a multiple of limits.minStorageBufferOffsetAlignment, 256 on most GPUs).
// - Workgroup ids: kernels are dispatched with a 1-D workgroup count; it may arrive split over x and y, so a
//   kernel computes its linear workgroup id as `wid.x + wid.y * nwg.x` (workgroup_id, num_workgroups) and
//   returns/skips when past its work (x*y may exceed the count asked for by less than one row of x).
// - Weights: a matrix W with N rows (outputs) and K columns (inputs) is row-major with K contiguous (GGUF's
//   ne0 = K, ne1 = N). matvec: y[N] = W·x[K]. matmul: Y[M,N] = X[M,K]·Wᵀ (M tokens, rows of X and Y contiguous).
// - F32 weights: N*K floats, no row padding.
// - F16 weights: the raw IEEE half floats, N*K contiguous, no row padding; read as u32 words, element e is in
//   word e>>1, the low 16 bits for even e, the high 16 bits for odd e (little-endian, as GGUF stores them).
// - Every weight buffer is padded to a multiple of 16 bytes (`paddedWeightBytes`), so kernels can read whole
//   vec4 words; the padding is never read into a result.
// - Activations (x, X, y, Y, norms, logits) are f32, unpadded.
// - Sizes come from the params uniform (u32s), never from arrayLength(), so pooled (larger) buffers work.
import type { GpuContext } from './device.ts';
import { GpuError } from './device.ts';

export type Binding = GPUBuffer | { buffer: GPUBuffer; offset?: number; size?: number };

/** Workgroups: a 1-D count (split over x/y when needed) or an explicit [x, y, z] within the per-dimension limit. */
export type WorkgroupCount = number | readonly [number, number?, number?];

/** Bytes a weight buffer of `byteLength` bytes of data must have: a multiple of 16. */
export function paddedWeightBytes(byteLength: number): number {
  return Math.max(16, Math.ceil(byteLength / 16) * 16);
}

/** Splits a 1-D workgroup count into [x, y] with x, y ≤ maxPerDimension and x*y ≥ count (as little over as possible). */
export function splitWorkgroups(count: number, maxPerDimension: number): [number, number] {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`Workgroup count must be a non-negative integer, got ${count}`);
  if (count <= maxPerDimension) return [count, 1];
  const y = Math.ceil(count / maxPerDimension);
  if (y > maxPerDimension) {
    throw new GpuError('limit-exceeded', `${count} workgroups is more than this adapter can dispatch (${maxPerDimension}² in x*y)`);
  }
  return [Math.ceil(count / y), y];
}

const MAX_BIND_GROUPS_PER_PIPELINE = 256;
const bufferIds = new WeakMap<GPUBuffer, number>();
let nextBufferId = 1;
const bindGroupCache = new WeakMap<GPUComputePipeline, Map<string, GPUBindGroup>>();

function bufferId(buffer: GPUBuffer): number {
  let id = bufferIds.get(buffer);
  if (id === undefined) bufferIds.set(buffer, (id = nextBufferId++));
  return id;
}

/**
 * The bind group for these bindings on this pipeline, cached: the forward pass binds the same buffers every
 * token, so the groups are built once. The cache holds a bounded number of groups per pipeline.
 */
export function bindGroupFor(device: GPUDevice, pipeline: GPUComputePipeline, bindings: readonly Binding[]): GPUBindGroup {
  let key = '';
  for (const b of bindings) {
    if ('getMappedRange' in b) key += `${bufferId(b)};`;
    else key += `${bufferId(b.buffer)}@${b.offset ?? 0}+${b.size ?? -1};`;
  }
  let groups = bindGroupCache.get(pipeline);
  if (!groups) bindGroupCache.set(pipeline, (groups = new Map()));
  let group = groups.get(key);
  if (!group) {
    group = device.createBindGroup({
      label: pipeline.label,
      layout: pipeline.getBindGroupLayout(0),
      entries: bindings.map((b, binding) => ({
        binding,
        resource: 'getMappedRange' in b ? { buffer: b } : { buffer: b.buffer, offset: b.offset ?? 0, size: b.size },
      })),
    });
    if (groups.size >= MAX_BIND_GROUPS_PER_PIPELINE) {
      const oldest = groups.keys().next().value;
      if (oldest !== undefined) groups.delete(oldest);
    }
    groups.set(key, group);
  }
  return group;
}

/** Records one dispatch of `pipeline` into a compute pass. */
export function dispatch(
  gpu: GpuContext,
  pass: GPUComputePassEncoder,
  pipeline: GPUComputePipeline,
  bindings: readonly Binding[],
  workgroups: WorkgroupCount,
): void {
  dispatchGroup(gpu, pass, pipeline, bindGroupFor(gpu.device, pipeline, bindings), workgroups);
}

/** Records one dispatch of `pipeline` with a bind group built beforehand (a forward plan's fixed ops). */
export function dispatchGroup(
  gpu: GpuContext,
  pass: GPUComputePassEncoder,
  pipeline: GPUComputePipeline,
  bindGroup: GPUBindGroup,
  workgroups: WorkgroupCount,
): void {
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  if (typeof workgroups === 'number') {
    if (workgroups === 0) return;
    const [x, y] = splitWorkgroups(workgroups, max);
    pass.dispatchWorkgroups(x, y, 1);
  } else {
    const [x, y = 1, z = 1] = workgroups;
    if (x > max || y > max || z > max) {
      throw new GpuError('limit-exceeded', `Workgroup count [${x}, ${y}, ${z}] exceeds ${max} in a dimension; dispatch a 1-D count instead`);
    }
    if (x * y * z === 0) return;
    pass.dispatchWorkgroups(x, y, z);
  }
}

/**
 * Many dispatches, and the copies between them, recorded into one command encoder and submitted once.
 * Dispatches go into one compute pass until a copy needs the pass closed. With a timer, every pass gets
 * timestamps under the label given to `beginPass` (or the batch label).
 */
export class ComputeBatch {
  readonly encoder: GPUCommandEncoder;
  private pass: GPUComputePassEncoder | null = null;
  private submitted = false;
  /** Dispatches recorded so far (benchmarks report dispatches per decoded token). */
  dispatches = 0;

  constructor(
    private readonly gpu: GpuContext,
    private readonly label = 'batch',
    private readonly timer: PassTimestampSource | null = null,
  ) {
    this.encoder = gpu.device.createCommandEncoder({ label });
  }

  /** Closes the current pass (if any) and opens a new one, timed under `label` when the batch has a timer. */
  beginPass(label = this.label): GPUComputePassEncoder {
    this.endPass();
    const timestampWrites = this.timer?.timestampWrites(label);
    this.pass = this.encoder.beginComputePass(timestampWrites ? { label, timestampWrites } : { label });
    return this.pass;
  }

  dispatch(pipeline: GPUComputePipeline, bindings: readonly Binding[], workgroups: WorkgroupCount): this {
    dispatch(this.gpu, this.pass ?? this.beginPass(), pipeline, bindings, workgroups);
    this.dispatches++;
    return this;
  }

  /** A dispatch with a bind group built beforehand (kernel-op.ts FixedOp). */
  dispatchGroup(pipeline: GPUComputePipeline, bindGroup: GPUBindGroup, workgroups: WorkgroupCount): this {
    dispatchGroup(this.gpu, this.pass ?? this.beginPass(), pipeline, bindGroup, workgroups);
    this.dispatches++;
    return this;
  }

  /** Whether passes are timed (a profiling batch: each op group gets its own pass). */
  get timed(): boolean {
    return this.timer !== null;
  }

  copy(source: GPUBuffer, sourceOffset: number, destination: GPUBuffer, destinationOffset: number, size: number): this {
    this.endPass();
    this.encoder.copyBufferToBuffer(source, sourceOffset, destination, destinationOffset, size);
    return this;
  }

  /** Ends the open pass, if any. */
  endPass(): void {
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
  }

  /** Ends the pass, finishes the encoder (resolving timestamps if timed) and submits. A batch submits once. */
  submit(): void {
    if (this.submitted) throw new Error(`ComputeBatch "${this.label}" was already submitted`);
    this.endPass();
    this.timer?.resolve(this.encoder);
    this.gpu.device.queue.submit([this.encoder.finish()]);
    this.submitted = true;
  }
}

/** What a batch needs from a timer (implemented by `GpuTimer` in timing.ts). */
export interface PassTimestampSource {
  timestampWrites(label: string): GPUComputePassTimestampWrites | undefined;
  resolve(encoder: GPUCommandEncoder): void;
}

/** Bytes a binding makes visible to a kernel. */
function bindingBytes(b: Binding): number {
  if ('getMappedRange' in b) return b.size;
  return b.size ?? b.buffer.size - (b.offset ?? 0);
}

/** Throws a RangeError naming the kernel and binding when a binding is smaller than the kernel will read or write. */
export function requireBytes(kernel: string, name: string, b: Binding, bytes: number): void {
  const have = bindingBytes(b);
  if (have < bytes) throw new RangeError(`${kernel}: ${name} has ${have} bytes, needs ${bytes}`);
}
